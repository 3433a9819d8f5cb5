"""Where a container's scripts are: the ``sh -c`` script of its command line, and its
preStop hook."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pmanifest.document import Path
from pmanifest.shell.facts import LAUNCHERS, SHELLS, Command, Loc


def script_index(argv: Sequence[Any]) -> int | None:
    """Index in ``argv`` of the script a shell runs with ``-c`` (``sh -c``, ``bash -euc``,
    ``busybox sh -c``, behind ``env``/``tini --``), or None when argv runs no shell script."""
    i = 0
    while i < len(argv) and isinstance(argv[i], str):
        program = posixpath.basename(argv[i])
        if program in LAUNCHERS:
            i += 1
            while i < len(argv) and isinstance(argv[i], str) and (
                argv[i].startswith("-") or "=" in argv[i]
            ):
                i += 1
            continue
        if program == "busybox" and i + 1 < len(argv) and argv[i + 1] in SHELLS:
            i += 1
            program = str(argv[i])
        if program not in SHELLS:
            return None
        return _after_c(argv, i + 1)
    return None


def _after_c(argv: Sequence[Any], i: int) -> int | None:
    has_c = False
    while i < len(argv):
        arg = argv[i]
        if not isinstance(arg, str):
            return None
        if arg == "--":
            i += 1
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg.startswith("--") or (len(arg) > 1 and arg[0] in "-+"):
            has_c = has_c or (arg[0] == "-" and not arg.startswith("--") and "c" in arg[1:])
            i += 1
            continue
        break
    if has_c and i < len(argv) and isinstance(argv[i], str):
        return i
    return None


def container_script(container: dict[str, Any]) -> tuple[Path, str] | None:
    """The main script of a container (``command``, then ``args``) as (path relative to the
    container, text). Without ``command`` the image's entrypoint is unknown: None."""
    command = container.get("command")
    args = container.get("args")
    if not isinstance(command, list) or not command:
        return None
    argv = list(command) + (list(args) if isinstance(args, list) else [])
    index = script_index(argv)
    if index is None:
        return None
    if index < len(command):
        return ("command", index), argv[index]
    return ("args", index - len(command)), argv[index]


@dataclass(frozen=True)
class PreStop:
    """A container's preStop hook."""

    path: Path  # of ``lifecycle.preStop``, relative to the container
    action: str  # exec | sleep | httpGet | tcpSocket | unknown
    argv: tuple[str, ...] = ()  # exec command, when every item is a string
    script: tuple[Path, str] | None = None  # exec command run through a shell -c

    def commands(self) -> tuple[Command, ...]:
        """What the hook runs: the script's commands, or the exec command itself."""
        if self.script is not None:
            from pmanifest.shell.walker import analyse

            return analyse(self.script[1]).commands
        if self.argv:
            return (Command(self.argv[0], self.argv[1:], Loc(0, 0)),)
        return ()

    @property
    def does_work(self) -> bool:
        return self.action == "exec" and any(c.does_work for c in self.commands())


def prestop_of(container: dict[str, Any]) -> PreStop | None:
    lifecycle = container.get("lifecycle")
    hook = lifecycle.get("preStop") if isinstance(lifecycle, dict) else None
    if not isinstance(hook, dict):
        return None
    path: Path = ("lifecycle", "preStop")
    exec_ = hook.get("exec")
    if isinstance(exec_, dict):
        command = exec_.get("command")
        argv = command if isinstance(command, list) else []
        if not argv or not all(isinstance(a, str) for a in argv):
            return PreStop(path, "exec")
        index = script_index(argv)
        script = ((*path, "exec", "command", index), argv[index]) if index is not None else None
        return PreStop(path, "exec", tuple(argv), script)
    sleep = hook.get("sleep")
    if isinstance(sleep, dict):
        return PreStop(path, "sleep")
    for action in ("httpGet", "tcpSocket"):
        if action in hook:
            return PreStop(path, action)
    return PreStop(path, "unknown")

