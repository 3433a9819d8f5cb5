"""Rules: grace (see policies/rules-placement.yaml for PM201's metadata).

PM202 and PM203 live in rules/checkpoint.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Context, Hit, rule

GRACE_FIELD = "terminationGracePeriodSeconds"


@rule("PM201")
def grace_period_over_limit(ctx: Context) -> Iterator[Hit]:
    w, profile = ctx.workload, ctx.profile
    grace = w.pod.get(GRACE_FIELD)
    # A string, float or bool here is a schema error (PM002), not a grace period to judge.
    if not isinstance(grace, int) or isinstance(grace, bool) or not w.placement.preemptible:
        return
    cap = profile.grace_period_cap
    if grace > cap:
        yield Hit((*w.pod_path, GRACE_FIELD),
                  f"{GRACE_FIELD} is {grace}, above the {cap} s cap of preemptible nodes "
                  f"({profile.name} profile): the node is removed {profile.drain_window_seconds} s "
                  f"after the notice whatever the pod is doing; set it to {cap} or less and "
                  "finish the checkpoint inside that window")
