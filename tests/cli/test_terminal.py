"""What a person at a terminal sees, from a real process on a pseudo-terminal: the findings,
then the summary under them; a progress bar over files on stderr during a long run, erased
before the findings, and never in a pipe or a CI log."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pmanifest.rules import registry

RULES = len(registry())
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


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "TERM")}
    return {**env, "TERM": "xterm", **extra}


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side of the terminal is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def on_terminal(args: list[str], cwd: Path, both: bool, **env: str) -> tuple[int, str, str]:
    """Run ``pmanifest ARGS`` with stderr (and stdout too when ``both``) on a pseudo-terminal;
    returns (exit code, what the terminal showed, stdout when it was a pipe)."""
    main_fd, side_fd = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pmanifest", *args], cwd=cwd, env=_env(**env),
        stdin=subprocess.DEVNULL, stdout=side_fd if both else subprocess.PIPE, stderr=side_fd)
    os.close(side_fd)
    screen = _read_all(main_fd)
    piped = proc.stdout.read() if proc.stdout is not None else b""
    code = proc.wait(timeout=120)
    os.close(main_fd)
    return code, screen.decode(), piped.decode()


def test_the_summary_is_printed_under_the_findings(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB.format(i=0, grace=900))
    code, screen, _ = on_terminal(["lint", "job.yaml"], tmp_path, both=True)
    assert code == 1
    # a terminal: severities coloured (auto), and the terminal turns \n into \r\n
    assert screen == (f"job.yaml:12:7: \x1b[31merror\x1b[0m {FINDING}\r\n"
                      f"1 error, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\r\n")


def _many(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "k8s"
    root.mkdir()
    for i in range(count):
        (root / f"job{i:05d}.yaml").write_text(JOB.format(i=i, grace=900 if i == 0 else 300))
    return root


FILES = 3000  # enough for a run longer than the bar's half-second delay, even on a fast machine


def test_a_long_run_shows_a_progress_bar_on_the_terminal_only(tmp_path: Path) -> None:
    _many(tmp_path, FILES)
    summary = f"1 error, 0 warnings, 0 info in {FILES} files ({FILES} objects, {RULES} rules)"
    code, screen, piped = on_terminal(["lint", "k8s", "-j", "1"], tmp_path, both=False)
    assert code == 1
    assert piped == f"k8s/job00000.yaml:12:7: error {FINDING}\n"  # stdout: a pipe, no colour
    frames = re.findall(BAR, screen)
    assert frames and set(frames) == {str(FILES)}, screen[:300]
    # frames, then the bar erased, then the summary: nothing of the bar stays on the screen
    assert re.fullmatch(f"(?:{BAR})+{re.escape(ERASE)}{re.escape(summary)}\r\n", screen), \
        screen[-300:]


def test_no_progress_bar_in_a_ci_log_or_a_pipe(tmp_path: Path) -> None:
    _many(tmp_path, FILES)
    summary = f"1 error, 0 warnings, 0 info in {FILES} files ({FILES} objects, {RULES} rules)"
    code, screen, _ = on_terminal(["lint", "k8s", "-j", "1"], tmp_path, both=False, CI="true")
    assert (code, screen) == (1, summary + "\r\n")
    proc = subprocess.run([sys.executable, "-m", "pmanifest", "lint", "k8s", "-j", "1"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
                          check=False)
    assert (proc.returncode, proc.stderr) == (1, summary + "\n")


def test_the_bar_waits_then_redraws_at_most_ten_times_a_second() -> None:
    import io

    from pmanifest.progress import Progress

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
