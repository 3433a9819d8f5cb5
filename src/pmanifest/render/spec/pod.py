"""The pod-level fields of a workload (issue 26): its QoS class (``qos``), how serving replicas
spread over nodes (``spread``), and the ``podTemplate`` overlay for every other pod field.

The overlay is only parsed here (a mapping of ``metadata`` labels and annotations, and a
``spec``): the Kubernetes schema of the target version validates its ``spec`` once render
knows the version, and render refuses what would undo the preemption contract
(:mod:`pmanifest.render.overlay_checks`) and merges it (:mod:`pmanifest.render.overlay`)."""

from __future__ import annotations

from typing import Any, Protocol

from pmanifest.errors import PmanifestError
from pmanifest.kube.resources import GPU, GUARANTEED, QOS_RESOURCES, quantity
from pmanifest.loader.positions import Path
from pmanifest.render.spec.model import Overlay, Spread
from pmanifest.render.spec.schema_parts import STRING_MAP, closed, count, field

HOSTNAME = "kubernetes.io/hostname"
WHEN_UNSATISFIABLE = ("ScheduleAnyway", "DoNotSchedule")
DEFAULT_SPREAD = Spread(HOSTNAME, "ScheduleAnyway", 1)
QOS_CLASSES = ("Burstable", GUARANTEED)


class Failing(Protocol):
    def fail(self, path: Path, message: str, *, value: bool = True) -> PmanifestError: ...


def pod_template_schema() -> dict[str, Any]:
    return field(closed({
        "metadata": field(closed({
            "labels": field(STRING_MAP, "Extra labels of the pods (not of the objects; "
                            "labels: does both).", {}),
            "annotations": field(STRING_MAP, "Extra annotations of the pods (as "
                                 "podAnnotations).", {}),
        }), "Pod template metadata: labels and annotations only.", {}),
        "spec": field({"type": "object"},
                      "A partial pod spec, checked against the Kubernetes schema of the "
                      "target version (unknown fields are errors) and merged over the one "
                      "render makes as kubectl's strategic merge does: containers, "
                      "initContainers, volumes, volumeMounts, env, ports, imagePullSecrets, "
                      "topologySpreadConstraints (the lists the schema gives a patch merge "
                      "key) by that key, other lists appended, mappings merged. The main "
                      "container is the one named after the workload; any other name adds a "
                      "container (a sidecar). Refused: what the spec decides itself (the "
                      "grace period, restartPolicy, placement on the preemptible label, the "
                      "main container's command, args, image, resources, probes and preStop "
                      "hook, anything render already wrote).", {}),
    }), "Everything else of the pod template (securityContext, sidecars, init containers, "
        "imagePullSecrets, runtimeClassName, extra affinity, topologySpreadConstraints, pod "
        "labels and annotations). In defaults and on a workload: defaults' is merged first.",
        {})


def workload_pod_fields() -> dict[str, Any]:
    return {
        "qos": field({"enum": list(QOS_CLASSES)},
                     "Guaranteed: the main container's CPU and memory limits equal its requests "
                     "(resources.requests, else resources.limits, else the per-GPU default), "
                     "the QoS class evicted last; every sidecar must then limit CPU and memory "
                     "at its requests too. Omitted (or Burstable): requests and limits as "
                     "given; a workload with GPUs and no CPU or memory of its own gets "
                     "requests of 4 CPU and 32Gi a GPU, so it is never BestEffort."),
        "spread": field({**closed({
            "topologyKey": field({"type": "string", "minLength": 1},
                                 "Node label whose values the replicas spread across.",
                                 HOSTNAME),
            "whenUnsatisfiable": field({"enum": list(WHEN_UNSATISFIABLE)},
                                       "ScheduleAnyway: a preference; DoNotSchedule: a "
                                       "replica stays Pending rather than skew more.",
                                       "ScheduleAnyway"),
            "maxSkew": field(count(1), "Most replicas one topology value may have above "
                             "another.", 1),
        }), "type": ["object", "boolean"], "if": {"type": "boolean"}, "then": {"const": False}},
           "Serving only: one topologySpreadConstraint over the workload's replicas. Omitted "
           "with two or more replicas: {topologyKey: kubernetes.io/hostname, "
           "whenUnsatisfiable: ScheduleAnyway, maxSkew: 1}, so one node's loss does not take "
           "every replica; false: none."),
    }


def spread_of(checker: Failing, path: Path, raw: dict[str, Any], role: str,
              replicas: int) -> Spread | None:
    if "spread" in raw and role != "serving":
        raise checker.fail((*path, "spread"), f"spread applies to serving workloads, not "
                           f"{role}; remove it or change role", value=False)
    given = raw.get("spread")
    if given is False or role != "serving":
        return None
    if given is None:
        return DEFAULT_SPREAD if replicas >= 2 else None
    return Spread(given.get("topologyKey", HOSTNAME),
                  given.get("whenUnsatisfiable", "ScheduleAnyway"), given.get("maxSkew", 1))


def check_qos(checker: Failing, path: Path, raw: dict[str, Any]) -> str | None:
    """``qos: Guaranteed`` needs a CPU and a memory amount, and limits equal to requests."""
    qos = raw.get("qos")
    if qos != GUARANTEED:
        return None
    resources = raw.get("resources", {})
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    for name in QOS_RESOURCES:
        if name in requests and name in limits and \
                quantity(requests[name]) != quantity(limits[name]):
            raise checker.fail((*path, "resources", "limits", name), f"qos: Guaranteed needs "
                               f"the {name} limit equal to its request, and "
                               f"resources.limits {name} is {limits[name]} while the request "
                               f"is {requests[name]}; make them equal or remove the limit "
                               "(it is then set from the request)")
        if name not in requests and name not in limits and not raw.get("gpus"):
            raise checker.fail((*path, "qos"), f"qos: Guaranteed needs a {name} amount, and "
                               f"the workload has neither resources.requests {name} nor gpus "
                               "(whose default requests it would use); add resources.requests "
                               f"{name}")
    return GUARANTEED


def overlays_of(path: Path, raw: dict[str, Any], defaults: dict[str, Any]) -> tuple[Overlay, ...]:
    out = []
    if "podTemplate" in defaults:
        out.append(Overlay(("defaults", "podTemplate"), defaults["podTemplate"]))
    if "podTemplate" in raw:
        out.append(Overlay((*path, "podTemplate"), raw["podTemplate"]))
    return tuple(out)


def main_resources(gpus: int, resources: dict[str, dict[str, str | int]], qos: str | None
                   ) -> dict[str, Any]:
    """The main container's resources: GPUs as limits, CPU and memory as given, else the
    per-GPU requests; with qos Guaranteed, CPU and memory limits equal to their requests."""
    from pmanifest.kube.resources import gpu_requests

    requests: dict[str, Any] = dict(resources.get("requests", {}))
    limits: dict[str, Any] = dict(resources.get("limits", {}))
    if gpus:
        for name, amount in gpu_requests(gpus).items():
            if name not in requests and name not in limits:
                requests[name] = amount
        limits[GPU] = gpus
    if qos == GUARANTEED:
        for name in QOS_RESOURCES:  # check_qos made sure one of them is there
            requests[name] = limits[name] = requests.get(name, limits.get(name))
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out
