"""PM203: a preStop hook that sleeps on a pod that can run on preemptible nodes and
checkpoints (see policies/rules-checkpoint.yaml).

PM203 applies to pods that checkpoint: worker-role pods, and other roles whose containers trap
TERM to do work or name a checkpoint directory; a serving pod's preStop sleep drains
connections from its load balancer and costs no checkpoint anything. The shells of a pod are
read as the other checkpoint rules read them (:mod:`pmanifest.rules.checkpoint`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from pmanifest.rules import Context, Hit, rule
from pmanifest.shell import Command, ScriptFacts, analyse
from pmanifest.shell.pod import Shell, checkpointing, shells_of


@rule("PM203")
def prestop_sleep(context: Context) -> Iterable[Hit]:
    workload = context.workload
    if not workload.placement.preemptible:
        return
    if not checkpointing(workload).checkpoints:
        return  # a serving pod's drain sleep (load balancer) is no checkpoint's loss
    for shell in shells_of(workload):
        hit = _prestop_sleep(context, shell)
        if hit is not None:
            yield hit


def _held_by(facts: ScriptFacts) -> tuple[Command, ...]:
    """The sleeps the hook waits through: a sleep in the background (a watchdog's) holds it
    only where the script waits for it, with a bare ``wait`` or ``wait $!``."""
    waits_for_all = any(c.program == "wait" and (not c.args or c.args[0] in ("$!", "${!}"))
                        for c in facts.commands)
    return tuple(c for c in facts.sleeps if waits_for_all or not c.background)


def _prestop_sleep(context: Context, shell: Shell) -> Hit | None:
    prestop = shell.prestop
    if prestop is None:
        return None
    message = (f"preStop hook of container {shell.container.name!r} sleeps: it burns part of "
               "the grace period the checkpoint needs, and the node is reclaimed as soon as "
               "the pods exit anyway")
    if prestop.action == "sleep":
        return Hit((*shell.prestop_path, "sleep"), message)
    if prestop.script is not None:
        sleeps = _held_by(analyse(prestop.script[1]))
        if sleeps:
            path = (*shell.container.path, *prestop.script[0])
            return Hit(path, message, inner=sleeps[0].loc)
    elif prestop.argv and posixpath.basename(prestop.argv[0]) == "sleep":
        return Hit((*shell.prestop_path, "exec", "command", 0), message)
    return None
