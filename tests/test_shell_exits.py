"""With which status a script ends when its TERM handler runs: the analysis
(``pmanifest.shell.zero_exit``) against what dash, bash and busybox sh really do."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pmanifest.shell import analyse, zero_exit

SHELLS = {"dash": ["dash"], "bash": ["bash"], "bash-posix": ["bash", "--posix"],
          "busybox": ["busybox", "sh"]}
# "ckpt" succeeds, "train" runs until the TERM
PRELUDE = 'ckpt() { true; }\ntrain() { sleep 10; }\n'
SCRIPTS = {
    "exit 0": "trap 'ckpt; exit 0' TERM\n: > \"$READY\"\ntrain & wait\n",
    "exit 143": "trap 'ckpt; exit 143' TERM\n: > \"$READY\"\ntrain & wait\n",
    "exit $? after a command": "trap 'ckpt; exit $?' TERM\n: > \"$READY\"\ntrain & wait\n",
    "exit $? first": "trap 'exit $?' TERM\n: > \"$READY\"\ntrain & wait\n",
    "bare exit after a command": "trap 'ckpt; exit' TERM\n: > \"$READY\"\ntrain & wait\n",
    "bare exit first": "trap 'exit' TERM\n: > \"$READY\"\ntrain & wait\n",
    "bare exit in a function": "on_term() { ckpt; exit; }\ntrap on_term TERM\n"
                               ": > \"$READY\"\ntrain & wait\n",
    "exit $? after waiting for a child that exits 0":
        "trap 'kill \"$c\"; wait \"$c\"; exit $?' TERM\n: > \"$READY\"\n"
        "(trap 'exit 0' TERM; sleep 10 & wait) & c=$!\nwait \"$c\"\n",
    "returns into wait; exit 0": "trap 'ckpt' TERM\n: > \"$READY\"\ntrain & wait\nexit 0\n",
    "returns into wait; echo": "trap 'ckpt' TERM\n: > \"$READY\"\ntrain & wait\necho done\n",
    "returns into the end": "trap 'ckpt' TERM\n: > \"$READY\"\ntrain & wait\n",
    "returns into exit $?": "trap 'ckpt' TERM\n: > \"$READY\"\ntrain & wait\nexit $?\n",
    "returns into exit 143": "trap 'ckpt' TERM\n: > \"$READY\"\ntrain & wait\nexit 143\n",
    "flag, then exit 143": "trap 'term=1' TERM\n: > \"$READY\"\ntrain & wait\n"
                           "[ -n \"$term\" ] && exit 143\nexit 0\n",
}


# where a process of the script sleeps once it is where the TERM is meant to find it: a shell
# in ``wait`` (wait4 or waitid; dash and busybox sh, with a trap set, in sigsuspend), ``sleep``
# in nanosleep
SETTLED = ("do_wait", "sigsuspend", "hrtimer_nanosleep", "do_nanosleep")


def _tree(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *(p for child in children for p in _tree(int(child)))]


def _settled(pid: int) -> bool:
    """Has the script reached its ``wait``: the shell, its subshells and ``sleep`` all blocked
    where SETTLED says (read from /proc/PID/wchan), and at least one child started?"""
    try:
        tree = _tree(pid)
        return len(tree) > 1 and all(
            Path(f"/proc/{p}/wchan").read_text().startswith(SETTLED) for p in tree)
    except OSError:  # a process of the tree has just exited
        return False


def _run(shell: list[str], script: str, tmp_path: Path) -> int:
    """The script's exit status after a TERM sent once it is in its ``wait`` (waited for, as
    /proc shows it, not slept for: a loaded machine may take longer than any sleep)."""
    ready = tmp_path / "ready"
    proc = subprocess.Popen([*shell, "-c", PRELUDE + script], cwd=tmp_path,
                            env={**os.environ, "READY": str(ready)}, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not (ready.exists() and _settled(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, "never reached its wait"
        time.sleep(0.002)
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=20)


@pytest.mark.parametrize("shell", SHELLS, ids=str)
@pytest.mark.parametrize("name", SCRIPTS, ids=str)
def test_analysis_matches_the_shell(name: str, shell: str, tmp_path: Path) -> None:
    argv = SHELLS[shell]
    assert shutil.which(argv[0]), f"{argv[0]} is not installed"
    status = _run(argv, SCRIPTS[name], tmp_path)
    (trap,) = [t for t in analyse(PRELUDE + SCRIPTS[name]).traps]
    found = zero_exit(trap, argv[0])
    assert (found is not None) == (status == 0), (status, found)


def test_the_per_shell_difference_is_real(tmp_path: Path) -> None:
    script = SCRIPTS["bare exit after a command"]
    codes = {shell: _run(argv, script, tmp_path / shell) for shell, argv in SHELLS.items()
             if not (tmp_path / shell).mkdir()}
    assert codes == {"dash": 143, "bash": 0, "bash-posix": 0, "busybox": 143}


def test_an_unknown_sh_is_taken_for_bash() -> None:
    """/bin/sh is bash in RHEL-family images: a bare exit after a command is reported."""
    (trap,) = analyse(SCRIPTS["bare exit after a command"]).traps
    assert zero_exit(trap, "sh") is not None
    assert zero_exit(trap, "busybox") is None and zero_exit(trap, "ash") is None
