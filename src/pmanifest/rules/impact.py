"""Impact decides severity: what a rule reports about a pod that requests no accelerator (a
controller, a dashboard, a UI, a CPU Job) is one severity level below the rule's, and its
message says so. Which pods request one is :func:`pmanifest.kube.resources.requests_accelerator`
(the rules' one answer); the rules that weigh impact say so in their catalogue entries (PM101-
PM103 placement, PM401 and PM404 Job resilience)."""

from __future__ import annotations

from types import MappingProxyType

from pmanifest.kube.kinds import Runtimes, lookup
from pmanifest.kube.podtemplates import get
from pmanifest.kube.resources import requests_accelerator
from pmanifest.kube.workloads import Workload, mapping
from pmanifest.rules import Hit

# Kubeflow Trainer: the step a runtime's replicatedJob plays. A TrainJob fills in the trainer's
# resources (resourcesPerNode); the initializers' are as the runtime writes them.
ANCESTOR_STEP = "trainer.kubeflow.org/trainjob-ancestor-step"
INITIALIZERS = frozenset({"dataset-initializer", "model-initializer"})

CONTAINER_FIELDS = frozenset({"image", "command", "args", "resources"})
NO_ACCELERATOR = (" (its pods request no accelerator, so this is reported one severity level "
                  "below the rule's)")


def by_impact(w: Workload, hit: Hit, dependents: bool = False,
              runtimes: Runtimes = MappingProxyType({})) -> Hit:
    """``hit`` one level lower when ``w``'s pods request no accelerator (``dependents``: nor
    do the other pods of its object, which it takes down with it); never for a template of a
    kind others run (``w.runs`` false), whose resources come from what runs it, unless it is a
    step whose resources nothing fills in (a trainer runtime's dataset or model initializer).
    A template that holds no container gets its containers from the runtime its object names:
    when ``runtimes`` (the input's) holds it, that runtime's part answers for it."""
    if (not w.runs and not _initializer(w)) or requests_accelerator(w, dependents) \
            or supplied_accelerator(w, runtimes):
        return hit  # (a template others run, a trainer runtime's, gets its resources from
        # them: a TrainJob's resourcesPerNode; what its pods will ask for cannot be told)
    return hit._replace(message=hit.message + NO_ACCELERATOR, lower=True)


def supplied_accelerator(w: Workload, runtimes: Runtimes) -> bool:
    """Does the runtime ``w``'s object names ask for an accelerator in the part that supplies
    ``w``'s containers, ``w`` holding none (an OME engine that only sets its replicas, a KServe
    predictor with a model and no resources)?"""
    kind = lookup(w.group, w.kind)
    if not runtimes or kind is None or not kind.runtime_ref or not w.template.from_runtime \
            or holds_containers(w):
        return False
    name = get(w.doc.data, tuple(kind.runtime_ref.split(".")))
    part = w.template.from_runtime  # (or the part's own leader and workers, when the
    # runtime makes it multi-node: an OME runtime whose engineConfig has a leader)
    return isinstance(name, str) and any(
        accelerated for found, accelerated in runtimes.get((kind.group, name), {}).items()
        if found == part or found.startswith(part + " "))


def holds_containers(w: Workload) -> bool:
    """Does the template hold a container (at its kind's container keys, or a container-like
    mapping with an image, a command or resources: a KServe predictor's ``model``)?"""
    if next(w.containers(), None) is not None:
        return True
    return any(isinstance(v, dict) and not CONTAINER_FIELDS.isdisjoint(v)
               for v in w.pod.values())


def _initializer(w: Workload) -> bool:
    data = w.doc.data
    metas = [w.meta_path] if w.template.meta_also is None else \
        [w.meta_path, _also(w)]
    steps = [mapping(data, (*meta, "labels")).get(ANCESTOR_STEP) for meta in metas]
    return any(isinstance(step, str) and step in INITIALIZERS for step in steps)


def _also(w: Workload) -> tuple[str | int, ...]:
    """The replicatedJob's Job template metadata (``replicatedJobs[i].template.metadata``)."""
    return (*w.pod_path[:-3], "metadata")
