"""Impact decides severity: what a rule reports about a pod that requests no accelerator (a
controller, a dashboard, a UI, a CPU Job) is one severity level below the rule's, and its
message says so. Which pods request one is :func:`pmanifest.kube.resources.requests_accelerator`
(the rules' one answer); the rules that weigh impact say so in their catalogue entries (PM101-
PM103 placement, PM401 and PM404 Job resilience)."""

from __future__ import annotations

from pmanifest.kube.resources import requests_accelerator
from pmanifest.kube.workloads import Workload, mapping
from pmanifest.rules import Hit

# Kubeflow Trainer: the step a runtime's replicatedJob plays. A TrainJob fills in the trainer's
# resources (resourcesPerNode); the initializers' are as the runtime writes them.
ANCESTOR_STEP = "trainer.kubeflow.org/trainjob-ancestor-step"
INITIALIZERS = frozenset({"dataset-initializer", "model-initializer"})

NO_ACCELERATOR = (" (its pods request no accelerator, so this is reported one severity level "
                  "below the rule's)")


def by_impact(w: Workload, hit: Hit, dependents: bool = False) -> Hit:
    """``hit`` one level lower when ``w``'s pods request no accelerator (``dependents``: nor
    do the other pods of its object, which it takes down with it); never for a template of a
    kind others run (``w.runs`` false), whose resources come from what runs it, unless it is a
    step whose resources nothing fills in (a trainer runtime's dataset or model initializer)."""
    if (not w.runs and not _initializer(w)) or requests_accelerator(w, dependents):
        return hit  # (a template others run, a trainer runtime's, gets its resources from
        # them: a TrainJob's resourcesPerNode; what its pods will ask for cannot be told)
    return hit._replace(message=hit.message + NO_ACCELERATOR, lower=True)


def _initializer(w: Workload) -> bool:
    data = w.doc.data
    metas = [w.meta_path] if w.template.meta_also is None else \
        [w.meta_path, _also(w)]
    return any(mapping(data, (*meta, "labels")).get(ANCESTOR_STEP) in INITIALIZERS
               for meta in metas)


def _also(w: Workload) -> tuple[str | int, ...]:
    """The replicatedJob's Job template metadata (``replicatedJobs[i].template.metadata``)."""
    return (*w.pod_path[:-3], "metadata")
