"""The harness itself: it reproduces what goes wrong without the supervisor, so the scenario
tests can fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .kubelet import Preemption, Shell, needs_root, run, shells
from .test_scenarios import CHECKPOINTS, GRACE, MAINS, PY

pytestmark = needs_root


def _env(work: Path) -> list[dict[str, str]]:
    return [{"name": "READY", "value": str(work / "ready")},
            {"name": "CKPT_LOG", "value": str(work / "ckpt.log")}]


def test_exec_form_python_as_pid1_sits_out_the_grace_period(tmp_path: Path) -> None:
    """The kernel drops a TERM that PID 1 has no handler for: after the preStop checkpoint
    the pod holds the node until the kubelet's SIGKILL and exits 137."""
    container = {"command": [PY, "-c", MAINS["sleeps"]], "env": _env(tmp_path),
                 "lifecycle": {"preStop": {"exec": {"command": [PY, "-c", CHECKPOINTS["quick"]]}}}}
    outcome = run(container, shells()[0], tmp_path, grace=GRACE,
                  preemption=Preemption(ready=tmp_path / "ready"),
                  checkpoint_log=tmp_path / "ckpt.log")
    assert (outcome.exit_code, outcome.checkpoints, outcome.kubelet_killed) == (137, 1, True)
    assert GRACE <= outcome.seconds < GRACE + 1


@pytest.mark.parametrize("shell", shells(), ids=str)
def test_a_process_left_behind_is_reported(shell: Shell, tmp_path: Path) -> None:
    """A wrapper that exits on TERM without stopping what it started leaves a survivor."""
    # ready once the child has become sleep (a forked shell not yet exec'd reads as "sh")
    script = ('sleep 30 & p=$!; until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ]; do :; '
              'done; trap "exit 143" TERM; : > "$READY"; wait')
    container = {"command": ["/bin/sh", "-c", script], "env": _env(tmp_path)}
    outcome = run(container, shell, tmp_path, grace=GRACE,
                  preemption=Preemption(ready=tmp_path / "ready"),
                  checkpoint_log=tmp_path / "ckpt.log")
    assert outcome.exit_code == 143
    assert [s.split(":")[1] for s in outcome.survivors] == ["sleep"]


@pytest.mark.parametrize("shell", shells(), ids=str)
def test_the_shell_under_test_is_pid_1(shell: Shell, tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = 'stat -L -c %d:%i /proc/$$/exe > "$OUT"; echo "$$ ${SHELLOPTS:-none}" >> "$OUT"'
    container = {"command": ["/bin/sh", "-c", script],
                 "env": [{"name": "OUT", "value": str(out)}]}
    outcome = run(container, shell, tmp_path, grace=GRACE, preemption=None,
                  checkpoint_log=tmp_path / "ckpt.log")
    assert outcome.exit_code == 0
    binary = os.stat(shell.binary)
    identity, pid, options = out.read_text().split()
    assert (identity, pid) == (f"{binary.st_dev}:{binary.st_ino}", "1")
    if shell.name.startswith("bash"):  # as sh, bash runs in posix mode
        assert ("posix" in options.split(":")) == (shell.argv0 is None)
