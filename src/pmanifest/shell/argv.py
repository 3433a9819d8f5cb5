"""Where a container's scripts are: the ``sh -c`` script of its command line, and its
preStop hook."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any, NamedTuple

from pmanifest.kube.contract import SUPERVISOR_NAME
from pmanifest.loader.positions import Path
from pmanifest.shell.facts import LAUNCHERS, SHELLS, Command, Loc


def script_index(argv: Sequence[Any]) -> int | None:
    """Index in ``argv`` of the script a shell runs with ``-c`` (``sh -c``, ``bash -euc``,
    ``busybox sh -c``, behind ``env``/``tini --``), or None when argv runs no shell script."""
    found = _script(argv)
    return found[0] if found is not None else None


def script_shell(argv: Sequence[Any]) -> str | None:
    """The shell that runs ``argv``'s ``-c`` script: sh, bash, dash, ash, zsh, ... (busybox
    for ``busybox sh``), or None when argv runs no shell script."""
    found = _script(argv)
    return found[1] if found is not None else None


def supervisor_mode(argv: Sequence[Any]) -> str | None:
    """MODE of pmanifest's termination supervisor when ``argv`` runs it (``sh -c SCRIPT
    pmanifest-supervisor MODE ...``), else None."""
    index = script_index(argv)
    if index is None or len(argv) < index + 3 or argv[index + 1] != SUPERVISOR_NAME:
        return None
    mode = argv[index + 2]
    return mode if isinstance(mode, str) else None


def _script(argv: Sequence[Any]) -> tuple[int, str] | None:
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
        shell = program
        if program == "busybox" and i + 1 < len(argv) and argv[i + 1] in SHELLS:
            i += 1
            program = str(argv[i])
        if program not in SHELLS:
            return None
        index = _after_c(argv, i + 1)
        return (index, shell) if index is not None else None
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


def container_argv(container: dict[str, Any]) -> list[Any]:
    """``command`` + ``args``; empty without ``command`` (the image's entrypoint is unknown)."""
    command = container.get("command")
    args = container.get("args")
    if not isinstance(command, list) or not command:
        return []
    return list(command) + (list(args) if isinstance(args, list) else [])


def container_script(container: dict[str, Any]) -> tuple[Path, str] | None:
    """The main script of a container (``command``, then ``args``) as (path relative to the
    container, text). Without ``command`` the image's entrypoint is unknown: None."""
    argv = container_argv(container)
    index = script_index(argv)
    if index is None:
        return None
    command = container["command"]
    if index < len(command):
        return ("command", index), argv[index]
    return ("args", index - len(command)), argv[index]


def supervised_script(container: dict[str, Any]) -> tuple[Path, str] | None:
    """The ``sh -c`` script of the main that pmanifest's supervisor starts (``sh -c SCRIPT
    pmanifest-supervisor MODE DEADLINE N CHECKPOINT_ARGV(N) MAIN_ARGV...``), as (path relative
    to the container, text); None when the container runs no supervisor or its main no script."""
    argv = container_argv(container)
    index = script_index(argv)
    if index is None or supervisor_mode(argv) is None or len(argv) < index + 5:
        return None
    count = argv[index + 4]
    if not isinstance(count, str) or not count.isdigit():
        return None
    start = index + 5 + int(count)
    inner = script_index(argv[start:])
    if inner is None:
        return None
    at = start + inner
    command = container["command"]
    if at < len(command):
        return ("command", at), argv[at]
    return ("args", at - len(command)), argv[at]


class PreStop(NamedTuple):
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

