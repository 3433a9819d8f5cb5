"""The spec's words for the run-time fields (issue 14), plugged into the shared translator of
schema errors (:mod:`pmanifest.schema.words`) by ``spec.messages``: an env value with no source
or two, a probe with no handler, a field path, rollout knob or object name that does not
parse, and the hint for each missing key."""

from __future__ import annotations

from typing import Any

from pmanifest.loader.positions import Path, dotted
from pmanifest.render.spec.runtime import ENV_FROM_SOURCES, ENV_SOURCES, PROBE_HANDLERS

_SUBDOMAIN = ("is not a DNS-1123 subdomain; use at most 253 lowercase letters, digits, '-' "
              "and '.', starting and ending with a letter or digit")
_COUNT_OR_PERCENT = ("is neither a count nor a percentage; write an integer (1) or a "
                     "percentage ('25%')")
# value that fails its pattern or length, by the key that holds it
_PATTERNS = {
    "fieldPath": "is not a pod field env can read; use metadata.name, .namespace, .uid, "
                 ".labels['KEY'] or .annotations['KEY'], spec.nodeName or "
                 ".serviceAccountName, status.hostIP, .podIP or .podIPs",
    "path": "is not an absolute HTTP path; start it with /, e.g. /health",
    "maxSurge": _COUNT_OR_PERCENT,
    "maxUnavailable": _COUNT_OR_PERCENT,
    "priorityClassName": _SUBDOMAIN,
    "key": "is not a valid key of a Secret or ConfigMap; use letters, digits, '-', '_' and '.'",
    "prefix": "is not a valid start of a variable name; use letters, digits, '_', '-' and '.', "
              "not starting with a digit",
    "divisor": "is not a Kubernetes quantity; use e.g. 1, 1m or 1Mi",
}
RUNTIME_REQUIRED = {
    "key": "add key: <the key whose value the variable gets>",
    "port": "add port: <the container port to probe>",
    "fieldPath": "add fieldPath, e.g. fieldPath: metadata.namespace",
    "resource": "add resource, e.g. resource: limits.memory",
    "value": "add value: <header value>",
}
_CHOICES = {  # keys of which exactly one is needed -> (what each is, an example)
    tuple(ENV_SOURCES): ("source", "e.g. {secretKeyRef: {name: hf-token, key: token}}"),
    ENV_FROM_SOURCES: ("source", "e.g. {secretRef: {name: app-secrets}}"),
    PROBE_HANDLERS: ("handler", "e.g. {httpGet: {path: /health, port: 8000}}"),
}


def _in_env(path: Path) -> bool:
    """Is ``path`` inside env or envFrom (of defaults or a workload)?"""
    return any(part in ("env", "envFrom") for part in path[:3])


def runtime_value_message(path: Path, key: str, value: Any) -> str | None:
    """The message for a run-time field's value that fails its pattern, or None."""
    if key == "name" and _in_env(path):  # a Secret or ConfigMap
        return f"{dotted(path)} {value!r} {_SUBDOMAIN}"
    if key in _PATTERNS and (key not in ("key", "prefix", "divisor") or _in_env(path)):
        return f"{dotted(path)} {value!r} {_PATTERNS[key]}"
    return None


def runtime_one_of(what: str, keys: list[str], given: list[str]) -> str | None:
    """An env value, envFrom item or probe with none, or several, of its choices."""
    choice = _CHOICES.get(tuple(keys))
    if choice is None:
        return None
    noun, example = choice
    if not given:
        return f"{what} has no {noun}; add one of {', '.join(keys)} ({example})"
    return f"{what} has {len(given)} {noun}s ({', '.join(given)}); keep exactly one"
