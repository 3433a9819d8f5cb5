"""Spec validation against its JSON Schema, with one-line messages in the spec's words:
``file:line:col: what is wrong; what to do``."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from typing import Any

from pmanifest.document import Path, Pos, Positions, dotted
from pmanifest.errors import SpecError
from pmanifest.spec.fields import SPEC_SCHEMA
from pmanifest.spec.model import VOLUME_SOURCES


@functools.cache
def _fast_spec_check() -> Callable[[Any], bool] | None:
    from pmanifest.fastschema import compile_schema

    return compile_schema(SPEC_SCHEMA, {})


def check_schema(data: dict[str, Any], positions: Positions, file: str) -> None:
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

