"""``pmanifest render --cluster FILE``: do the rendered workloads fit the cluster?

Every rendered object (Deployments and Jobs, a distributed worker's JobSet, RayJob or
RayCluster, its rendezvous Deployment and Services) goes through the same demand and capacity
model as ``lint --cluster`` (``demand``, ``capacity``), and each shortfall points back at the
spec workload it was rendered for. Objects without GPUs (Services, the CPU-only rendezvous
store, a Ray head) ask for no GPU capacity:

- what cannot fit on standard capacity is refused like any spec error, one line and exit 2,
  nothing on stdout: a pod larger than a node (at its ``gpus``), serving and coordinators
  that do not fit on the standard GPUs (at the workload's ``replicas``, ``parallelism`` or
  ``distributed.maxNodes``, else its ``gpus``), a
  rolling update with no room to surge (at its ``strategy``, else ``replicas``: a single
  serving replica surges by default);
- preemptible shortfalls (more than the target, or than what a read says is allocated) are
  warnings on stderr, ``spec.yaml:LINE:COL: warning: PM513[slug] ...`` like render's other
  warnings (the rule ``lint --cluster`` reports them under), and the output is still printed:
  preemptible capacity is never guaranteed, so a shortfall is a fact to know, not an error.
"""

from __future__ import annotations

from typing import Any

from pmanifest.catalogue import lookup
from pmanifest.cluster.capacity import (
    POD_TOO_LARGE,
    ROLLOUT,
    STANDARD_SHORT,
    capacity_of,
    shortfalls,
)
from pmanifest.cluster.demand import Demand, demand_of
from pmanifest.cluster.request import ClusterRequest
from pmanifest.kube.document import Document
from pmanifest.kube.profile import Profile
from pmanifest.kube.workloads import workloads_of
from pmanifest.loader.positions import Path, Positions
from pmanifest.render.spec import Spec, WorkloadSpec
from pmanifest.rules.capacity import rules_by_kind

_HINTS = {
    POD_TOO_LARGE: "lower gpus to what one node has",
    STANDARD_SHORT: "raise num_gpus in the cluster request, or lower replicas or gpus",
    ROLLOUT: "raise num_gpus in the cluster request, or let the rollout take a replica down "
             "first (strategy: {maxSurge: 0, maxUnavailable: 1}, the default from 2 replicas)",
}


_PODS: tuple[Path, ...] = (("replicas",), ("parallelism",), ("distributed", "maxNodes"))
_GPUS: Path = ("gpus",)


def check_fit(spec: Spec, owned: list[tuple[WorkloadSpec, dict[str, Any]]],
              request: ClusterRequest, profile: Profile) -> tuple[str, ...]:
    """Refuse (SpecError) what cannot fit on standard capacity; the preemptible shortfalls
    as warnings, ``spec.yaml:LINE:COL: warning: ...``."""
    found = shortfalls(_demands(spec, owned, profile), capacity_of(request))
    for shortfall in found:
        if shortfall.kind in _HINTS:
            workload: WorkloadSpec = shortfall.demand.ref
            fields = {POD_TOO_LARGE: (_GPUS,), ROLLOUT: (("strategy",), *_PODS, _GPUS)}.get(
                shortfall.kind, (*_PODS, _GPUS))
            raise spec.error(_field(spec, workload, fields),
                             f"{shortfall.message}; {_HINTS[shortfall.kind]}")
    warnings = []
    for shortfall in found:
        workload = shortfall.demand.ref
        pos = spec.positions.value_at(_field(spec, workload, (*_PODS, _GPUS)))
        meta = lookup(rules_by_kind()[shortfall.kind])
        tag = f"{meta.id}[{meta.slug}] " if meta is not None else ""
        warnings.append(f"{spec.file}:{pos.line}:{pos.column}: warning: {tag}"
                        f"{shortfall.message}")
    return tuple(warnings)


def _demands(spec: Spec, owned: list[tuple[WorkloadSpec, dict[str, Any]]],
             profile: Profile) -> list[Demand]:
    """The GPU demand of every rendered object, each named by its spec workload (and the
    part of the object, for a JobSet's, RayJob's or RayCluster's pod templates)."""
    found = []
    for workload, obj in owned:
        for view in workloads_of(Document(spec.file, 0, obj, Positions()), profile):
            label = f"workload {workload.name}"
            if view.part:
                label += f" ({view.title})"
            demand = demand_of(view, workload, label)
            if demand is not None:
                found.append(demand)
    return found


def _field(spec: Spec, workload: WorkloadSpec, fields: tuple[Path, ...]) -> Path:
    """The first of ``fields`` the workload writes, else the workload itself."""
    for field in fields:
        path: Path = (*workload.path, *field)
        if path in spec.positions.keys:
            return path
    return workload.path
