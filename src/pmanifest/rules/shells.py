"""Hits inside the scripts of a pod's containers, for the rules that read them (PM006,
PM201-PM203, PM301-PM306). What the scripts do, and whether the pod checkpoints at all, is read
once by :mod:`pmanifest.shell.pod`."""

from __future__ import annotations

from pmanifest.rules import Hit, Mention
from pmanifest.shell import Command, Trap
from pmanifest.shell.pod import Shell


def trap_hit(shell: Shell, trap: Trap | Command, message: str,
             mention: Trap | Command | None = None, at: int = 0) -> Hit:
    """A hit at ``trap`` (or a command) inside ``shell``'s script; ``mention``: the line of
    another trap, inserted into the message at ``at``."""
    assert shell.script_path is not None
    named = Mention(shell.script_path, mention.loc, at) if mention is not None else None
    return Hit(shell.script_path, message, inner=trap.loc, mention=named)
