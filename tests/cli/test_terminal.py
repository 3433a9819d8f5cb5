"""What a person at a terminal sees, from a real process on a pseudo-terminal: the findings,
then the summary under them; a progress bar over files on stderr during a long run, erased
before the findings, and never in a pipe or a CI log."""

from __future__ import annotations

import os
import pty
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pmanifest.lint.engine import ALWAYS

# the runs select the rule they are about, so a new rule changes nothing here
SELECT = ["--select", "PM201"]
RULES = len({"PM201", *ALWAYS})
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: j{i}}}
spec:
  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions: [{{type: DisruptionTarget}}]
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: {grace}
      containers: [{{name: main, image: busybox}}]
"""
FINDING = (
    "PM201[grace-period-over-limit] terminationGracePeriodSeconds is 900, above the 300 s cap of "
    "preemptible nodes (together profile): the node is removed 300 s after the notice whatever "
    "the pod is doing; set it to 300 or less and finish the checkpoint inside that window")
BAR = r"\r\x1b\[K\[[#.]{30}\] \d+/(\d+) files"
ERASE = "\r\x1b[K"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

# no profile given, no provider label in the input: the run says which profile it assumed
ASSUMED = "profile together, the default: no provider label found"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "TERM")}
    return {**env, "TERM": "xterm", **extra}


TIMEOUT = 120  # seconds a run may take before the harness kills it and fails


def on_terminal(args: list[str], cwd: Path, both: bool, **env: str) -> tuple[int, str, str]:
    """Run ``pmanifest ARGS`` with stderr (and stdout too when ``both``) on a pseudo-terminal;
    returns (exit code, what the terminal showed, stdout when it was a pipe). The terminal and
    the pipe are read together, so neither fills up while the other is read (a pipe holds 64
    KiB: a process writing more would wait forever), within TIMEOUT."""
    main_fd, side_fd = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pmanifest", *args], cwd=cwd, env=_env(**env),
        stdin=subprocess.DEVNULL, stdout=side_fd if both else subprocess.PIPE, stderr=side_fd)
    os.close(side_fd)
    try:
        out = _read_together(main_fd, proc.stdout.fileno() if proc.stdout else None)
        code = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        os.close(main_fd)
    return code, out[main_fd].decode(), out.get(-1, b"").decode()


def _read_together(terminal: int, pipe: int | None) -> dict[int, bytes]:
    """Everything the terminal and the pipe carry, read as it comes until both are closed
    (the pipe's bytes under -1); AssertionError after TIMEOUT seconds."""
    deadline = time.monotonic() + TIMEOUT
    chunks: dict[int, list[bytes]] = {terminal: []}
    with selectors.DefaultSelector() as selector:
        selector.register(terminal, selectors.EVENT_READ, terminal)
        if pipe is not None:
            chunks[-1] = []
            selector.register(pipe, selectors.EVENT_READ, -1)
        while selector.get_map():
            left = deadline - time.monotonic()
            events = selector.select(timeout=left) if left > 0 else []
            assert events, f"no end of output within {TIMEOUT} s"
            for key, _ in events:
                try:
                    chunk = os.read(key.fd, 65536)
                except OSError:  # EIO: the other side of the terminal is closed
                    chunk = b""
                if not chunk:
                    selector.unregister(key.fd)
                chunks[key.data].append(chunk)
    return {fd: b"".join(parts) for fd, parts in chunks.items()}


def test_the_summary_is_printed_under_the_findings(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB.format(i=0, grace=900))
    code, screen, _ = on_terminal(["lint", "job.yaml", *SELECT], tmp_path,
                                  both=True)
    assert code == 1
    # a terminal: severities coloured (auto), and the terminal turns \n into \r\n
    assert screen == (f"job.yaml:12:7: \x1b[31merror\x1b[0m {FINDING}\r\n"
                      f"1 error, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\r\n"
                      f"{ASSUMED}\r\n")


# Each file of a long run carries 40 environment variables: what its pod does not matter to
# PM201, but reading them makes the run last (3000 files: over a second, where the bare Jobs
# under --select take about the bar's half-second delay, too close to show it for sure).
ENV = "".join(f'          - {{name: SETTING_{n}, value: "{n}"}}\n' for n in range(40))


FILES = 3000  # enough for a run longer than the bar's half-second delay, even on a fast machine


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding ``k8s/``: FILES Jobs, the first with a finding (made once: the runs
    only read it)."""
    cwd = tmp_path_factory.mktemp("many")
    root = cwd / "k8s"
    root.mkdir()
    for i in range(FILES):
        job = JOB.format(i=i, grace=900 if i == 0 else 300).replace(
            "      containers: [{name: main, image: busybox}]\n",
            "      containers:\n        - name: main\n          image: busybox\n          env:\n"
            + ENV)
        (root / f"job{i:05d}.yaml").write_text(job)
    return cwd


def test_a_long_run_shows_a_progress_bar_on_the_terminal_only(many: Path) -> None:
    summary = f"1 error, 0 warnings, 0 info in {FILES} files ({FILES} objects, {RULES} rules)" \
        f"\r\n{ASSUMED}"
    code, screen, piped = on_terminal(["lint", "k8s", "-j", "1", *SELECT], many, both=False)
    assert code == 1
    assert piped == f"k8s/job00000.yaml:12:7: error {FINDING}\n"  # stdout: a pipe, no colour
    frames = re.findall(BAR, screen)
    assert frames and set(frames) == {str(FILES)}, screen[:300]
    # frames, then the bar erased, then the summary: nothing of the bar stays on the screen
    assert re.fullmatch(f"(?:{BAR})+{re.escape(ERASE)}{re.escape(summary)}\r\n", screen), \
        screen[-300:]


@pytest.mark.slow  # two long runs; the fast subset asks wanted() below
def test_no_progress_bar_in_a_ci_log_or_a_pipe(many: Path) -> None:
    summary = f"1 error, 0 warnings, 0 info in {FILES} files ({FILES} objects, {RULES} rules)"
    code, screen, _ = on_terminal(["lint", "k8s", "-j", "1", *SELECT], many, both=False,
                                  CI="true")
    assert (code, screen) == (1, f"{summary}\r\n{ASSUMED}\r\n")
    proc = subprocess.run([sys.executable, "-m", "pmanifest", "lint", "k8s", "-j", "1", *SELECT],
                          cwd=many, env=_env(), capture_output=True, text=True, timeout=120,
                          check=False)
    assert (proc.returncode, proc.stderr) == (1, f"{summary}\n{ASSUMED}\n")


@pytest.mark.parametrize(("env", "shown"), [
    ({"TERM": "xterm"}, True),
    ({"TERM": "xterm", "CI": "true"}, False),  # some CI runners give jobs a pseudo-terminal
    ({"TERM": "dumb"}, False),
    ({}, True),
])
def test_the_bar_is_wanted_on_a_terminal_a_person_watches(monkeypatch: pytest.MonkeyPatch,
                                                          env: dict[str, str],
                                                          shown: bool) -> None:
    from pmanifest.lint.progress import wanted

    for name in ("CI", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    main_fd, side_fd = pty.openpty()
    read_fd, write_fd = os.pipe()
    with os.fdopen(side_fd, "w") as terminal, os.fdopen(write_fd, "w") as pipe, \
            open(os.devnull, "w") as null:
        assert (wanted(terminal), wanted(pipe), wanted(null)) == (shown, False, False)
    os.close(main_fd)
    os.close(read_fd)


def test_a_report_longer_than_a_pipe_holds_is_read_whole(tmp_path: Path) -> None:
    """stdout (a pipe) and stderr (the terminal) are read together: a report of more than the
    64 KiB a pipe holds does not wait forever for the terminal to close."""
    jobs = 300
    (tmp_path / "jobs.yaml").write_text("---\n".join(JOB.format(i=i, grace=900)
                                                     for i in range(jobs)))
    code, screen, piped = on_terminal(["lint", "jobs.yaml", *SELECT], tmp_path, both=False)
    assert len(piped.encode()) > 65536
    assert (code, piped.splitlines()) == (
        1, [f"jobs.yaml:{12 + 14 * i}:7: error {FINDING}" for i in range(jobs)])
    assert screen == (f"{jobs} errors, 0 warnings, 0 info in 1 file ({jobs} objects, {RULES} "
                      f"rules)\r\n{ASSUMED}\r\n")


def test_the_harness_gives_up_on_output_that_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "TIMEOUT", 0.2)
    main_fd, side_fd = pty.openpty()
    read_fd, write_fd = os.pipe()  # both kept open: no end of output ever comes
    try:
        with pytest.raises(AssertionError, match=r"no end of output within 0\.2 s"):
            _read_together(main_fd, read_fd)
    finally:
        for fd in (main_fd, side_fd, read_fd, write_fd):
            os.close(fd)


def test_the_bar_waits_then_redraws_at_most_ten_times_a_second() -> None:
    import io

    from pmanifest.lint.progress import Progress

    now = [0.0]
    stream = io.StringIO()
    bar = Progress(stream, total=4, delay=0.5, clock=lambda: now[0])
    bar.advance()  # 0.0 s: too early
    now[0] = 0.6
    bar.advance()  # drawn
    now[0] = 0.65
    bar.advance()  # drawn 0.05 s ago: skipped
    now[0] = 0.9
    bar.advance()  # the last file: nothing left to show
    bar.close()
    assert stream.getvalue() == (ERASE + "[" + "#" * 15 + "." * 15 + "] 2/4 files" + ERASE)
    quiet = io.StringIO()
    short = Progress(quiet, total=2, delay=0.5, clock=lambda: 0.0)
    short.advance()
    short.advance()
    short.close()
    assert quiet.getvalue() == ""  # a short run never shows it
