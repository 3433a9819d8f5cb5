"""Schema errors of the run-time fields (issue 14) in the spec's words: an env value with no
source or two, a probe with no handler, a field path or rollout knob that does not parse.
``describe_runtime`` answers for the errors it knows and None for the rest."""

from __future__ import annotations

from typing import Any

from pmanifest.document import Path, Pos, Positions, dotted
from pmanifest.spec.runtime import ENV_FROM_SOURCES, ENV_SOURCES, PROBE_HANDLERS

Described = list[tuple[Pos, str]]
_SUBDOMAIN = ("is not a DNS-1123 subdomain; use at most 253 lowercase letters, digits, '-' "
              "and '.', starting and ending with a letter or digit")
_PATTERNS = {
    "fieldPath": "is not a field the downward API gives a variable; use metadata.name, "
                 "metadata.namespace, metadata.uid, metadata.labels['KEY'], "
                 "metadata.annotations['KEY'], spec.nodeName, spec.serviceAccountName, "
                 "status.hostIP, status.podIP or status.podIPs",
    "path": "is not an absolute HTTP path; start it with /, e.g. /health",
    "maxSurge": "is neither a count nor a percentage; write an integer (1) or a percentage "
                "('25%')",
    "maxUnavailable": "is neither a count nor a percentage; write an integer (1) or a "
                      "percentage ('25%')",
    "priorityClassName": _SUBDOMAIN,
    "name": _SUBDOMAIN,  # of a Secret or ConfigMap
    "key": "is not a valid key of a Secret or ConfigMap; use letters, digits, '-', '_' and '.'",
    "prefix": "is not a valid start of a variable name; use letters, digits, '_', '-' and '.', "
              "not starting with a digit",
    "divisor": "is not a Kubernetes quantity; use e.g. 1, 1m or 1Mi",
}
_REQUIRED = {
    "key": "add key: <the key whose value the variable gets>",
    "name": "add name: <its name>",
    "port": "add port: <the container port to probe>",
    "fieldPath": "add fieldPath, e.g. fieldPath: metadata.namespace",
    "resource": "add resource, e.g. resource: limits.memory",
    "command": "add command: [argv...]",
    "value": "add value: <header value>",
}


def _area(path: Path) -> str | None:
    """Which run-time field ``path`` lies in: env, envFrom or probes (None otherwise)."""
    for i, part in enumerate(path):
        if part in ("env", "envFrom", "probes") and 1 <= i <= 2 and path[0] in (
                "workloads", "defaults"):
            return str(part)
    return None


def describe_runtime(error: Any, positions: Positions) -> Described | None:
    path: Path = tuple(error.absolute_path)
    area = _area(path)
    if area is None and not (path and path[-1] in ("strategy", "maxSurge", "maxUnavailable",
                                                   "priorityClassName")):
        return None
    kind = error.validator
    if kind == "oneOf":
        return _exactly_one(error, path, positions, area)
    if kind == "type" and area == "env" and path[-2] == "env":
        return [(positions.value_at(path), f"{dotted(path)} must be a string (quote "
                 "anything else), or a mapping with one of " + ", ".join(ENV_SOURCES) +
                 f"; got {_json_type(error.instance)}")]
    if kind == "pattern" and str(path[-1]) in _PATTERNS:
        return [(positions.value_at(path),
                 f"{dotted(path)} {error.instance!r} {_PATTERNS[str(path[-1])]}")]
    if kind == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        return [(positions.at(path), f"{dotted(path)} is missing {p!r}; "
                 f"{_REQUIRED.get(p, 'add it')}") for p in missing]
    return None


def _exactly_one(error: Any, path: Path, positions: Positions, area: str | None
                 ) -> Described | None:
    if not isinstance(error.instance, dict):
        return []  # the type error says it
    keys: tuple[str, ...] = {"env": tuple(ENV_SOURCES), "envFrom": ENV_FROM_SOURCES,
                             "probes": PROBE_HANDLERS}.get(area or "", ())
    if not keys:
        return None
    what = "handler" if area == "probes" else "source"
    given = [key for key in error.instance if key in keys]
    where = dotted(path)
    if not given:
        example = {"env": "e.g. {secretKeyRef: {name: hf-token, key: token}}",
                   "envFrom": "e.g. {secretRef: {name: app-secrets}}",
                   "probes": "e.g. {httpGet: {path: /health, port: 8000}}"}[area or "env"]
        return [(positions.at(path), f"{where} has no {what}; add one of {', '.join(keys)} "
                                     f"({example})")]
    return [(positions.at((*path, given[1])), f"{where} has {len(given)} {what}s "
             f"({', '.join(given)}); keep exactly one")]


def _json_type(value: Any) -> str:
    from pmanifest.schema import json_type

    name = json_type(value)
    return {"array": "list", "object": "mapping"}.get(name, name)
