"""The JSON Schema of the spec (draft 2020-12): every field with its description and
default, for validation, ``pmanifest schema`` and editors."""

from __future__ import annotations

from typing import Any

from pmanifest.io.limits import INT64_MAX
from pmanifest.kube.contract import ROLES
from pmanifest.kube.profile import DEFAULT_PROFILE, profile_names
from pmanifest.render.spec.distributed import distributed_schema
from pmanifest.render.spec.model import (
    API_VERSION,
    COMPUTE,
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_MARGIN_SECONDS,
    DEFAULT_PROFILE_DATA,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    MODES,
    SHARED_VOLUME_NAME,
    TRIGGERS,
    VOLUME_SOURCES,
)
from pmanifest.render.spec.pod import pod_template_schema, workload_pod_fields
from pmanifest.render.spec.runtime_fields import runtime_shared_fields, runtime_workload_fields
from pmanifest.render.spec.schema_parts import ARGV_ITEM as _ARGV_ITEM
from pmanifest.render.spec.schema_parts import QUANTITY_VALUE
from pmanifest.render.spec.schema_parts import STRING_MAP as _STRING_MAP
from pmanifest.render.spec.schema_parts import count as _count
from pmanifest.render.spec.schema_parts import field as _f

_QUANTITIES = {"type": "object", "additionalProperties": QUANTITY_VALUE}
_TOLERATION = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "key": _f({"type": "string"}, "Taint key the toleration matches; omitted (with "
                  "operator Exists) means every taint."),
        "operator": _f({"enum": ["Exists", "Equal"]}, "Exists or Equal.", "Equal"),
        "value": _f({"type": "string"}, "Taint value (with operator Equal).", ""),
        "effect": _f({"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
                     "Taint effect to tolerate; omitted means all effects."),
        "tolerationSeconds": _f({"type": "integer", "minimum": 0, "maximum": INT64_MAX},
                                "How long a NoExecute taint is tolerated; omitted means "
                                "forever."),
    },
}


def _object_name(what: str) -> dict[str, Any]:
    return _f({"type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN.pattern},
              f"Name of the {what} to mount (DNS-1123 subdomain), in the workload's namespace. "
              "One source per volume.")


def _volume_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "mountPath"],
        "properties": {
            "name": _f({"type": "string", "maxLength": 63, "pattern": DNS1123_LABEL.pattern},
                       "Volume name (DNS-1123 label), unique in the pod; "
                       f"{SHARED_VOLUME_NAME!r} is the shared volume's."),
            "mountPath": _f({"type": "string", "pattern": "^/"},
                            "Where the main container mounts it: an absolute path without "
                            "'..', unique in the container, and neither the shared volume's "
                            "mountPath nor inside it."),
            "readOnly": _f({"type": "boolean"}, "Mount it read-only.", False),
            "subPath": _f({"type": "string", "minLength": 1},
                          "Mount only this relative path inside the volume (no '..'); "
                          "omitted means the whole volume."),
            "claimName": _object_name("PersistentVolumeClaim"),
            "configMap": _object_name("ConfigMap"),
            "secret": _object_name("Secret"),
            "emptyDir": _f({
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "medium": _f({"enum": ["Memory"]}, "Memory: a tmpfs counted against the "
                                 "container's memory (e.g. /dev/shm for NCCL); omitted means "
                                 "the node's disk."),
                    "sizeLimit": _f(QUANTITY_VALUE,
                                    "Most the volume may hold, e.g. 64Gi; omitted means no "
                                    "limit of its own."),
                },
            }, "Scratch space created empty with the pod and deleted with it: {} or "
               "{medium: Memory, sizeLimit: 64Gi}. Never for checkpoints."),
        },
        # exactly one source; `_describe` words the error from these keys
        "oneOf": [{"required": [key]} for key in VOLUME_SOURCES],
        "description": "An extra volume of the main container, with exactly one source: "
                       "claimName, configMap, secret or emptyDir. hostPath is not offered: "
                       "it is the node's local disk, gone when a preemptible node is "
                       "reclaimed, and it exposes the node to the pod.",
    }


def _shared_fields() -> dict[str, Any]:
    """Fields allowed both in ``defaults`` and on a workload (the workload wins; volumes are
    appended)."""
    return {**_placement_fields(), **runtime_shared_fields(),
            "podTemplate": pod_template_schema()}


def _placement_fields() -> dict[str, Any]:
    return {
        "namespace": _f({"type": "string", "maxLength": 63, "pattern": DNS1123_LABEL.pattern},
                        "Namespace of every object of the workload (DNS-1123 label); "
                        "omitted means the namespace of kubectl's context."),
        "image": _f({"type": "string", "minLength": 1},
                    "Container image, e.g. ghcr.io/acme/trainer:1.4. Required on every "
                    "workload unless given in defaults."),
        "labels": _f(_STRING_MAP, "Extra labels on every object and pod template "
                     "(merged; the workload's own win over defaults).", {}),
        "nodeSelector": _f(_STRING_MAP, "Extra node labels the pods require. The profile's "
                           "preemptible label is set by `compute`, not here.", {}),
        "tolerations": _f({"type": "array", "items": _TOLERATION},
                          "Pod tolerations (e.g. for providers that taint spot nodes).", []),
        "serviceAccountName": _f({"type": "string", "minLength": 1},
                                 "Service account the pods run as; omitted means the "
                                 "namespace's default account."),
        "volumes": _f({"type": "array", "items": _volume_schema()},
                      "Extra volumes mounted in the main container after the shared volume. "
                      "A workload's list is appended to the one in defaults; names and "
                      "mountPaths must stay unique.", []),
    }


def _checkpoint_schema() -> dict[str, Any]:
    return _f({
        "type": "object",
        "additionalProperties": False,
        "required": ["trigger"],
        "properties": {
            "command": _f({"type": ["array", "string"], "items": _ARGV_ITEM, "minItems": 1,
                           "minLength": 1},
                          "Checkpoint command: an argv list, or a string run by /bin/sh -c. "
                          "Required with trigger: preStop and mode: command; not allowed "
                          "with mode: signal."),
            "trigger": _f({"enum": list(TRIGGERS)},
                          "What starts the checkpoint on preemption: `sigterm` (the "
                          "termination supervisor gets the kubelet's SIGTERM and acts by "
                          "`mode`) or `preStop` (a preStop exec hook runs the command; then "
                          "the supervisor stops the main). Exactly one; never both."),
            "mode": _f({"enum": list(MODES)},
                       "With trigger: sigterm, what the supervisor does on SIGTERM: `signal` "
                       "forwards it to the main's processes, whose own handler checkpoints "
                       "(PyTorch Lightning, HF Trainer, Ray Train, torchrun); `command` runs "
                       "checkpoint.command once while the main still runs, then stops the "
                       "main. Omitted means `command` when a command is given, else "
                       "`signal`."),
            "gracePeriodSeconds": _f({"type": "integer", "minimum": 1, "maximum": INT64_MAX},
                                     "terminationGracePeriodSeconds of the pods; at most the "
                                     "profile's cap on preemptible compute. Omitted means "
                                     "the cap (the whole drain window; "
                                     f"{DEFAULT_GRACE_SECONDS} s with the default profile, "
                                     f"{DEFAULT_PROFILE_DATA.name}).",
                                     DEFAULT_GRACE_SECONDS),
            "marginSeconds": _f({"type": "integer", "minimum": 1, "maximum": INT64_MAX},
                                "How long before the kubelet's SIGKILL the supervisor gives "
                                "up: gracePeriodSeconds - marginSeconds after SIGTERM it "
                                "SIGKILLs whatever still runs and exits 143, the code the "
                                "Job ignores (with trigger: preStop, the main gets "
                                "marginSeconds to stop after the hook). Must leave at least "
                                "1 s.", DEFAULT_MARGIN_SECONDS),
            "expectedSeconds": _f({"type": "integer", "minimum": 1, "maximum": INT64_MAX},
                                  "How long the checkpoint takes at most (the hook, the "
                                  "command or the main's handler), e.g. 90 for a ~10B-"
                                  "parameter model. Checked: expectedSeconds + marginSeconds "
                                  "must fit in gracePeriodSeconds. Omitted means not "
                                  "checked."),
            "dir": _f({"type": "string", "minLength": 1},
                      "Checkpoint directory; must lie under cluster.sharedVolume.mountPath. "
                      "Exported to the container as CHECKPOINT_DIR."),
        },
    }, "How the workload checkpoints when its node is preempted; omitted means no checkpoint "
       "(the pods get Kubernetes' default grace period, and a worker's supervisor just stops "
       "the main on SIGTERM).")


def _workload_schema() -> dict[str, Any]:
    props: dict[str, Any] = {
        "name": _f({"type": "string", "maxLength": 63, "pattern": DNS1123_LABEL.pattern},
                   "Name of the workload and of its objects (DNS-1123 label, at most 63 "
                   "characters)."),
        "role": _f({"enum": list(ROLES)}, "worker -> Job; coordinator and serving -> "
                   "Deployment kept off preemptible nodes.", "worker"),
        "compute": _f({"enum": list(COMPUTE)}, "Node class. Workers default to preemptible; "
                      "coordinator and serving default to standard and can never be "
                      "preemptible.", "preemptible"),
        "command": _f({"type": "array", "items": _ARGV_ITEM, "minItems": 1},
                      "Main command (argv). Required for workers, which run under the "
                      "termination supervisor (the image's ENTRYPOINT is not known to "
                      "pmanifest), and with trigger: sigterm. Omitted means the image's "
                      "ENTRYPOINT."),
        "args": _f({"type": "array", "items": _ARGV_ITEM},
                   "Arguments appended to command. Without command (serving and coordinator "
                   "only), the arguments of the image's ENTRYPOINT, as vllm/vllm-openai and "
                   "TGI images expect.", []),
        "gpus": _f(_count(0), "GPUs per pod (nvidia.com/gpu limit).", 0),
        "parallelism": _f(_count(1), "Worker pods running at once (Job parallelism).", 1),
        "completions": _f(_count(1), "Successful pods needed (Job completions); when set the "
                          "Job is Indexed, so each index is one shard that a replacement pod "
                          "resumes.", 1),
        "replicas": _f(_count(0), "Deployment replicas: serving defaults to 2, coordinator to "
                       "1.", 2),
        "ports": _f({"type": "array", "items": {"type": "integer", "minimum": 1,
                                                "maximum": 65535},
                     "uniqueItems": True},
                    "TCP ports of the main container; coordinator and serving also get a "
                    "Service.", []),
        "resources": _f({
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "requests": _f(_QUANTITIES, "Resource requests, e.g. {cpu: 8, memory: 64Gi}.",
                               {}),
                "limits": _f(_QUANTITIES, "Resource limits; nvidia.com/gpu comes from gpus.",
                             {}),
            },
        }, "Main container resources besides GPUs. With gpus and no CPU or memory here, "
           "requests of 4 CPU and 32Gi a GPU (never BestEffort).", {}),
        "backoffLimit": _f(_count(0),
                           "Job retries for genuine failures (preemptions are not counted).",
                           DEFAULT_BACKOFF_LIMIT),
        "activeDeadlineSeconds": _f({"type": "integer", "minimum": 1, "maximum": INT64_MAX},
                                    "Workers: the most seconds the Job may run in all, "
                                    "preempted attempts included (preemptions do not count "
                                    "against backoffLimit, so without it a Job that keeps "
                                    "being preempted runs unbounded). Omitted means no "
                                    "limit. A Ray worker's RayJob gets it as its own "
                                    "activeDeadlineSeconds; a RayCluster refuses it."),
        "checkpoint": _checkpoint_schema(),
        "distributed": distributed_schema(),
    }
    props.update(_shared_fields())
    props.update(runtime_workload_fields())
    props.update(workload_pod_fields())
    return {"type": "object", "additionalProperties": False, "required": ["name"],
            "properties": props, "description": "One workload."}


def _build_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://pmanifest.io/schemas/spec-v1.json",
        "title": "pmanifest spec",
        "description": "A small spec that `pmanifest render` turns into Kubernetes Jobs, "
                       "Deployments, Services and PodDisruptionBudgets that survive preemption.",
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "workloads"],
        "properties": {
            "apiVersion": _f({"const": API_VERSION}, "Spec format version.", API_VERSION),
            "cluster": _f({
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "profile": _f({"type": "string", "pattern": "^[a-z][a-z0-9-]*$",
                                   "examples": profile_names()},
                                  "Provider profile: the label, taint and grace-period cap of "
                                  "its preemptible nodes; built in, or one of the config's "
                                  "profiles:. --profile overrides it.",
                                  DEFAULT_PROFILE),
                    "kubernetesVersion": _f({"type": "string", "pattern": r"^v?\d+\.\d+(\.\d+)?$"},
                                            "Kubernetes version whose schema validates the "
                                            "output (quote it: \"1.31\"). --kubernetes-version "
                                            "overrides it.", "1.31"),
                    "sharedVolume": _f({
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["claimName", "mountPath"],
                        "properties": {
                            "claimName": _f({"type": "string", "minLength": 1},
                                            "PersistentVolumeClaim of the shared file system."),
                            "mountPath": _f({"type": "string", "pattern": "^/"},
                                            "Where it is mounted in every container."),
                        },
                    }, "The persistent shared volume, mounted in every workload; "
                       "checkpoints must go here. Omitted means none (then no checkpoint.dir)."),
                },
            }, "Cluster facts.", {}),
            "defaults": _f({"type": "object", "additionalProperties": False,
                            "properties": _shared_fields()},
                           "Values merged into every workload.", {}),
            "workloads": _f({"type": "array", "minItems": 1, "items": _workload_schema()},
                            "The workloads to render, in order (at least one)."),
        },
    }


SPEC_SCHEMA: dict[str, Any] = _build_schema()


def schema_json() -> str:
    import json

    return json.dumps(SPEC_SCHEMA, indent=2) + "\n"


