"""Read the shell scripts a manifest runs, with a real parser (tree-sitter-bash).

Regular expressions cannot tell a ``trap`` from the text of a here-document, a quoted string
or a function that is never called. This module parses each script once and reports *facts*
the checkpoint rules reason about:

- the SIGTERM traps the main shell sets (``TERM``, ``SIGTERM``, ``15``, in any case), with the
  commands their action runs (an action that calls a shell function is read through the
  function's body), whether that is checkpoint work, and with which status the script ends
  on the path a preemption takes (``exits``: ``exit 0``, ``exit $?`` after a command, a bare
  ``exit`` under bash, a handler that returns into ``wait; exit 0``);
- ``exec CMD`` in the main shell after a trap (the trap is discarded with the shell);
- commands of the main shell that run in the foreground after a trap (the trap waits for them);
- every command the script runs (for preStop hooks: does it work, does it sleep).

Positions are 0-based (row, column) inside the script; :func:`script_pos` maps them to the
1-based file position through the YAML scalar that holds the script. May import ``kube``
and ``loader``.
"""

from __future__ import annotations

from pmanifest.shell.argv import (
    PreStop,
    container_argv,
    container_script,
    prestop_of,
    script_index,
    script_shell,
    supervised_script,
    supervisor_mode,
)
from pmanifest.shell.exits import ZeroExit, zero_exit
from pmanifest.shell.facts import Command, Loc, ScriptFacts, Trap
from pmanifest.shell.paths import written_paths
from pmanifest.shell.positions import script_pos
from pmanifest.shell.walker import analyse, literal

__all__ = ["Command", "Loc", "PreStop", "ScriptFacts", "Trap", "ZeroExit", "analyse",
           "container_argv", "container_script", "literal", "prestop_of", "script_index",
           "script_pos", "script_shell", "supervised_script", "supervisor_mode",
           "written_paths", "zero_exit"]
