"""Impact decides severity: what a rule reports about a pod that requests no accelerator (a
controller, a dashboard, a UI, a CPU Job) is one severity level below the rule's, and its
message says so. Which pods request one is :func:`pmanifest.kube.resources.requests_accelerator`
(the rules' one answer); the rules that weigh impact say so in their catalogue entries (PM101-
PM103 placement, PM401 and PM404 Job resilience)."""

from __future__ import annotations

from pmanifest.kube.resources import requests_accelerator
from pmanifest.kube.workloads import Workload
from pmanifest.rules import Hit

NO_ACCELERATOR = (" (its pods request no accelerator, so this is reported one severity level "
                  "below the rule's)")


def by_impact(w: Workload, hit: Hit, dependents: bool = False) -> Hit:
    """``hit`` one level lower when ``w``'s pods request no accelerator (``dependents``: nor
    do the other pods of its object, which it takes down with it); never for a template of a
    kind others run (``w.runs`` false), whose resources come from what runs it."""
    if not w.runs or requests_accelerator(w, dependents):
        return hit  # (a template others run, a trainer runtime, gets its resources from them:
        # a TrainJob's resourcesPerNode; what its pods will ask for cannot be told)
    return hit._replace(message=hit.message + NO_ACCELERATOR, lower=True)
