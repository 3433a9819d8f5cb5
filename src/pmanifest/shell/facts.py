"""What the shell analysis reports: commands, TERM traps and the facts of a script, with
the word lists that classify commands."""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh"})
# Launchers that run their operands as a command line (signal forwarders, env).
LAUNCHERS = frozenset({"env", "tini", "tini-static", "dumb-init"})

# Commands that are no checkpoint work: reporting, signalling, waiting, shell housekeeping.
NOT_WORK = frozenset({
    "echo", "printf", "exit", "kill", "wait", "true", "false", ":", "trap", "sleep", "return",
    "set", "unset", "export", "local", "readonly", "declare", "typeset", "shift", "cd", "test",
    "[", "[[", "logger", "continue", "break", "read",
})
# Commands after a trap that do not make up "the main process" when run in the foreground.
QUICK = NOT_WORK | frozenset({
    "exec", "mkdir", "touch", "ln", "chmod", "chown", "date", "hostname", "id", "umask", "ulimit",
    "source", ".", "eval", "alias", "command", "type", "hash", "pwd", "nvidia-smi",
})
# Where writing a checkpoint makes no sense, so an argument under them is not a checkpoint path.
SYSTEM_DIRS = ("/dev", "/proc", "/sys", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64",
               "/run", "/var/run")
NOT_DATA_SUFFIXES = (".py", ".sh", ".bash", ".pl", ".rb", ".js", ".yaml", ".yml", ".json",
                     ".toml", ".cfg", ".ini", ".conf")
# Commands that remove or detach what they name and write nothing: a cleanup (a preStop that
# deletes a registration socket) names no checkpoint path.
REMOVERS = frozenset({"rm", "rmdir", "unlink", "umount", "shred", "truncate"})
# Commands whose destination is their last operand (the others are sources).
COPIERS = frozenset({"cp", "mv", "rsync", "install", "ln", "scp"})


class Loc(NamedTuple):
    """A 0-based (row, column) inside a script."""

    row: int
    column: int


class Command(NamedTuple):
    """A simple command: its program and arguments with quotes removed (expansions such as
    ``$DIR`` kept verbatim), where it is, and how it runs."""

    name: str
    args: tuple[str, ...]
    loc: Loc
    background: bool = False  # runs asynchronously (``&``), itself or an enclosing list
    subshell: bool = False  # runs in a subshell, pipeline stage or command substitution
    captured: bool = False  # its output is captured by ``$(...)``: it computes a value

    @property
    def program(self) -> str:
        return posixpath.basename(self.name)

    @property
    def does_work(self) -> bool:
        return not self.captured and self.program not in NOT_WORK

    @property
    def exec_target(self) -> str | None:
        """For ``exec CMD``, the command exec replaces the shell with (None for redirections)."""
        if self.program != "exec":
            return None
        args = list(self.args)
        while args and args[0].startswith("-"):
            option = args.pop(0)
            if option == "--":
                break
            if option == "-a" and args:
                args.pop(0)
        return args[0] if args else None


class Trap(NamedTuple):
    """``trap ACTION SIGNALS`` whose signals include TERM."""

    loc: Loc
    signals: tuple[str, ...]
    action: str
    commands: tuple[Command, ...]  # what the action runs, through called functions
    # what the main shell runs after setting it (not in subshells or the background): where
    # the script goes when the handler returns
    following: tuple[Command, ...] = ()

    @property
    def work(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.does_work)

    @property
    def does_work(self) -> bool:
        return bool(self.work)


class ScriptFacts(NamedTuple):
    """What the analysis of one shell script found."""

    traps: tuple[Trap, ...] = ()  # TERM handlers the main shell sets, in order
    execs: tuple[Command, ...] = ()  # ``exec CMD`` in the main shell while a handler is set
    foreground: tuple[Command, ...] = ()  # blocking commands while a handler is set
    commands: tuple[Command, ...] = ()  # every command run (not trap actions), in order
    # why the script was not read (too deep, or too much once its functions are inlined);
    # then every other field is empty, which means "unknown", not "none"
    opaque: str = ""

    @property
    def sleeps(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.program == "sleep" and _sleeps_at_all(c))

    @property
    def work(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.does_work)


_ZERO = re.compile(r"0*(\.0*)?[smhd]?")


def _sleeps_at_all(command: Command) -> bool:
    """``sleep 0`` does not sleep; anything else (``sleep 5``, ``sleep "$T"``) does."""
    return not all(_ZERO.fullmatch(a) for a in command.args)


def sleeps_forever(command: Command) -> bool:
    return command.program == "sleep" and command.args[:1] in (("infinity",), ("inf",))

