"""Do the workloads fit the cluster? GPU demand against a cluster request or read.

The cluster's side (``Capacity``) comes from a create/update request, a saved command line or a
cluster read: standard GPUs (``num_gpus``), the preemptible target (``num_preemptible_gpus``,
or ``desired_preemptible_gpus`` in a read), what is allocated (``allocated_preemptible_gpus``,
a read only), and GPUs a node for the ``gpu_type`` (``gpu_nodes``). A field the request leaves
out (an update keeps its current value) is unknown, and its check is skipped.

What is checked (``shortfalls``), each attached to the workload it names:

- ``pod-too-large``: a pod asks for more GPUs than one node has: it never schedules;
- ``standard``: the pods that must run on standard nodes (serving, coordinators, anything kept
  off preemptible nodes) do not all fit on the standard nodes at once. Pods are packed onto
  nodes exactly (``packing``): a pod's GPUs all come from one node;
- ``rollout``: a Deployment's rolling update adds ``maxSurge`` pods before it takes any down
  (``maxUnavailable`` 0, the default below 4 replicas), and they do not fit beside the rest:
  the rollout cannot progress. Deployments are assumed to roll one at a time;
- ``preemptible-target``: pods pinned to preemptible nodes need more than the preemptible
  target can ever provide; ``preemptible-allocated``: they fit the target but not what is
  allocated now. Both are warnings: preemptible capacity is not guaranteed anyway.

Pods that may run on either kind of node are counted in neither pool.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pmanifest.cluster.demand import PREEMPTIBLE, STANDARD, Demand
from pmanifest.cluster.gpu_nodes import gpus_per_node
from pmanifest.cluster.packing import fits_counts
from pmanifest.cluster.request import READ, ClusterRequest

POD_TOO_LARGE, STANDARD_SHORT, ROLLOUT = "pod-too-large", "standard", "rollout"
TARGET_SHORT, ALLOCATED_SHORT = "preemptible-target", "preemptible-allocated"


@dataclass(frozen=True)
class Capacity:
    """A cluster's GPUs by pool, as its request or read gives them."""

    file: str
    gpu_type: str | None
    per_node: int
    standard: int | None  # standard GPUs
    target: int | None  # preemptible target
    allocated: int | None  # preemptible GPUs live (a read)

    def describe(self, gpus: int, kind: str = "") -> str:
        nodes, partial = divmod(gpus, self.per_node)
        text = f"{gpus} {kind}GPUs ({nodes} node{'' if nodes == 1 else 's'} of {self.per_node}"
        return text + (f" and one of {partial})" if partial else ")")


@dataclass(frozen=True)
class Shortfall:
    """A demand that does not fit its pool, and by how much."""

    kind: str
    demand: Demand
    message: str


def capacity_of(request: ClusterRequest) -> Capacity:
    gpu_type = request.get("gpu_type")
    gpu_type = gpu_type if isinstance(gpu_type, str) else None
    target_field = "desired_preemptible_gpus" if request.kind == READ else "num_preemptible_gpus"
    return Capacity(request.file, gpu_type, gpus_per_node(gpu_type),
                    _count(request.get("num_gpus")), _count(request.get(target_field)),
                    _count(request.get("allocated_preemptible_gpus")))


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def shortfalls(demands: Sequence[Demand], capacity: Capacity) -> list[Shortfall]:
    found = [Shortfall(POD_TOO_LARGE, d, f"{d.label}: a pod asks for {d.gpus} GPUs but a "
                       f"{capacity.gpu_type or 'GPU'} node has {capacity.per_node}: it can "
                       "never be scheduled") for d in demands if d.gpus > capacity.per_node]
    placeable = [d for d in demands if d.gpus <= capacity.per_node]
    standard = [d for d in placeable if d.pool == STANDARD]
    if capacity.standard is not None:
        found += _standard(standard, capacity, capacity.standard)
    preemptible = [d for d in placeable if d.pool == PREEMPTIBLE]
    if capacity.target is not None and preemptible:
        found += _preemptible(preemptible, capacity, capacity.target)
    return found


def _fits(demands: Sequence[Demand], gpus: int, capacity: Capacity, extra: int = 0,
          extra_gpus: int = 0) -> bool:
    pods: Counter[int] = Counter()
    for d in demands:
        pods[d.gpus] += d.pods
    pods[extra_gpus] += extra
    nodes, partial = divmod(gpus, capacity.per_node)
    # undecided (beyond the search budget) counts as fitting: no finding without proof
    return fits_counts(pods, nodes, capacity.per_node, partial) is not False


def _standard(demands: list[Demand], capacity: Capacity, gpus: int) -> list[Shortfall]:
    if not demands:
        return []
    if not _fits(demands, gpus, capacity):
        last = _first_overflow(demands, gpus, capacity)
        need = sum(d.total for d in demands)
        how = "do not all fit" if need > gpus else "do not pack (a pod's GPUs come from one node)"
        message = (f"{last.label}: the pods kept off preemptible nodes need {need} GPUs "
                   f"({_pods(demands)}) and {how} on the {capacity.describe(gpus, 'standard ')} of "
                   f"{capacity.file}")
        return [Shortfall(STANDARD_SHORT, last, message)]
    found = []
    for d in demands:
        if d.surge and not d.unavailable and not _fits(demands, gpus, capacity, d.surge,
                                                         d.gpus):
            found.append(Shortfall(ROLLOUT, d, (
                f"{d.label}: a rolling update adds {d.surge} pod{'s' * (d.surge != 1)} of "
                f"{d.gpus} GPUs (maxSurge) before it removes any (maxUnavailable 0), and they "
                f"do not fit beside the other standard pods on the "
                f"{capacity.describe(gpus, 'standard ')} of {capacity.file}: the rollout cannot "
                "progress")))
    return found


def _first_overflow(demands: list[Demand], gpus: int, capacity: Capacity) -> Demand:
    """The workload whose pods, added in order, first overflow the pool (bisection: once a
    prefix overflows, every longer one does)."""
    low, high = 1, len(demands)  # demands[:high] overflows
    while low < high:
        middle = (low + high) // 2
        if _fits(demands[:middle], gpus, capacity):
            low = middle + 1
        else:
            high = middle
    return demands[high - 1]


def _pods(demands: Sequence[Demand]) -> str:
    parts = [f"{d.pods} x {d.gpus}" for d in demands]
    return ", ".join(parts) + " GPUs a pod" if len(parts) < 6 else f"{len(parts)} workloads"


def _preemptible(demands: list[Demand], capacity: Capacity, target: int) -> list[Shortfall]:
    need = f"{sum(d.total for d in demands)} GPUs ({_pods(demands)}) at once"
    if not _fits(demands, target, capacity):
        at = _first_overflow(demands, target, capacity)
        what = ("no preemptible target (0 GPUs)" if target == 0
                else f"a preemptible target of {capacity.describe(target)}")
        return [Shortfall(TARGET_SHORT, at, f"{at.label}: the pods pinned to preemptible nodes "
                          f"need {need}, and {capacity.file} has {what}: some stay Pending")]
    allocated = capacity.allocated
    if allocated is not None and not _fits(demands, allocated, capacity):
        at = _first_overflow(demands, allocated, capacity)
        return [Shortfall(ALLOCATED_SHORT, at, f"{at.label}: the pods pinned to preemptible "
                          f"nodes need {need}; the target holds them, but {capacity.file} has "
                          f"{allocated} allocated now: some stay Pending until capacity frees "
                          "up")]
    return []
