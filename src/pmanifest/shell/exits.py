"""With which status a script ends when its TERM handler runs: the path a preemption takes.

What each shell does (measured with dash 0.5.12, bash 5.2 also with --posix, busybox 1.35 sh,
the handler interrupting ``wait`` as in ``cmd & wait``):

- ``exit 0`` exits 0, ``exit 143`` exits 143 everywhere;
- ``exit $?`` after a command of the handler exits with that command's status: 0 when the
  checkpoint (or ``wait "$child"`` for a child that handled TERM) succeeded;
- a bare ``exit`` after a command: bash exits with that command's status (0 on success);
  dash and busybox sh, as POSIX asks, with the status from before the handler, 143 when it
  interrupted ``wait``. A bare ``exit`` as the handler's first command exits 143 everywhere;
- a handler without ``exit`` returns: the interrupted ``wait`` returns 143 and the script
  goes on; it ends with its next ``exit`` or, without one, with the status of its last
  command (143 if that is the ``wait``).

The analysis does not follow branches: a handler or a path with an ``exit`` whose status is
not 0 (``exit 143``, ``exit "$status"``) is given the benefit of the doubt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pmanifest.shell.facts import Command, Trap

# the shells whose bare ``exit`` in a trap uses the status from before the trap (POSIX)
POSIX_EXIT = frozenset({"dash", "ash", "busybox"})
_STATUS = ("$?", "${?}")


class ZeroExit(NamedTuple):
    """Why the preemption path ends with status 0: at ``command`` (the ``exit``, or the last
    command the script runs), reached from the handler itself or after it ``returns``."""

    command: Command
    returns: bool
    reason: str  # e.g. "after `python`, 0 whenever `python` succeeds"; "" for `exit 0`

    @property
    def code(self) -> str:
        """The command as written, e.g. ``exit $?`` or ``echo``."""
        if self.command.program == "exit":
            return " ".join(("exit", *self.command.args))
        return self.command.program


def zero_exit(trap: Trap, shell: str | None) -> ZeroExit | None:
    """The reason ``trap``'s preemption path exits 0 under ``shell`` (the program that runs
    the script: sh, bash, dash, ash or busybox), or None when it does not."""
    exits = [i for i, c in enumerate(trap.commands) if c.program == "exit" and not c.subshell]
    if not exits:
        return _returning(trap.following)
    for i in exits:
        before = trap.commands[i - 1] if i > 0 else None
        found = _zero(trap.commands[i], before, shell, in_handler=True)
        if found is not None:
            return found
    return None


def _zero(command: Command, before: Command | None, shell: str | None, *, in_handler: bool
          ) -> ZeroExit | None:
    """Whether ``exit [ARG]`` after ``before`` exits 0 on the preemption path, inside the
    handler or (``in_handler=False``) after it returned."""
    returns = not in_handler
    arg = command.args[0] if command.args else None
    if arg is not None and arg.isdigit() and int(arg) == 0:
        return ZeroExit(command, returns, "")
    if before is None or before.program == "false":
        return None  # the status from before: 143 after an interrupted wait
    name = before.program
    if arg in _STATUS or (arg is None and not in_handler):
        return ZeroExit(command, returns, f"after `{name}`, 0 whenever `{name}` succeeds")
    if arg is None and (shell or "sh") not in POSIX_EXIT:
        return ZeroExit(command, returns, f"after `{name}`: bash exits with its status, 0 "
                                          "when it succeeds (dash and busybox sh exit 143 "
                                          "there)")
    return None


def _returning(following: Sequence[Command]) -> ZeroExit | None:
    """A handler that returns: the interrupted ``wait`` gives 143, then the script goes on."""
    path = list(following)
    waits = [i for i, c in enumerate(path) if c.program == "wait"]
    if waits:
        path = path[waits[0] + 1:]
    exits = [i for i, c in enumerate(path) if c.program == "exit"]
    if not exits:
        if not path or path[-1].program in ("wait", "false"):
            return None
        return ZeroExit(path[-1], True, "and its status, 0 when it succeeds, is the pod's")
    found = [_zero(path[i], path[i - 1] if i > 0 else None, None, in_handler=False)
             for i in exits]
    if any(f is None for f in found):
        return None  # one exit is not 0: it may be the one preemptions take
    return found[0]
