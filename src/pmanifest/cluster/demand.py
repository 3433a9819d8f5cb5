"""The GPU demand of one workload: GPUs a pod, pods at once, the pool it must run in, and what
a rollout adds.

- GPUs a pod: the ``nvidia.com/gpu`` limit (else request) of each container, as the scheduler
  counts a pod: the app containers and sidecars (init containers with ``restartPolicy:
  Always``) together, or the largest other init container if that is more.
- Pods at once: what the table of workload kinds counts for the template
  (:mod:`pmanifest.kube.kinds`, ``pods``): ``replicas`` (default 1) of a Deployment,
  ReplicaSet, ReplicationController or StatefulSet; ``parallelism`` (default 1, and no more
  than ``completions``) of a Job or a CronJob's Job; 1 for a Pod; a JobSet replicatedJob's
  ``replicas`` x its Job's parallelism; a KubeRay worker group's ``replicas`` (default 0, kept
  within ``minReplicas``..``maxReplicas``) x ``numOfHosts``, 1 head and 1 submitter; a
  Kubeflow replica's ``replicas`` (default 1); a LeaderWorkerSet's ``replicas`` groups of
  ``size`` pods, the leader among them; a Volcano task's ``replicas`` (default 0). An Argo
  template's pods are not counted (when they run is the workflow's steps), only their size;
  nor are kinds that only describe pods for others (TrainingRuntime, WorkflowTemplate,
  PodTemplate) nor the overrides of a TrainJob (merged into a runtime the manifest does not
  show). DaemonSets run one pod a node and are left out.
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

from pmanifest.kube.podtemplates import resolve
from pmanifest.kube.resources import pod_gpus, whole_count
from pmanifest.kube.workloads import Workload, get
from pmanifest.loader.positions import Path

STANDARD, PREEMPTIBLE, EITHER = "standard", "preemptible", "either"
_PERCENT = re.compile(r"([0-9]+)%\Z")


@dataclass(frozen=True)
class Demand:
    """A workload's GPU demand: which pool, how many pods, GPUs a pod."""

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
    """The demand of a workload that asks for GPUs, None otherwise (or for a DaemonSet, a
    template for others to run, a TrainJob's override)."""
    if workload.kind == "DaemonSet" or not workload.runs or workload.template.partial:
        return None
    gpus, gpus_path = pod_gpus(workload)
    placement = workload.placement
    if gpus <= 0 or not (placement.preemptible or placement.standard):
        return None
    pool = EITHER if placement.preemptible and placement.standard else (
        PREEMPTIBLE if placement.preemptible else STANDARD)
    pods, pods_path = _pods(workload)
    surge, unavailable = _rollout(workload, pods)
    return Demand(label or _label(workload), pool, gpus, pods, gpus_path, pods_path, surge,
                  unavailable, ref if ref is not None else workload.doc)


def _label(workload: Workload) -> str:
    """``Deployment ml/chat``, ``JobSet ml/pretrain replicatedJob 'workers'``."""
    meta = get(workload.doc.data, (*workload.owner, "metadata"))
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else "?"
    namespace = meta.get("namespace")
    namespace = f"{namespace}/" if isinstance(namespace, str) and namespace else ""
    label = f"{workload.kind_title or workload.kind} {namespace}{name}"
    if workload.part:
        label += f" {workload.part}" + (f" {workload.name!r}" if workload.name else "")
    return label


def _pods(workload: Workload) -> tuple[int, Path]:
    """Pods at once, and where the first count is written (or would be)."""
    template = workload.template
    if not template.counted:
        return 0, workload.pod_path
    if not template.pods:
        return 1, workload.pod_path
    data, start = workload.doc.data, len(workload.owner)
    pods, first = 1, None
    for count in template.pods:
        path = resolve(count.path, workload.pod_path, start)
        first = path if first is None else first
        value = whole_count(get(data, path))
        value = count.default if value is None else value
        for bound, keep in ((count.low, max), (count.high, min)):
            where = None if bound is None else resolve(bound, workload.pod_path, start)
            limit = None if where is None else whole_count(get(data, where))
            if limit is not None:
                value = keep(value, limit)
        pods *= max(0, value - count.minus)
    assert first is not None
    return pods, first


def _rollout(workload: Workload, replicas: int) -> tuple[int, int]:
    if workload.kind != "Deployment":
        return 0, 0
    strategy = get(workload.doc.data, (*workload.owner, "spec", "strategy"))
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
    whole = whole_count(value)
    return 0 if whole is None else whole
