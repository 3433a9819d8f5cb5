"""The run-time fields of a workload, validated (issue 14): environment from Secrets,
ConfigMaps and the downward API, probes, the rollout of serving Deployments, annotations,
the priority class and the Job knobs of sweeps. They use Kubernetes' own field names, so
the model keeps them in Kubernetes' shape and render lays them out as they are."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

# the spec keys of an env value that is not a plain string -> what each reads
ENV_SOURCES = {
    "secretKeyRef": "a key of a Secret",
    "configMapKeyRef": "a key of a ConfigMap",
    "fieldRef": "a field of the pod (downward API)",
    "resourceFieldRef": "a resource request or limit of the container",
}
ENV_FROM_SOURCES = ("secretRef", "configMapRef")
PROBE_KINDS = {"readiness": "readinessProbe", "liveness": "livenessProbe",
               "startup": "startupProbe"}
PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")
STRATEGY_TYPES = ("RollingUpdate", "Recreate")
# what an omitted rollout knob means for a serving Deployment (see `rollout_defaults`)
SCARCE_ROLLOUT = {"maxSurge": 0, "maxUnavailable": 1}  # 2+ replicas: the PDB's budget
SINGLE_ROLLOUT = {"maxSurge": 1, "maxUnavailable": 0}  # 1 replica: Kubernetes' own
MAX_INDEXES = 100_000  # the API server's bound on completions with backoffLimitPerIndex
ANNOTATIONS_MAX_BYTES = 256 * 1024  # the API server's bound on the annotations of an object


class EnvRef(NamedTuple):
    """An env value read at run time: ``source`` is its spec key (``ENV_SOURCES``) and
    ``ref`` that key's mapping, as Kubernetes spells it."""

    source: str
    ref: dict[str, Any]

    def value_from(self) -> dict[str, Any]:
        return {self.source: dict(self.ref)}


class Strategy(NamedTuple):
    """The Deployment strategy of a serving workload; knobs only with RollingUpdate."""

    type: str
    max_surge: int | str | None = None
    max_unavailable: int | str | None = None


class Runtime(NamedTuple):
    """A workload's run-time fields: env sources, probes, strategy, job knobs."""

    env_from: tuple[dict[str, Any], ...] = ()
    probes: Mapping[str, dict[str, Any]] = MappingProxyType({})  # readiness -> probe
    strategy: Strategy | None = None  # serving only
    annotations: Mapping[str, str] = MappingProxyType({})  # every object of the workload
    pod_annotations: Mapping[str, str] = MappingProxyType({})  # its pod template
    priority_class_name: str | None = None
    ttl_seconds_after_finished: int | None = None  # workers
    backoff_limit_per_index: int | None = None  # Indexed workers
    max_failed_indexes: int | None = None  # Indexed workers, with backoff_limit_per_index


def rollout_defaults(replicas: int) -> dict[str, int]:
    """The knobs of a serving rollout nobody set. With two or more replicas (there is a
    PodDisruptionBudget with maxUnavailable 1): replace one replica at a time without a
    surge pod, so a rollout never needs a spare GPU node and never takes down more than a
    drain may. With one replica: Kubernetes' own default (surge one pod, keep the old one
    serving until the new one is ready; the rollout waits while there is no room)."""
    return dict(SCARCE_ROLLOUT if replicas >= 2 else SINGLE_ROLLOUT)
