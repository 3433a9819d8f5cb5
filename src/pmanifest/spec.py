"""The pmanifest spec: its JSON Schema, its semantic checks and the validated model.

``load_spec(text, file)`` is the only way in. It parses with the safe loader, validates against
``SPEC_SCHEMA`` (draft 2020-12), then applies the checks a schema cannot express (placement
rules of the preemptible contract, checkpoint paths on the shared volume, name uniqueness).
Every problem becomes a ``SpecError`` with the file, the 1-based line and column of the
offending key or value, and a message of the form ``what is wrong; what to do``.
"""

from __future__ import annotations

import difflib
import functools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pmanifest.document import Path, Pos, Positions, dotted
from pmanifest.errors import PmanifestError, SpecError
from pmanifest.loader import YamlProblem, load_single
from pmanifest.profile import DEFAULT_PROFILE, Profile, get_profile, profile_names

API_VERSION = "pmanifest/v1"
ROLES = ("worker", "coordinator", "serving")
COMPUTE = ("preemptible", "standard")
TRIGGERS = ("sigterm", "preStop")
_DEFAULT = get_profile(DEFAULT_PROFILE)  # for the defaults the schema documents
DEFAULT_GRACE_SECONDS = _DEFAULT.grace_period_cap  # the whole window of the active profile
DEFAULT_BACKOFF_LIMIT = 3
DEFAULT_REPLICAS = {"serving": 2, "coordinator": 1}
MIN_JOB_VERSION = (1, 26)  # podFailurePolicy is on by default from 1.26 (beta), GA in 1.31

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
RESERVED_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/managed-by", "pmanifest.io/role")
SHARED_VOLUME_NAME = "shared"  # the pod volume of cluster.sharedVolume
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# spec key of each volume source -> what it mounts (for messages)
VOLUME_SOURCES = {"claimName": "a PersistentVolumeClaim", "configMap": "a ConfigMap",
                  "secret": "a Secret", "emptyDir": "an emptyDir"}


# --- JSON Schema -----------------------------------------------------------------------------

def _f(schema: dict[str, Any], description: str, default: Any = None) -> dict[str, Any]:
    """A field: its schema plus the description and default every field carries."""
    out = dict(schema)
    out["description"] = description
    if default is not None:
        out["default"] = default
    return out


_ARGV_ITEM = {"type": ["string", "integer"], "description": "One argument (integers are "
              "passed as their decimal text; quote anything else that is not a string)."}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_ENV = {"type": "object", "additionalProperties": {"type": ["string", "integer"]}}
_QUANTITY = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
_QUANTITIES = {"type": "object", "additionalProperties": {"type": ["string", "integer"],
                                                          "pattern": _QUANTITY}}
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
        "tolerationSeconds": _f({"type": "integer", "minimum": 0},
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
                    "sizeLimit": _f({"type": ["string", "integer"], "pattern": _QUANTITY},
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
    return {
        "namespace": _f({"type": "string", "maxLength": 63, "pattern": DNS1123_LABEL.pattern},
                        "Namespace of every object of the workload (DNS-1123 label); "
                        "omitted means the namespace of kubectl's context."),
        "image": _f({"type": "string", "minLength": 1},
                    "Container image, e.g. ghcr.io/acme/trainer:1.4. Required on every "
                    "workload unless given in defaults."),
        "labels": _f(_STRING_MAP, "Extra labels on every object and pod template "
                     "(merged; the workload's own win over defaults).", {}),
        "env": _f(_ENV, "Environment variables of the main container, name -> value.", {}),
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
        "required": ["command", "trigger"],
        "properties": {
            "command": _f({"type": ["array", "string"], "items": _ARGV_ITEM, "minItems": 1,
                           "minLength": 1},
                          "Checkpoint command: an argv list, or a string run by /bin/sh -c."),
            "trigger": _f({"enum": list(TRIGGERS)},
                          "What runs the checkpoint on preemption: `sigterm` (a /bin/sh wrapper "
                          "traps TERM, checkpoints once, stops the main process, exits 143) or "
                          "`preStop` (a preStop exec hook; the main command is left as is). "
                          "Exactly one; never both."),
            "gracePeriodSeconds": _f({"type": "integer", "minimum": 1},
                                     "terminationGracePeriodSeconds of the pods; at most the "
                                     "profile's cap on preemptible compute. Omitted means "
                                     "the cap (the whole drain window; "
                                     f"{DEFAULT_GRACE_SECONDS} s with the default profile, "
                                     f"{_DEFAULT.name}).",
                                     DEFAULT_GRACE_SECONDS),
            "dir": _f({"type": "string", "minLength": 1},
                      "Checkpoint directory; must lie under cluster.sharedVolume.mountPath. "
                      "Exported to the container as CHECKPOINT_DIR."),
        },
    }, "How the workload checkpoints when its node is preempted; omitted means no checkpoint "
       "(the pods get Kubernetes' default grace period).")


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
                      "Main command (argv). Omitted means the image's entrypoint (not possible "
                      "with the sigterm trigger)."),
        "args": _f({"type": "array", "items": _ARGV_ITEM}, "Arguments appended to command.", []),
        "gpus": _f({"type": "integer", "minimum": 0}, "GPUs per pod (nvidia.com/gpu limit).", 0),
        "parallelism": _f({"type": "integer", "minimum": 1}, "Worker pods running at once "
                          "(Job parallelism).", 1),
        "completions": _f({"type": "integer", "minimum": 1}, "Successful pods needed (Job "
                          "completions); when set the Job is Indexed, so each index is one "
                          "shard that a replacement pod resumes.", 1),
        "replicas": _f({"type": "integer", "minimum": 0}, "Deployment replicas: serving "
                       "defaults to 2, coordinator to 1.", 2),
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
        }, "Container resources besides GPUs.", {}),
        "backoffLimit": _f({"type": "integer", "minimum": 0},
                           "Job retries for genuine failures (preemptions are not counted).",
                           DEFAULT_BACKOFF_LIMIT),
        "checkpoint": _checkpoint_schema(),
    }
    props.update(_shared_fields())
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
                    "profile": _f({"enum": profile_names()},
                                  "Provider profile: the label, taint and grace-period cap of "
                                  "its preemptible nodes. --profile overrides it.",
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


# --- model -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SharedVolume:
    claim_name: str
    mount_path: str


@dataclass(frozen=True)
class Volume:
    """An extra volume: ``source`` is its spec key (claimName, configMap, secret, emptyDir)
    and ``value`` that key's value (an object name, or the emptyDir mapping)."""

    name: str
    mount_path: str
    source: str
    value: str | dict[str, str | int]
    read_only: bool = False
    sub_path: str | None = None


@dataclass(frozen=True)
class Checkpoint:
    command: tuple[str, ...]
    trigger: str
    grace_period_seconds: int
    dir: str | None


@dataclass(frozen=True)
class Workload:
    index: int
    name: str
    role: str
    compute: str
    image: str
    command: tuple[str, ...] | None
    args: tuple[str, ...]
    env: dict[str, str]
    gpus: int
    parallelism: int | None
    completions: int | None
    replicas: int
    ports: tuple[int, ...]
    checkpoint: Checkpoint | None
    namespace: str | None
    labels: dict[str, str]
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, Any], ...]
    service_account_name: str | None
    resources: dict[str, dict[str, str | int]]
    backoff_limit: int
    volumes: tuple[Volume, ...] = ()

    @property
    def path(self) -> Path:
        return ("workloads", self.index)

    @property
    def main_argv(self) -> tuple[str, ...] | None:
        if self.command is None:
            return None
        return self.command + self.args


@dataclass(frozen=True)
class Spec:
    file: str
    kubernetes_version: str | None
    shared_volume: SharedVolume | None
    workloads: tuple[Workload, ...]
    positions: Positions = field(repr=False)
    profile: Profile = field(default=_DEFAULT, repr=False)

    def error(self, path: Path, message: str, *, value: bool = True) -> SpecError:
        """A SpecError at ``path`` (its value, or its key with ``value=False``)."""
        return _error(self.file, self.positions, path, message, value=value)


def _error(file: str, positions: Positions, path: Path, message: str, *,
           value: bool = True) -> SpecError:
    pos = positions.value_at(path) if value else positions.at(path)
    return SpecError(message, file, pos.line, pos.column)


def schema_json() -> str:
    import json

    return json.dumps(SPEC_SCHEMA, indent=2) + "\n"


# --- loading ---------------------------------------------------------------------------------

def load_spec(text: str, file: str, profile: Profile | None = None) -> Spec:
    """Parse and validate a spec; a SpecError names the file, line and column of the problem."""
    try:
        loaded = load_single(text)
    except YamlProblem as problem:
        todo = ("write a spec (see `pmanifest schema` and examples/)"
                if problem.message == "file is empty" else "fix the YAML")
        if problem.templated:
            todo = "a spec is plain YAML, not a template: write the values themselves"
        raise SpecError(f"{problem.message}; {todo}", file, problem.line,
                        problem.column) from None
    data, positions = loaded.data, loaded.positions
    if not isinstance(data, dict):
        pos = positions.value_at(())
        raise SpecError("the spec must be a mapping (apiVersion: pmanifest/v1, workloads: "
                        "[...]); see `pmanifest schema`", file, pos.line, pos.column)
    _check_schema(data, positions, file)
    if profile is None:  # --profile wins over cluster.profile
        profile = get_profile(data.get("cluster", {}).get("profile", DEFAULT_PROFILE))
    return _Checker(data, positions, file, profile).spec()


@functools.cache
def _fast_spec_check() -> Callable[[Any], bool] | None:
    from pmanifest.fastschema import compile_schema

    return compile_schema(SPEC_SCHEMA, {})


def _check_schema(data: dict[str, Any], positions: Positions, file: str) -> None:
    fast = _fast_spec_check()
    if fast is not None and fast(data):
        return  # valid: answered without importing jsonschema (most of render's start-up)
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(SPEC_SCHEMA)
    found: list[tuple[int, Pos, str]] = []
    for error in validator.iter_errors(data):
        # an unknown key first: its did-you-mean usually explains the missing one too
        rank = {"additionalProperties": 0, "required": 2}.get(error.validator, 1)
        found.extend((rank, pos, message) for pos, message in _describe(error, positions))
    if found:
        _, pos, message = min(found)
        raise SpecError(message, file, pos.line, pos.column)


def _where(path: Path) -> str:
    return dotted(path) or "the spec"


def _describe(error: Any, positions: Positions) -> list[tuple[Pos, str]]:
    path: Path = tuple(error.absolute_path)
    kind = error.validator
    where = _where(path)
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        out = []
        for key in error.instance:
            if key in allowed:
                continue
            in_volume = len(path) >= 2 and path[-2] == "volumes"
            message = _REFUSED_KEYS.get(str(key)) if in_volume else None
            out.append((positions.at((*path, key)),
                        message or _unknown_key(str(key), where, allowed)))
        return out
    if kind == "oneOf":
        return _one_source(error, path, positions)
    if kind == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        return [(positions.at(path),
                 f"{where} is missing {p!r}; {_REQUIRED_HINTS.get(p, 'add it')}")
                for p in missing]
    pos = positions.value_at(path)
    if kind == "type":
        expected = error.validator_value
        names = " or ".join(expected) if isinstance(expected, list) else expected
        hint = "quote it to make it a string" if "string" in names else f"give {_article(names)}"
        return [(pos, f"{where} must be {_article(names)}, got {_json_type(error.instance)}; "
                      f"{hint}")]
    if kind == "enum":
        options = [str(v) for v in error.validator_value]
        close = difflib.get_close_matches(str(error.instance), options, n=1, cutoff=0.5)
        todo = f"did you mean {close[0]!r}?" if close else f"use one of: {', '.join(options)}"
        return [(pos, f"{where} is {error.instance!r}, which is not one of "
                      f"{', '.join(options)}; {todo}")]
    if kind == "const":
        return [(pos, f"{where} must be {error.validator_value!r}, got {error.instance!r}; "
                      f"set {path[-1] if path else 'it'}: {error.validator_value}")]
    if kind in ("pattern", "maxLength") and path and path[-1] in ("name", "namespace"):
        return [(pos, _dns_message(where, error.instance))]
    if kind in ("pattern", "maxLength") and path and path[-1] in VOLUME_SOURCES:
        return [(pos, f"{where} {error.instance!r} is not a DNS-1123 subdomain; use at most "
                      "253 lowercase letters, digits, '-' and '.', starting and ending with a "
                      "letter or digit")]
    if kind == "pattern":
        hint = next((_PATTERN_HINTS[str(p)] for p in reversed(path) if str(p) in _PATTERN_HINTS),
                    "fix the value")
        return [(pos, f"{where} {error.instance!r} does not match {error.validator_value}; "
                      f"{hint}")]
    if kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        return [(pos, f"{where} must be {word} {error.validator_value}, got {error.instance}; "
                      "change the value")]
    if kind in ("minItems", "minLength"):
        return [(pos, f"{where} must not be empty; give a value or remove the key")]
    if kind == "uniqueItems":
        return [(pos, f"{where} has duplicate entries; list each once")]
    return [(pos, f"{where}: {error.message}; see `pmanifest schema`")]


def _one_source(error: Any, path: Path, positions: Positions) -> list[tuple[Pos, str]]:
    """A volume item with no source, or with more than one."""
    if not isinstance(error.instance, dict):
        return []  # the type error says it
    keys = list(VOLUME_SOURCES)
    given = [key for key in error.instance if key in VOLUME_SOURCES]
    where = _where(path)
    if not given:
        return [(positions.at(path), f"{where} has no source; add one of {', '.join(keys)} "
                                     "(e.g. claimName: <PersistentVolumeClaim>, or "
                                     "emptyDir: {})")]
    return [(positions.at((*path, given[1])), f"{where} has {len(given)} sources "
             f"({', '.join(given)}); keep exactly one, and give each source its own volume")]


_REFUSED_KEYS = {
    "hostPath": "hostPath volumes are not offered: they are the node's local disk, lost when "
                "a preemptible node is reclaimed, and they expose the node to the pod; use "
                "claimName (a PersistentVolumeClaim) for data, or emptyDir: {} for scratch",
}
_REQUIRED_HINTS = {
    "apiVersion": "add apiVersion: pmanifest/v1 at the top",
    "workloads": "add a workloads: list with at least one workload",
    "name": "add name: <DNS-1123 label>",
    "command": "add command: [prog, arg, ...] (or a string run by /bin/sh -c)",
    "trigger": "add trigger: sigterm or trigger: preStop",
    "claimName": "add claimName: <PersistentVolumeClaim name>",
    "mountPath": "add mountPath: <absolute path>",
}
_PATTERN_HINTS = {
    "kubernetesVersion": 'quote it, e.g. kubernetesVersion: "1.31"',
    "mountPath": "use an absolute path (starting with /)",
    "requests": "use a Kubernetes quantity such as 8, 500m or 64Gi",
    "limits": "use a Kubernetes quantity such as 8, 500m or 64Gi",
    "sizeLimit": "use a Kubernetes quantity such as 64Gi",
}


def _unknown_key(key: str, where: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key {key!r} in {where}; did you mean {close[0]!r}?"
    return f"unknown key {key!r} in {where}; remove it (allowed: {', '.join(allowed)})"


def _dns_message(where: str, value: Any) -> str:
    return (f"{where} {value!r} is not a DNS-1123 label; use at most 63 lowercase letters, "
            "digits and '-', starting and ending with a letter or digit")


def _article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _json_type(value: Any) -> str:
    """The type of a spec value in the words of YAML users (list, mapping)."""
    from pmanifest.schema import json_type

    name = json_type(value)
    return {"array": "list", "object": "mapping"}.get(name, name)


class _Checker:
    """Semantic checks on schema-valid data, and the construction of the model."""

    def __init__(self, data: dict[str, Any], positions: Positions, file: str,
                 profile: Profile) -> None:
        self.data = data
        self.positions = positions
        self.file = file
        self.profile = profile

    def fail(self, path: Path, message: str, *, value: bool = True) -> PmanifestError:
        return _error(self.file, self.positions, path, message, value=value)

    def spec(self) -> Spec:
        cluster = self.data.get("cluster", {})
        volume = cluster.get("sharedVolume")
        shared = None
        if volume is not None:
            mount = posixpath.normpath(volume["mountPath"])
            if mount == "/":
                raise self.fail(("cluster", "sharedVolume", "mountPath"),
                                "the shared volume cannot be mounted at /; use a directory "
                                "such as /mnt/shared")
            shared = SharedVolume(volume["claimName"], mount)
        defaults = self.data.get("defaults", {})
        self.check_shared(defaults, ("defaults",))
        default_volumes = self.volumes(("defaults",), defaults, shared)
        workloads = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(self.data["workloads"]):
            workload = self.workload(i, raw, defaults, shared, default_volumes)
            if workload.name in seen:
                raise self.fail(("workloads", i, "name"),
                                f"workload name {workload.name!r} is already used by "
                                f"workloads[{seen[workload.name]}]; give each workload its "
                                "own name")
            seen[workload.name] = i
            workloads.append(workload)
        return Spec(self.file, cluster.get("kubernetesVersion"), shared, tuple(workloads),
                    self.positions, self.profile)

    def check_shared(self, raw: dict[str, Any], path: Path) -> None:
        for key, value in raw.get("labels", {}).items():
            self.check_label((*path, "labels", key), key, value)
        for key in raw.get("env", {}):
            if not _ENV_NAME.match(key):
                raise self.fail((*path, "env", key), f"environment variable name {key!r} is "
                                "not valid; use letters, digits, '_', '-' and '.', not "
                                "starting with a digit", value=False)
        label = self.profile.label_key
        if label in raw.get("nodeSelector", {}):
            raise self.fail((*path, "nodeSelector", label), f"nodeSelector must not set "
                            f"{label!r}; use compute: preemptible or compute: standard",
                            value=False)

    def check_label(self, path: Path, key: str, value: str) -> None:
        if key in RESERVED_LABELS:
            raise self.fail(path, f"label {key!r} is set by pmanifest; remove it", value=False)
        prefix, _, name = key.rpartition("/")
        if (len(name) > 63 or not _LABEL_NAME.match(name)
                or (prefix and (len(prefix) > 253 or not _LABEL_PREFIX.match(prefix)))):
            raise self.fail(path, f"label key {key!r} is not a valid Kubernetes label key; use "
                            "[prefix/]name with a DNS prefix and a name of at most 63 "
                            "alphanumerics, '-', '_' or '.'", value=False)
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            raise self.fail(path, f"label value {value!r} is not a valid Kubernetes label "
                            "value; use at most 63 alphanumerics, '-', '_' or '.', starting "
                            "and ending with an alphanumeric")

    def workload(self, i: int, raw: dict[str, Any], defaults: dict[str, Any],
                 shared: SharedVolume | None, default_volumes: list[tuple[Path, Volume]]
                 ) -> Workload:
        path: Path = ("workloads", i)
        self.check_shared(raw, path)
        volumes = self.unique_volumes([*default_volumes, *self.volumes(path, raw, shared)])
        role = raw.get("role", "worker")
        compute = raw.get("compute", "preemptible" if role == "worker" else "standard")
        if role != "worker" and compute == "preemptible":
            raise self.fail((*path, "compute"), f"{role} workloads cannot run on preemptible "
                            "compute (compute: preemptible); remove it or use role: worker")
        self.check_role_fields(path, raw, role)
        image = raw.get("image", defaults.get("image"))
        if image is None:
            raise self.fail(path, f"workload {raw['name']!r} has no image; add image: "
                            "<registry/repository:tag> (or set it in defaults)", value=False)
        command = _argv(raw["command"]) if "command" in raw else None
        if command is None and "args" in raw:
            raise self.fail((*path, "args"), "args without command would replace the image's "
                            "CMD only; add command: [...] as well", value=False)
        checkpoint = self.checkpoint(path, raw, compute, shared, command)
        env = {**_env(defaults.get("env", {})), **_env(raw.get("env", {}))}
        if checkpoint is not None and checkpoint.dir is not None and "CHECKPOINT_DIR" in env:
            env_path = (*path, "env", "CHECKPOINT_DIR")
            raise self.fail(env_path if "CHECKPOINT_DIR" in raw.get("env", {}) else path,
                            "CHECKPOINT_DIR is set from checkpoint.dir; remove it from env",
                            value=False)
        resources = {k: dict(v) for k, v in raw.get("resources", {}).items()}
        if raw.get("gpus") and "nvidia.com/gpu" in resources.get("limits", {}):
            raise self.fail((*path, "resources", "limits", "nvidia.com/gpu"),
                            "nvidia.com/gpu is set from gpus; remove it from resources.limits",
                            value=False)
        return Workload(
            index=i, name=raw["name"], role=role, compute=compute, image=image,
            command=command, args=_argv(raw.get("args", [])), env=env,
            gpus=raw.get("gpus", 0), parallelism=raw.get("parallelism"),
            completions=raw.get("completions"),
            replicas=raw.get("replicas", DEFAULT_REPLICAS.get(role, 1)),
            ports=tuple(raw.get("ports", [])), checkpoint=checkpoint,
            namespace=raw.get("namespace", defaults.get("namespace")),
            labels={**defaults.get("labels", {}), **raw.get("labels", {})},
            node_selector={**defaults.get("nodeSelector", {}), **raw.get("nodeSelector", {})},
            tolerations=tuple(raw.get("tolerations", defaults.get("tolerations", []))),
            service_account_name=raw.get("serviceAccountName",
                                         defaults.get("serviceAccountName")),
            resources=resources,
            backoff_limit=raw.get("backoffLimit", DEFAULT_BACKOFF_LIMIT),
            volumes=volumes,
        )

    def volumes(self, path: Path, raw: dict[str, Any], shared: SharedVolume | None
                ) -> list[tuple[Path, Volume]]:
        """The extra volumes of ``raw`` (defaults or one workload), each with its path."""
        out = []
        for j, item in enumerate(raw.get("volumes", [])):
            vpath = (*path, "volumes", j)
            out.append((vpath, self.volume(vpath, item, shared)))
        return out

    def volume(self, path: Path, item: dict[str, Any], shared: SharedVolume | None) -> Volume:
        name = item["name"]
        if name == SHARED_VOLUME_NAME:
            raise self.fail((*path, "name"), f"volume name {name!r} is taken by the shared "
                            "volume; choose another name")
        mount = item["mountPath"]
        if ".." in mount.split("/"):
            raise self.fail((*path, "mountPath"), f"mountPath {mount!r} contains '..'; give "
                            "the absolute path without it")
        normal = _absolute(mount)
        if normal == "/":
            raise self.fail((*path, "mountPath"), "a volume cannot be mounted at /; use a "
                            "directory such as /mnt/data")
        if shared is not None and _inside(normal, _absolute(shared.mount_path)):
            where = ("is the shared volume's mountPath" if normal == _absolute(
                shared.mount_path) else f"is inside the shared volume (mounted at "
                f"{shared.mount_path})")
            raise self.fail((*path, "mountPath"), f"mountPath {mount!r} {where}, which it "
                            "would hide and whose writes it would catch; mount it outside "
                            f"{shared.mount_path}")
        sub_path = item.get("subPath")
        if sub_path is not None and (sub_path.startswith("/") or ".." in sub_path.split("/")):
            raise self.fail((*path, "subPath"), f"subPath {sub_path!r} must be a relative "
                            "path inside the volume, without '..'; e.g. subPath: datasets")
        source = next(key for key in VOLUME_SOURCES if key in item)  # the schema checked one
        value = dict(item[source]) if source == "emptyDir" else item[source]
        return Volume(name, normal, source, value, item.get("readOnly", False), sub_path)

    def unique_volumes(self, volumes: list[tuple[Path, Volume]]) -> tuple[Volume, ...]:
        """The merged list of a workload, refused where a name or mountPath repeats."""
        names: dict[str, Path] = {}
        mounts: dict[str, Path] = {}
        for path, volume in volumes:
            if volume.name in names:
                raise self.fail((*path, "name"), f"volume name {volume.name!r} is already "
                                f"used by {dotted(names[volume.name])}; give each volume its "
                                "own name")
            if volume.mount_path in mounts:
                raise self.fail((*path, "mountPath"), f"mountPath {volume.mount_path!r} is "
                                f"already used by {dotted(mounts[volume.mount_path])}; mount "
                                "each volume at its own path")
            names[volume.name] = path
            mounts[volume.mount_path] = path
        return tuple(volume for _, volume in volumes)

    def check_role_fields(self, path: Path, raw: dict[str, Any], role: str) -> None:
        only = {"parallelism": "worker", "completions": "worker", "backoffLimit": "worker",
                "replicas": "coordinator or serving"}
        for key, roles in only.items():
            if key in raw and role not in roles:
                raise self.fail((*path, key), f"{key} applies to {roles} workloads, not "
                                f"{role}; remove it or change role", value=False)
        if raw.get("ports") and role != "worker" and not raw["name"][0].isalpha():
            raise self.fail((*path, "name"), f"name {raw['name']!r} must start with a letter "
                            "because it also names the Service (DNS-1035); rename it")

    def checkpoint(self, path: Path, raw: dict[str, Any], compute: str,
                   shared: SharedVolume | None, command: tuple[str, ...] | None
                   ) -> Checkpoint | None:
        body = raw.get("checkpoint")
        if body is None:
            return None
        cpath = (*path, "checkpoint")
        cap = self.profile.grace_period_cap
        grace = body.get("gracePeriodSeconds", cap)
        if compute == "preemptible" and grace > cap:
            raise self.fail((*cpath, "gracePeriodSeconds"), f"gracePeriodSeconds {grace} is "
                            f"above the {cap} s cap of preemptible nodes (the node is removed "
                            f"after {self.profile.drain_window_seconds} s); use at most {cap}")
        if body["trigger"] == "sigterm" and command is None:
            raise self.fail((*cpath, "trigger"), "trigger: sigterm wraps the main command, "
                            "but the workload has no command; add command: [...] or use "
                            "trigger: preStop")
        ckpt_dir = body.get("dir")
        if ckpt_dir is not None:
            self.check_dir((*cpath, "dir"), ckpt_dir, shared)
        cmd = body["command"]
        argv = ("/bin/sh", "-c", cmd) if isinstance(cmd, str) else _argv(cmd)
        return Checkpoint(argv, body["trigger"], grace, ckpt_dir)

    def check_dir(self, path: Path, ckpt_dir: str, shared: SharedVolume | None) -> None:
        if shared is None:
            raise self.fail(path, f"checkpoint dir {ckpt_dir!r} needs a shared volume, and "
                            "the spec has none; add cluster.sharedVolume {claimName, "
                            "mountPath} and put the dir under its mountPath")
        normal = posixpath.normpath(ckpt_dir)
        inside = ckpt_dir.startswith("/") and (
            normal == shared.mount_path or normal.startswith(shared.mount_path + "/"))
        if not inside:
            raise self.fail(path, f"checkpoint dir {ckpt_dir!r} is not on the shared volume "
                            f"(mounted at {shared.mount_path}); checkpoints elsewhere are lost "
                            f"with the node, so use a path under {shared.mount_path}/")


def _absolute(path: str) -> str:
    """``path`` normalised, with one leading slash (normpath keeps a leading ``//``)."""
    return "/" + posixpath.normpath(path).lstrip("/")


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _argv(items: list[str | int]) -> tuple[str, ...]:
    return tuple(str(item) for item in items)


def _env(raw: dict[str, str | int]) -> dict[str, str]:
    return {key: str(value) for key, value in raw.items()}
