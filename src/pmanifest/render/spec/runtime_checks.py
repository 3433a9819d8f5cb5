"""Semantic checks of the run-time fields (issue 14) and their model: what the schema cannot
say (which role may use which field, probe rules of the API server, the rollout knobs, the
Job knobs of Indexed Jobs, annotation keys), and the workload's ``Runtime``."""

from __future__ import annotations

from typing import Any

from pmanifest.loader.positions import Path
from pmanifest.render.spec.model import DEFAULT_BACKOFF_LIMIT, LABEL_NAME, LABEL_PREFIX
from pmanifest.render.spec.resources import Failing
from pmanifest.render.spec.runtime import (
    ANNOTATIONS_MAX_BYTES,
    ENV_SOURCES,
    MAX_INDEXES,
    PROBE_HANDLERS,
    EnvRef,
    Runtime,
    Strategy,
    rollout_defaults,
)

_ROLE_OF = {"strategy": "serving", "ttlSecondsAfterFinished": "worker",
            "backoffLimitPerIndex": "worker", "maxFailedIndexes": "worker"}
_ANNOTATION_FIELDS = ("annotations", "podAnnotations")


def env_values(raw: dict[str, Any]) -> dict[str, str | EnvRef]:
    """Spec env -> model: plain values as text, sources as ``EnvRef`` (order kept, so a
    later value can refer to an earlier variable with $(NAME))."""
    out: dict[str, str | EnvRef] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            source = next(key for key in ENV_SOURCES if key in value)  # the schema checked one
            out[name] = EnvRef(source, dict(value[source]))
        else:
            out[name] = str(value)
    return out


def check_shared_runtime(checker: Failing, raw: dict[str, Any], path: Path) -> None:
    """Checks of the run-time fields that ``defaults`` and a workload share."""
    for field in _ANNOTATION_FIELDS:
        for key in raw.get(field, {}):
            _check_annotation_key(checker, (*path, field, key), key)
    # the podTemplate overlay's (issue 26)
    for key in raw.get("podTemplate", {}).get("metadata", {}).get("annotations", {}):
        _check_annotation_key(checker, (*path, "podTemplate", "metadata", "annotations", key),
                              key)


def _check_annotation_key(checker: Failing, path: Path, key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if (len(name) > 63 or not LABEL_NAME.match(name)
            or (prefix and (len(prefix) > 253 or not LABEL_PREFIX.match(prefix)))):
        raise checker.fail(path, f"annotation key {key!r} is not a valid Kubernetes annotation "
                           "key; use [prefix/]name with a DNS prefix and a name of at most 63 "
                           "alphanumerics, '-', '_' or '.'", value=False)


def check_entrypoint(checker: Failing, path: Path, raw: dict[str, Any], role: str,
                     image: str) -> None:
    """``args`` without ``command`` run the image's ENTRYPOINT: fine for serving and
    coordinators, but a worker's argv runs under pmanifest's termination supervisor, which
    needs all of it."""
    if role != "worker" or "command" in raw or "args" not in raw:
        return
    raise checker.fail((*path, "args"), "a worker needs command as well as args: its main "
                       "process runs under pmanifest's termination supervisor, which must be "
                       "given the whole argv, and the image's ENTRYPOINT cannot be known from "
                       "the spec; add the line command: [<the ENTRYPOINT of the image>] above "
                       f"args (docker inspect --format '{{{{json .Config.Entrypoint}}}}' "
                       f"{image} prints it)", value=False)


def backoff_limit(raw: dict[str, Any]) -> int | None:
    """The Job's backoffLimit; with backoffLimitPerIndex and none given, none at all (the
    API server then counts retries per index only)."""
    if "backoffLimit" in raw or "backoffLimitPerIndex" not in raw:
        return int(raw.get("backoffLimit", DEFAULT_BACKOFF_LIMIT))
    return None


def runtime(checker: Failing, path: Path, raw: dict[str, Any], defaults: dict[str, Any],
            role: str, replicas: int) -> Runtime:
    """The validated run-time fields of one workload (``defaults`` merged in)."""
    _check_roles(checker, path, raw, role)
    annotations = {**defaults.get("annotations", {}), **raw.get("annotations", {})}
    pod_annotations = {**defaults.get("podAnnotations", {}), **raw.get("podAnnotations", {})}
    for field, merged in (("annotations", annotations), ("podAnnotations", pod_annotations)):
        _check_size(checker, path, raw, field, merged)
    return Runtime(
        env_from=tuple(dict(item) for item in [*defaults.get("envFrom", []),
                                               *raw.get("envFrom", [])]),
        probes=_probes(checker, (*path, "probes"), raw.get("probes", {}), role),
        strategy=_strategy(checker, path, raw, role, replicas),
        annotations=annotations,
        pod_annotations=pod_annotations,
        priority_class_name=raw.get("priorityClassName", defaults.get("priorityClassName")),
        ttl_seconds_after_finished=raw.get("ttlSecondsAfterFinished"),
        backoff_limit_per_index=raw.get("backoffLimitPerIndex"),
        max_failed_indexes=_max_failed_indexes(checker, path, raw),
    )


def _check_roles(checker: Failing, path: Path, raw: dict[str, Any], role: str) -> None:
    for key, allowed in _ROLE_OF.items():
        if key not in raw or role == allowed:
            continue
        why = ("; a coordinator always uses Recreate, so a rollout never runs two rendezvous "
               "hosts at once" if role == "coordinator" and key == "strategy" else "")
        raise checker.fail((*path, key), f"{key} applies to {allowed} workloads, not {role}"
                           f"{why}; remove it or change role", value=False)


def _check_size(checker: Failing, path: Path, raw: dict[str, Any], field: str,
                merged: dict[str, str]) -> None:
    size = sum(len(k.encode()) + len(v.encode()) for k, v in merged.items())
    if size > ANNOTATIONS_MAX_BYTES:
        where = (*path, field) if field in raw else path
        raise checker.fail(where, f"{field} of workload {raw['name']!r} take {size} bytes, "
                           f"above the API server's {ANNOTATIONS_MAX_BYTES}; put large data "
                           "in a ConfigMap", value=False)


def _probes(checker: Failing, path: Path, raw: dict[str, Any], role: str
            ) -> dict[str, dict[str, Any]]:
    """Each probe in Kubernetes' shape (argv items as text)."""
    out: dict[str, dict[str, Any]] = {}
    for kind, probe in raw.items():
        if kind == "readiness" and role == "worker":
            raise checker.fail((*path, kind), "probes.readiness applies to coordinator or "
                               "serving workloads (a Job's pods take no Service traffic); "
                               "remove it, or use liveness or startup", value=False)
        if kind != "readiness" and probe.get("successThreshold", 1) != 1:
            raise checker.fail((*path, kind, "successThreshold"), f"probes.{kind}."
                               "successThreshold must be 1 (the API server accepts no other "
                               f"value for {kind} probes); remove it")
        body = dict(probe)
        if "exec" in body:
            command = body["exec"]["command"]
            argv = ["/bin/sh", "-c", command] if isinstance(command, str) else command
            body["exec"] = {"command": [str(arg) for arg in argv]}
        out[kind] = {key: body[key] for key in (*PROBE_HANDLERS, *_TIMING) if key in body}
    return out


_TIMING = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold",
           "failureThreshold")


def _strategy(checker: Failing, path: Path, raw: dict[str, Any], role: str,
              replicas: int) -> Strategy | None:
    if role == "coordinator":
        return Strategy("Recreate")
    if role != "serving":
        return None
    given = raw.get("strategy", {})
    spath = (*path, "strategy")
    kind = given.get("type", "RollingUpdate")
    if kind == "Recreate":
        for knob in ("maxSurge", "maxUnavailable"):
            if knob in given:
                raise checker.fail((*spath, knob), f"{knob} applies to type: RollingUpdate; "
                                   "remove it, or remove type: Recreate", value=False)
        return Strategy("Recreate")
    knobs = {**rollout_defaults(replicas), **given}
    surge, unavailable = knobs["maxSurge"], knobs["maxUnavailable"]
    if isinstance(unavailable, str) and int(unavailable[:-1]) > 100:
        raise checker.fail((*spath, "maxUnavailable"), f"maxUnavailable {unavailable!r} is "
                           "above 100%; use at most 100%")
    if _zero(surge) and _zero(unavailable):
        raise checker.fail(spath, f"maxSurge and maxUnavailable are both 0 (with {replicas} "
                           f"replica{'s' if replicas != 1 else ''}), so a rollout could never "
                           "replace a pod; set maxUnavailable: 1 (one replica down at a time) "
                           "or maxSurge: 1 (needs room for one more pod)", value=False)
    return Strategy("RollingUpdate", surge, unavailable)


def _zero(knob: int | str) -> bool:
    return knob == 0 or (isinstance(knob, str) and int(knob[:-1]) == 0)


def _max_failed_indexes(checker: Failing, path: Path, raw: dict[str, Any]) -> int | None:
    per_index = raw.get("backoffLimitPerIndex")
    completions: int = raw.get("completions", 0)
    if per_index is not None and "completions" not in raw:
        raise checker.fail((*path, "backoffLimitPerIndex"), "backoffLimitPerIndex needs an "
                           "Indexed Job; add completions: N (one index per shard)",
                           value=False)
    if per_index is not None and completions > MAX_INDEXES:
        raise checker.fail((*path, "completions"), f"completions {completions} is above "
                           f"{MAX_INDEXES}, the most the API server allows with "
                           "backoffLimitPerIndex; split the sweep or remove "
                           "backoffLimitPerIndex")
    limit = raw.get("maxFailedIndexes")
    if limit is None:
        return None
    if per_index is None:
        raise checker.fail((*path, "maxFailedIndexes"), "maxFailedIndexes counts the indexes "
                           "that used up backoffLimitPerIndex; add backoffLimitPerIndex: N",
                           value=False)
    if limit > completions:
        raise checker.fail((*path, "maxFailedIndexes"), f"maxFailedIndexes {limit} is above "
                           f"completions {completions}; use at most {completions}")
    return int(limit)
