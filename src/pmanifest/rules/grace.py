"""PM201: a grace period above the provider's cap on a pod that can run on preemptible nodes
(see policies/rules-checkpoint.yaml). The cap and the drain window come from the profile.

Decisions (documented in the rule's catalogue entry, shown by ``explain``):

- An explicit ``terminationGracePeriodSeconds`` equal to Kubernetes' default (30 s) is judged
  like an omitted one: writing the default down asks for nothing the pod would not get anyway.
- DaemonSets (role ``daemon``) are not checked, by any grace rule (PM201-PM203: the
  catalogue's ``roles:``, applied by the engine): they run on every node by design, standard
  ones included, where the longer grace period is honoured; nothing can keep them off
  preemptible nodes, and lowering the value changes nothing there (the node goes at the
  drain deadline whatever the pod asked for).
- Pods that do not checkpoint are not checked (:func:`pmanifest.shell.pod.checkpointing`:
  workers do; other roles when a container traps TERM to do work or names a checkpoint
  directory): a serving pod's long grace period is the time it needs to drain, which it gets
  on standard nodes; that it can run on preemptible nodes at all is PM101/PM102's finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeGuard

from pmanifest.kube.contract import KUBERNETES_DEFAULT_GRACE
from pmanifest.rules import Context, Fix, Hit, rule
from pmanifest.shell.pod import checkpointing


@rule("PM201")
def grace_period_over_limit(ctx: Context) -> Iterator[Hit]:
    w, profile = ctx.workload, ctx.profile
    grace = w.pod.get("terminationGracePeriodSeconds")
    cap = profile.grace_period_cap
    if not w.placement.preemptible or not _integral(grace):
        return
    if grace <= cap or grace == KUBERNETES_DEFAULT_GRACE:
        return
    if not checkpointing(w).checkpoints:
        return  # a serving pod's drain budget, honoured on standard nodes (PM101/PM102 place it)
    path = (*w.pod_path, "terminationGracePeriodSeconds")
    yield Hit(path,
              f"terminationGracePeriodSeconds is {grace}, above the {cap} s cap of preemptible "
              f"nodes ({profile.name} profile): the node is removed "
              f"{profile.drain_window_seconds} s after the notice whatever the pod is doing; "
              f"set it to {cap} or less and finish the checkpoint inside that window",
              fix=Fix(path, cap))  # the most of the window the pod can have


def _integral(value: object) -> TypeGuard[int | float]:
    """An integer, or a float with an integral value (JSON Schema's integer); a string or bool
    here is a schema error (PM002), not a grace period to judge."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
