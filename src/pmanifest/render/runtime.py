"""The template context of the run-time fields (issue 14): env entries and envFrom, probes,
the Deployment strategy, annotations, priorityClassName and the Job knobs. The spec already
holds them in Kubernetes' shape; this lays them out where the templates expect them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pmanifest.render.spec import Spec, WorkloadSpec
from pmanifest.render.spec.runtime import PROBE_KINDS, EnvRef, Strategy
from pmanifest.render.spec.schema_parts import INT32_MAX
from pmanifest.schema.kubernetes import definition_fields, version_tuple

# Job fields of Indexed Jobs that exist in the schema of 1.28 as alpha (off by default, and the
# API server drops a disabled field without a word) and are on by default from 1.29 (beta)
PER_INDEX_FIELDS = {"backoffLimitPerIndex": "backoff_limit_per_index",
                    "maxFailedIndexes": "max_failed_indexes"}
PER_INDEX_SINCE = (1, 29)
# Deployment.spec.progressDeadlineSeconds when omitted, and what a rollout step needs on top
# of its probes (scheduling, pulling a multi-gigabyte serving image)
PROGRESS_DEADLINE_DEFAULT = 600
PROGRESS_MARGIN = 300


def check_runtime_support(spec: Spec, version: str) -> None:
    """Refuse Job knobs the target version does not have: missing from its Job schema, or
    only there as an alpha field that is off by default."""
    fields = definition_fields(version, "jobspec-batch-v1")
    since = ".".join(str(part) for part in PER_INDEX_SINCE)
    for w in spec.workloads:
        for key, attribute in PER_INDEX_FIELDS.items():
            if getattr(w.runtime, attribute) is None:
                continue
            if key not in fields:
                why = f"the Job schema of Kubernetes {version} has no {key}"
            elif version_tuple(version) < PER_INDEX_SINCE:
                why = (f"{key} is alpha in Kubernetes {version}, off by default, and the API "
                       "server drops a disabled field without a word")
            else:
                continue
            raise spec.error((*w.path, key), f"{why}; set cluster.kubernetesVersion or "
                             f"--kubernetes-version to {since} or later, or remove {key}",
                             value=False)


def env_entries(env: dict[str, str | EnvRef]) -> list[dict[str, Any]]:
    """The container's ``env`` list, in the spec's order."""
    return [{"name": name, "valueFrom": value.value_from()} if isinstance(value, EnvRef)
            else {"name": name, "value": value} for name, value in env.items()]


def runtime_context(w: WorkloadSpec) -> dict[str, Any]:
    """``runtime`` in the templates: what goes into the pod, its container, the Deployment
    and the Job besides what ``context`` decides."""
    rt = w.runtime
    return {
        "pod_annotations": dict(rt.pod_annotations),
        "priority_class_name": rt.priority_class_name,
        "env_from": [dict(item) for item in rt.env_from],
        # container field name -> probe, in Kubernetes' order
        "probes": {PROBE_KINDS[kind]: rt.probes[kind] for kind in PROBE_KINDS
                   if kind in rt.probes},
        "strategy": _strategy(rt.strategy),
        "progress_deadline_seconds": progress_deadline(rt.probes),
        "ttl_seconds_after_finished": rt.ttl_seconds_after_finished,
        "backoff_limit_per_index": rt.backoff_limit_per_index,
        "max_failed_indexes": rt.max_failed_indexes,
    }


def progress_deadline(probes: Mapping[str, dict[str, Any]]) -> int | None:
    """progressDeadlineSeconds for a Deployment whose replicas may start more slowly than the
    default 600 s allows, or None (keep the default).

    A rollout step waits for one new replica to pass its startup probe and then its readiness
    probe; past the deadline without progress the Deployment reports ProgressDeadlineExceeded
    and ``kubectl rollout status`` fails while the replica is still loading its weights. The
    budget is what the probes allow (Kubernetes' defaults for omitted fields) plus
    PROGRESS_MARGIN, at most INT32_MAX (the field is int32; probes at their own int32 limits
    allow decades, and so does a deadline of 2^31 - 1 s)."""
    startup = probes.get("startup")
    if startup is None:
        return None
    budget = (startup.get("initialDelaySeconds", 0)
              + startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3))
    readiness = probes.get("readiness")
    if readiness is not None:
        budget += readiness.get("periodSeconds", 10) * readiness.get("successThreshold", 1)
    needed = min(int(budget) + PROGRESS_MARGIN, INT32_MAX)
    return needed if needed > PROGRESS_DEADLINE_DEFAULT else None


def _strategy(strategy: Strategy | None) -> dict[str, Any] | None:
    if strategy is None:
        return None
    if strategy.type != "RollingUpdate":
        return {"type": strategy.type}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": strategy.max_surge,
                                                       "maxUnavailable": strategy.max_unavailable}}


def with_annotations(metadata: dict[str, Any], w: WorkloadSpec) -> dict[str, Any]:
    """The objects' metadata, with the workload's annotations after its labels."""
    if not w.runtime.annotations:
        return metadata
    return {**metadata, "annotations": dict(w.runtime.annotations)}
