"""The process's environment turned hostile (issue 15, items 17, 18, 28; issue 24): a full or
closed stdout, a reader of stdout that goes away, an unwritable stderr, Ctrl-C, SIGTERM and
the out-of-memory killer in a parallel run, and ``--jobs 100000``. These run ``python -m
pmanifest`` in real processes (a device, a closed descriptor and a signal are things CliRunner
cannot stage), made under tmp_path: never in /dev."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.rules import registry
from tests.hostile.conftest import RULES, invoke, run_real, selected, summary
from tests.hostile.corpus import PREEMPTIBLE_POD
from tests.stderr import render_stderr

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "finetune-sigterm.yaml"
ENV = {**os.environ, "NO_COLOR": "1"}
PMANIFEST = [sys.executable, "-m", "pmanifest"]


def _full_device(tmp_path: Path) -> Path:
    """A device like /dev/full (1, 7), made here; /dev/full itself where mknod is not allowed
    (not root): writing to it changes nothing."""
    path = tmp_path / "full"
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 7))
    except PermissionError:
        return Path("/dev/full")
    return path


def _with_stdout(args: list[str], stdout: object, cwd: Path) -> tuple[int, str]:
    proc = subprocess.run([*PMANIFEST, *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          env=ENV, timeout=60, check=False)
    return proc.returncode, render_stderr(proc.stderr.decode(), RULES)


def _closed_stdout(args: list[str], cwd: Path) -> tuple[int, str]:
    """``pmanifest ARGS >&-``, as a shell runs it."""
    proc = subprocess.run(["/bin/sh", "-c", 'exec "$@" >&-', "sh", *PMANIFEST, *args], cwd=cwd,
                          stderr=subprocess.PIPE, env=ENV, timeout=60, check=False)
    return proc.returncode, render_stderr(proc.stderr.decode(), RULES)


NO_SPACE = "pmanifest: cannot write output: No space left on device\n"
CLOSED = "pmanifest: cannot write output: stdout is closed\n"
COMMANDS = {
    "render": ["render", "-f", "spec.yaml"],
    "lint": ["lint", "--disable", "PM302", "pod.yaml"],
    "schema": ["schema"],
    "rules": ["rules"],
    "explain": ["explain", "PM201"],
    "policy-test": ["policy", "test", str(ROOT / "examples" / "policies")],
    "version": ["--version"],
    "help": ["--help"],
    "lint-help": ["lint", "--help"],
    "cluster-events-help": ["cluster", "events", "--help"],
}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(SPEC, tmp_path / "spec.yaml")
    (tmp_path / "pod.yaml").write_text(PREEMPTIBLE_POD)
    return tmp_path


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_stdout_is_exit_2(work: Path, name: str) -> None:
    with open(_full_device(work), "wb") as full:
        assert _with_stdout(COMMANDS[name], full, work) == (2, NO_SPACE)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_stdout_is_exit_2(work: Path, name: str) -> None:
    assert _closed_stdout(COMMANDS[name], work) == (2, CLOSED)


def test_nothing_to_write_needs_no_stdout(work: Path) -> None:
    (work / "clean.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    clean = summary("0 errors, 0 warnings, 0 info in 1 file (1 object)",  # on stderr
                    len(registry())) \
        + "profile together, the default: no provider label found\n"  # (run as it is)
    assert _closed_stdout(["lint", "clean.yaml"], work) == (0, clean)
    with open(_full_device(work), "wb") as full:
        assert _with_stdout(["lint", "clean.yaml"], full, work) == (0, clean)


# -- issue 24: a reader that goes away, a stderr nobody can write ---------------------------------

def _reader_gone(args: list[str], cwd: Path) -> tuple[int, bytes]:
    """``pmanifest ARGS | true``, the reader gone before the first write: a real pipe whose
    read end is closed (as ``| head -1`` closes it after one line)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([*PMANIFEST, *args], cwd=cwd, stdout=write, stderr=subprocess.PIPE,
                              env=ENV, timeout=60, check=False)
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reader_that_went_away_is_a_quiet_141(work: Path, name: str) -> None:
    """Was exit 1 (as for findings), for a clean run and for --version: now the code a shell
    reports for grep or git killed by SIGPIPE, and nothing on stderr."""
    assert _reader_gone(COMMANDS[name], work) == (141, b"")


def test_a_lint_report_cut_short_by_head_is_141(work: Path) -> None:
    """A report far longer than a pipe holds (64 KiB) through a real ``| head -1``: the run
    ends quietly as soon as the pipe closes, with the code of the pipe, not the findings' 1."""
    _heavy_tree(work / "tree", 1, 1500)
    proc = subprocess.run(["/bin/bash", "-c", 'set -o pipefail; "$@" | head -1', "sh",
                           *PMANIFEST, *selected(["lint", "--jobs", "1", "tree"])], cwd=work,
                          capture_output=True, env=ENV, timeout=120, check=False)
    assert proc.returncode == 141, proc.stderr
    assert proc.stdout.count(b"\n") == 1
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr


_STDERR_CASES = {  # args, the exit code with a writable stderr
    "clean": (["lint", "clean.yaml"], 0),
    "findings": (["lint", "pod.yaml"], 1),
    "missing file": (["lint", "missing.yaml"], 2),
    "render": (["render", "-f", "spec.yaml"], 0),
    "version": (["--version"], 0),
}


@pytest.mark.parametrize("how", ["full", "closed", "reader gone"])
@pytest.mark.parametrize("case", list(_STDERR_CASES))
def test_an_unwritable_stderr_never_changes_the_exit_code(work: Path, case: str,
                                                          how: str) -> None:
    """Was exit 1 for every run with ``2>/dev/full``: a message that cannot be written is
    lost, the run's verdict stands."""
    (work / "clean.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    args, code = _STDERR_CASES[case]
    command = [*PMANIFEST, *selected(args)]
    if how == "closed":
        command = ["/bin/sh", "-c", 'exec "$@" 2>&-', "sh", *command]
    if how == "full":
        with open(_full_device(work), "wb") as full:
            proc = subprocess.run(command, cwd=work, stdout=subprocess.PIPE, stderr=full,
                                  env=ENV, timeout=60, check=False)
    else:
        read, write = os.pipe()
        if how == "reader gone":
            os.close(read)
        try:
            proc = subprocess.run(command, cwd=work, stdout=subprocess.PIPE,
                                  stderr=write if how == "reader gone" else None, env=ENV,
                                  timeout=60, check=False)
        finally:
            os.close(write)
            if how != "reader gone":
                os.close(read)
    assert proc.returncode == code


# -- item 18: Ctrl-C ---------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry))
    return found


def _heavy_tree(root: Path, files: int, pods: int) -> None:
    root.mkdir()
    items = "".join("  - " + PREEMPTIBLE_POD.replace("\n", "\n    ").rstrip() + "\n"
                    for _ in range(pods))
    text = "apiVersion: v1\nkind: List\nitems:\n" + items
    for i in range(files):
        (root / f"f{i:04}.yaml").write_text(text)


def _as_a_terminal_job() -> None:
    """A shell starts a foreground job with SIGINT at its default action. The test's own
    process may have it ignored (a suite started in the background by a non-interactive shell
    is: POSIX shells ignore SIGINT and SIGQUIT for asynchronous commands), and pmanifest rightly
    keeps a disposition it was started with, as ``nohup``'d programs do."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_a_parallel_lint_exits_quietly_with_130(tmp_path: Path) -> None:
    proc, workers = _parallel_run(tmp_path, _as_a_terminal_job)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stdout, stderr.decode()) == (130, b"", "")
    time.sleep(0.2)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)  # none left behind


def test_a_run_started_with_sigint_ignored_keeps_it_ignored(tmp_path: Path) -> None:
    """The positive beside it: ``nohup``-style, a background job of a script."""
    proc, _ = _parallel_run(tmp_path, lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1  # the findings of the whole tree, as if no SIGINT came
    assert stdout.count(b"\n") > 256 and "256 files" in stderr.decode()


# -- issue 24: SIGTERM and the out-of-memory killer in a parallel run ---------------------------

def _parallel_run(tmp_path: Path, preexec: Callable[[], object] | None = None
                  ) -> tuple[subprocess.Popen[bytes], set[int]]:
    """A lint --jobs 4 run in its own process group, as a terminal's job, once its workers
    are working."""
    _heavy_tree(tmp_path / "tree", 256, 150)
    proc = subprocess.Popen([*PMANIFEST, "lint", "--jobs", "4", "tree"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                            start_new_session=True, preexec_fn=preexec)
    workers: set[int] = set()
    deadline = time.monotonic() + 30
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, "the run ended before its workers could be seen"
    time.sleep(0.5)  # let them work
    return proc, workers


def _ended(proc: subprocess.Popen[bytes], workers: set[int],
           limit: float) -> tuple[int, bytes, str, float]:
    start = time.monotonic()
    try:
        stdout, stderr = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the parent still waited {limit} s later")
    took = time.monotonic() - start
    time.sleep(0.2)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)  # none left behind
    return proc.returncode, stdout, stderr.decode(), took


def test_a_worker_killed_with_sigkill_ends_the_run_with_2_within_a_second(
        tmp_path: Path) -> None:
    """What the out-of-memory killer does to one worker: the parent waited for its batch for
    ever (multiprocessing.Pool replaces the worker, never the result)."""
    proc, workers = _parallel_run(tmp_path)
    os.kill(min(workers), signal.SIGKILL)
    code, stdout, stderr, took = _ended(proc, workers, 10)
    assert (code, stdout, stderr) == (2, b"", (
        "pmanifest: a lint worker process ended abruptly (killed: the out-of-memory killer "
        "sends SIGKILL); nothing was reported; run again with fewer --jobs\n"))
    assert took < 1.0, took


@pytest.mark.parametrize("to", ["parent", "group"])
def test_sigterm_during_a_parallel_lint_ends_quietly_with_143(tmp_path: Path, to: str) -> None:
    """SIGTERM to the parent printed a traceback per worker (a broken pipe to the parent that
    had died); to the whole group (as a service manager sends it), the same quiet end."""
    proc, workers = _parallel_run(tmp_path)
    if to == "parent":
        os.kill(proc.pid, signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGTERM)
    assert _ended(proc, workers, 10)[:3] == (143, b"", "")


def test_sigterm_to_a_run_without_workers_is_143_and_writes_nothing(tmp_path: Path) -> None:
    """Any run: SIGTERM ends it like an error (the one writer removes its temp files, no
    report is half-written), quietly, with 143; it was killed outright (no cleanup)."""
    _heavy_tree(tmp_path / "tree", 64, 150)
    proc = subprocess.Popen([*PMANIFEST, "lint", "--jobs", "1", "tree", "--format", "json",
                             "--output", "report.json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    time.sleep(3)  # started, reading and linting
    assert proc.poll() is None, "the run ended before the signal"
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)
    assert (proc.returncode, stdout, stderr) == (143, b"", b"")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]


# -- item 28: --jobs is capped -------------------------------------------------------------------

def test_jobs_are_capped_at_twice_the_cpus(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(2000):  # one worker per 32 inputs would allow 62
        (tree / f"p{i:04}.yaml").write_text(PREEMPTIBLE_POD)
    one_cpu = lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # noqa: E731
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        proc = subprocess.Popen([*PMANIFEST, *selected(["lint", "--jobs", "100000", "tree"])],
                                cwd=tmp_path,
                                stdout=out, stderr=err, env=ENV, preexec_fn=one_cpu)
        most = 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            most = max(most, len(_children(proc.pid)))
            time.sleep(0.02)
        proc.kill()  # (if it is still running: the assertion below says so)
        proc.wait()
    sequential = run_real(["lint", "--jobs", "1", "tree"], tmp_path)
    assert (proc.returncode, (tmp_path / "out").read_bytes(), (tmp_path / "err").read_bytes()
            ) == (sequential.returncode, sequential.stdout, sequential.stderr)
    assert 1 <= most <= 2, most


def test_the_cap_is_documented(runner: CliRunner) -> None:
    result = invoke(runner, ["lint", "--help"])
    assert ("  -j, --jobs INTEGER RANGE        Lint in N processes (output is identical), at\n"
            "                                  most twice the number of CPUs and one per 32\n"
            "                                  inputs [default: the number of CPUs, at most\n"
            "                                  8; small inputs run in one process]  [x>=1]\n"
            ) in result.stdout
