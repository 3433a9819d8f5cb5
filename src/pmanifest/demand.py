"""The GPU demand of one workload: GPUs a pod, pods at once, the pool it must run in, and what
a rollout adds.

- GPUs a pod: the ``nvidia.com/gpu`` limit (else request) of each container, as the scheduler
  counts a pod: the app containers and sidecars (init containers with ``restartPolicy:
  Always``) together, or the largest other init container if that is more.
- Pods at once: ``replicas`` (default 1) of a Deployment, ReplicaSet, ReplicationController or
  StatefulSet; ``parallelism`` (default 1, and no more than ``completions``) of a Job or a
  CronJob's Job; 1 for a Pod. DaemonSets run one pod a node and are left out.
- Pool: from the placement every rule shares: only preemptible nodes, only standard nodes, or
  either (not pinned: counted in neither pool's check).
- Rollout (Deployments with the RollingUpdate strategy, the default): ``maxSurge`` pods are
  added (default 25 % of replicas, rounded up) while ``maxUnavailable`` may be taken down first
  (default 25 %, rounded down). Recreate, StatefulSets and Jobs add none.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from pmanifest.document import Path
from pmanifest.workloads import JOB_SPEC_PATHS, Workload, get

GPU = "nvidia.com/gpu"
STANDARD, PREEMPTIBLE, EITHER = "standard", "preemptible", "either"
_REPLICATED = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")
_PERCENT = re.compile(r"([0-9]+)%\Z")
_WHOLE = re.compile(r"[0-9]+\Z")


@dataclass(frozen=True)
class Demand:
    label: str  # how messages name it, e.g. "Deployment ml/chat"
    pool: str  # STANDARD | PREEMPTIBLE | EITHER
    gpus: int  # a pod's GPUs
    pods: int  # pods at once
    gpus_path: Path  # where the largest GPU count is written (for positions)
    pods_path: Path  # where the pod count is written (or would be)
    surge: int = 0  # pods a rollout adds
    unavailable: int = 0  # pods a rollout may take down before adding any
    ref: Any = None  # the caller's handle (a Document, a spec workload)

    @property
    def total(self) -> int:
        return self.gpus * self.pods


def demand_of(workload: Workload, ref: Any = None, label: str | None = None) -> Demand | None:
    """The demand of a workload that asks for GPUs, None otherwise (or for a DaemonSet)."""
    if workload.kind == "DaemonSet" or not workload.builtin:
        return None  # custom resources' pod counts (replicas of groups, tasks) are not read yet
    gpus, gpus_path = pod_gpus(workload)
    placement = workload.placement
    if gpus <= 0 or not (placement.preemptible or placement.standard):
        return None
    pool = EITHER if placement.preemptible and placement.standard else (
        PREEMPTIBLE if placement.preemptible else STANDARD)
    pods, pods_path = _pods(workload)
    surge, unavailable = _rollout(workload, pods)
    doc = workload.doc
    if label is None:
        namespace = f"{doc.namespace}/" if doc.namespace else ""
        label = f"{workload.kind} {namespace}{doc.name or '?'}"
    return Demand(label, pool, gpus, pods, gpus_path, pods_path, surge, unavailable,
                  ref if ref is not None else doc)


def pod_gpus(workload: Workload) -> tuple[int, Path]:
    """GPUs the scheduler reserves for one pod, and where the deciding count is written."""
    running, running_path = 0, workload.pod_path
    init_max, init_path = 0, workload.pod_path
    for container in workload.containers():
        count, path = _container_gpus(container.data, container.path)
        if not count:
            continue
        sidecar = container.init and container.data.get("restartPolicy") == "Always"
        if container.init and not sidecar:
            if count > init_max:
                init_max, init_path = count, path
        else:
            running += count
            if path and running_path == workload.pod_path:
                running_path = path
    return (init_max, init_path) if init_max > running else (running, running_path)


def _container_gpus(container: dict[str, Any], path: Path) -> tuple[int, Path]:
    for section in ("limits", "requests"):
        value = get(container, ("resources", section, GPU))
        count = _whole(value)
        if count is not None:
            return count, (*path, "resources", section, GPU)
    return 0, ()


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and _WHOLE.match(value):
        return int(value)
    return None


def _pods(workload: Workload) -> tuple[int, Path]:
    if workload.kind in _REPLICATED:
        path: Path = ("spec", "replicas")
        replicas = _whole(get(workload.doc.data, path))
        return (1 if replicas is None else replicas), path
    job = JOB_SPEC_PATHS.get(workload.kind)
    if job is None:
        return 1, workload.pod_path
    parallelism = _whole(get(workload.doc.data, (*job, "parallelism")))
    completions = _whole(get(workload.doc.data, (*job, "completions")))
    pods = 1 if parallelism is None else parallelism
    if completions is not None:
        pods = min(pods, completions)
    return pods, (*job, "parallelism")


def _rollout(workload: Workload, replicas: int) -> tuple[int, int]:
    if workload.kind != "Deployment":
        return 0, 0
    strategy = get(workload.doc.data, ("spec", "strategy"))
    strategy = strategy if isinstance(strategy, dict) else {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0, 0
    rolling = strategy.get("rollingUpdate")
    rolling = rolling if isinstance(rolling, dict) else {}
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, math.ceil)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, math.floor)
    return surge, unavailable


def _scaled(value: Any, replicas: int, rounding: Any) -> int:
    """An IntOrString of a rolling update: N, or N% of the replicas rounded as Kubernetes
    does (up for maxSurge, down for maxUnavailable)."""
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if match:
            return int(rounding(int(match.group(1)) * replicas / 100))
    whole = _whole(value)
    return 0 if whole is None else whole
