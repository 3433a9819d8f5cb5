"""``distributed``: a worker that runs on several nodes and survives losing some of them.

Its JSON Schema (with a description and default for every field), the frozen model render
reads, and the checks a schema cannot express (which fields go with which framework, what
the main command may be, names short enough for the objects derived from them).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from pmanifest.errors import PmanifestError
from pmanifest.loader.positions import Path
from pmanifest.render.spec.model import (
    DEFAULT_JOBSET_RESTARTS,
    DEFAULT_JOIN_TIMEOUT,
    DEFAULT_LAST_CALL_TIMEOUT,
    DEFAULT_MAX_RESTARTS,
    DEFAULT_RDZV_PORT,
    DNS1123_LABEL,
    Distributed,
    GcsFaultTolerance,
)
from pmanifest.render.spec.schema_parts import INT32_MAX
from pmanifest.render.spec.schema_parts import field as _f

FRAMEWORKS = ("torchrun", "ray")
OUTPUTS = {"torchrun": ("job", "jobset"), "ray": ("rayjob", "raycluster")}
ALL_OUTPUTS = ("job", "jobset", "rayjob", "raycluster")
DEFAULT_MIN_NODES = 1
MAX_NAME_LENGTH = 40  # the longest derived name: <name>-rendezvous-0-0 (JobSet pod hostname)
# only for the frameworks named: the others refuse them
TORCHRUN_ONLY = ("rdzvPort", "maxRestarts", "joinTimeoutSeconds", "lastCallTimeoutSeconds",
                 "nprocPerNode", "jobSetMaxRestarts")
RAY_ONLY = ("rayVersion", "gcsFaultTolerance")
RAYCLUSTER_DEADLINE = ("activeDeadlineSeconds bounds a run, and a RayCluster ({}) is no run: it "
                       "lives until deleted; use output: rayjob, or remove activeDeadlineSeconds")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def _secret_ref() -> dict[str, Any]:
    return _f({
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "key"],
        "properties": {
            "name": _f({"type": "string", "pattern": DNS1123_LABEL.pattern}, "Secret name."),
            "key": _f({"type": "string", "minLength": 1}, "Key of the password in it."),
        },
    }, "Secret holding the Redis password (read by KubeRay, never written into the output).")


def _gcs_schema() -> dict[str, Any]:
    return _f({
        "type": "object",
        "additionalProperties": False,
        "required": ["redisAddress"],
        "properties": {
            "redisAddress": _f({"type": "string", "minLength": 1},
                               "host:port of a Redis that is not on preemptible nodes."),
            "redisPasswordSecret": _secret_ref(),
            "externalStorageNamespace": _f({"type": "string", "minLength": 1},
                                           "Key prefix in Redis; omitted means KubeRay's (the "
                                           "RayCluster's UID)."),
        },
    }, "Ray only. GCS fault tolerance (KubeRay 1.3+): the head keeps the cluster's metadata in "
       "Redis, so when the head pod is restarted the workers stay and running jobs go on. "
       "Omitted means none: losing the head ends every job on the cluster (the head runs on "
       "standard nodes, so that happens on a drain or a crash, not on a preemption).")


def distributed_schema() -> dict[str, Any]:
    props: dict[str, Any] = {
        "framework": _f({"enum": list(FRAMEWORKS)},
                        "torchrun: elastic PyTorch (torchrun --nnodes MIN:MAX with a c10d "
                        "rendezvous on standard nodes); ray: a KubeRay cluster (head on "
                        "standard nodes, workers on the workload's compute).", "torchrun"),
        "output": _f({"enum": list(ALL_OUTPUTS)},
                     "What is rendered. torchrun: job (an Indexed Job, a headless Service and "
                     "a rendezvous Deployment with its Service; the default) or jobset (one "
                     "JobSet, jobset.x-k8s.io/v1alpha2). ray: rayjob (the default) or "
                     "raycluster (ray.io/v1). `render --distributed-output` overrides it."),
        "minNodes": _f({"type": "integer", "minimum": 1, "maximum": INT32_MAX},
                       "Fewest nodes (pods) training runs on: below maxNodes, training goes on "
                       "while preempted nodes are replaced.", DEFAULT_MIN_NODES),
        "maxNodes": _f({"type": "integer", "minimum": 1, "maximum": 1000},
                       "Most nodes (pods): the Job's parallelism and completions, the Ray "
                       "worker group's replicas."),
        "nprocPerNode": _f({"type": "integer", "minimum": 1, "maximum": INT32_MAX},
                           "torchrun only. Training processes per node; omitted means gpus "
                           "(1 without GPUs)."),
        "maxRestarts": _f({"type": "integer", "minimum": 0, "maximum": INT32_MAX},
                          "torchrun only. Worker-group restarts each torchrun allows: every "
                          "preemption of another node costs the survivors one (a node "
                          "joining costs none); a new pod starts with the full count.",
                          DEFAULT_MAX_RESTARTS),
        "rdzvPort": _f({"type": "integer", "minimum": 1, "maximum": 65535},
                       "torchrun only. Port of the rendezvous store.", DEFAULT_RDZV_PORT),
        "joinTimeoutSeconds": _f({"type": "integer", "minimum": 1, "maximum": INT32_MAX},
                                 "torchrun only. How long a rendezvous waits for minNodes "
                                 "before the survivors give up (exit 1, counted as a "
                                 "failure).", DEFAULT_JOIN_TIMEOUT),
        "lastCallTimeoutSeconds": _f({"type": "integer", "minimum": 0, "maximum": INT32_MAX},
                                     "torchrun only. Once minNodes have joined, how long to "
                                     "wait for more before training starts.",
                                     DEFAULT_LAST_CALL_TIMEOUT),
        "jobSetMaxRestarts": _f({"type": "integer", "minimum": 0, "maximum": INT32_MAX},
                                "torchrun with output jobset only. Restarts of the whole "
                                "JobSet for genuine failures (preemptions never count).",
                                DEFAULT_JOBSET_RESTARTS),
        "rayVersion": _f({"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
                         "Ray only. Ray version of the image (KubeRay's rayVersion)."),
        "gcsFaultTolerance": _gcs_schema(),
    }
    return _f({"type": "object", "additionalProperties": False, "required": ["maxNodes"],
               "properties": props},
              "Run this worker on several nodes that can be preempted one at a time: torchrun "
              "elastic or a Ray cluster. The workload's command is the training command "
              "(e.g. [python, train.py]); checkpoints belong in checkpoint.dir. Only for "
              "role: worker; parallelism and completions come from maxNodes.")


Fail = Callable[..., PmanifestError]


def parse_distributed(raw: dict[str, Any], workload: dict[str, Any], path: Path,
                      command: tuple[str, ...] | None, fail: Fail) -> Distributed:
    """The model of ``raw`` (the schema-valid ``distributed`` of ``workload`` at ``path``);
    ``fail(path, message, value=...)`` makes the error to raise."""
    dpath = (*path, "distributed")
    framework = raw.get("framework", "torchrun")
    _check_workload(workload, path, fail)
    for key in RAY_ONLY if framework == "torchrun" else TORCHRUN_ONLY:
        if key in raw:
            other = "ray" if framework == "torchrun" else "torchrun"
            raise fail((*dpath, key), f"{key} applies to framework: {other}, not {framework}; "
                       "remove it", value=False)
    output = _output(raw, workload, framework, path, fail)
    max_nodes = raw["maxNodes"]
    min_nodes = raw.get("minNodes", DEFAULT_MIN_NODES)
    if min_nodes > max_nodes:
        raise fail((*dpath, "minNodes"), f"minNodes {min_nodes} is above maxNodes "
                   f"{max_nodes}; use at most {max_nodes}")
    if command is None:
        raise fail(path, "a distributed worker needs the training command; add command: "
                   "[python, train.py, ...]", value=False)
    program = command if framework == "ray" else torchrun_program(command, path, fail)
    gcs = raw.get("gcsFaultTolerance")
    return Distributed(
        framework=framework, output=output, min_nodes=min_nodes, max_nodes=max_nodes,
        nproc_per_node=raw.get("nprocPerNode", workload.get("gpus") or 1), program=program,
        max_restarts=raw.get("maxRestarts", DEFAULT_MAX_RESTARTS),
        rdzv_port=raw.get("rdzvPort", DEFAULT_RDZV_PORT),
        join_timeout_seconds=raw.get("joinTimeoutSeconds", DEFAULT_JOIN_TIMEOUT),
        last_call_timeout_seconds=raw.get("lastCallTimeoutSeconds", DEFAULT_LAST_CALL_TIMEOUT),
        jobset_max_restarts=raw.get("jobSetMaxRestarts", DEFAULT_JOBSET_RESTARTS),
        ray_version=raw.get("rayVersion"),
        gcs=None if gcs is None else GcsFaultTolerance(
            gcs["redisAddress"],
            (gcs["redisPasswordSecret"]["name"], gcs["redisPasswordSecret"]["key"])
            if "redisPasswordSecret" in gcs else None,
            gcs.get("externalStorageNamespace")),
    )


def _output(raw: dict[str, Any], workload: dict[str, Any], framework: str, path: Path,
            fail: Fail) -> str:
    """The output ``raw`` asks for, once the fields that go with another output are refused."""
    dpath = (*path, "distributed")
    output: str = raw.get("output", OUTPUTS[framework][0])
    if output not in OUTPUTS[framework]:
        raise fail((*dpath, "output"), f"output {output!r} is not made by framework "
                   f"{framework}; use {' or '.join(OUTPUTS[framework])}")
    if output == "raycluster" and "activeDeadlineSeconds" in workload:
        raise fail((*path, "activeDeadlineSeconds"), RAYCLUSTER_DEADLINE.format(
            "output: raycluster"), value=False)
    if "jobSetMaxRestarts" in raw and output != "jobset":
        raise fail((*dpath, "jobSetMaxRestarts"), "jobSetMaxRestarts applies to output: "
                   "jobset only; remove it", value=False)
    return output


def _check_workload(workload: dict[str, Any], path: Path, fail: Fail) -> None:
    role = workload.get("role", "worker")
    if role != "worker":
        raise fail((*path, "distributed"), f"distributed applies to role: worker, not {role}; "
                   "the rendezvous host or Ray head is rendered with it", value=False)
    for key in ("parallelism", "completions"):
        if key in workload:
            raise fail((*path, key), f"{key} of a distributed worker comes from "
                       "distributed.maxNodes; remove it", value=False)
    if len(workload["name"]) > MAX_NAME_LENGTH:
        raise fail((*path, "name"), f"name {workload['name']!r} is too long for a distributed "
                   f"worker (its objects and pod hostnames add suffixes such as "
                   f"'-rendezvous-0-0'); use at most {MAX_NAME_LENGTH} characters")


def torchrun_program(command: tuple[str, ...], path: Path, fail: Fail) -> tuple[str, ...]:
    """What follows torchrun's own flags for the training ``command``: ``script args`` for
    ``python script args``, ``-m module args`` for ``python -m module args``, and
    ``--no-python program args`` for any other program."""
    first = posixpath.basename(command[0])
    cpath = (*path, "command")
    if first == "torchrun" or command[1:3] == ("-m", "torch.distributed.run"):
        raise fail(cpath, "command is the training command that torchrun runs (e.g. [python, "
                   "train.py]); distributed renders torchrun and its flags, so remove them")
    if not _PYTHON.match(first):
        return ("--no-python", *command)
    rest = command[1:]
    if rest[:1] == ("-m",) and len(rest) >= 2:
        return rest
    if not rest or rest[0].startswith("-"):
        raise fail(cpath, "torchrun runs `python SCRIPT ARGS` or `python -m MODULE ARGS` "
                   "(without interpreter options); write command: [python, train.py, ...]")
    return rest
