"""Spec validation against its JSON Schema, with one-line messages in the spec's words
(``file:line:col: what is wrong; what to do``) through the shared translator
(:mod:`pmanifest.schema.words`): this module only holds the spec's vocabulary."""

from __future__ import annotations

from typing import Any

from pmanifest.errors import SpecError
from pmanifest.loader.positions import Path, Positions
from pmanifest.render.spec.fields import SPEC_SCHEMA
from pmanifest.render.spec.model import VOLUME_SOURCES
from pmanifest.render.spec.runtime_messages import (
    RUNTIME_REQUIRED,
    runtime_one_of,
    runtime_value_message,
)
from pmanifest.schema.datafile import first_violation
from pmanifest.schema.words import Words, where


def check_schema(data: dict[str, Any], positions: Positions, file: str) -> None:
    """Refuse spec data that does not match SPEC_SCHEMA (the compiled check answers for valid
    data without importing jsonschema: most of render's start-up)."""
    found = first_violation(data, positions, SPEC_SCHEMA, WORDS)
    if found is not None:
        message, line, column = found
        raise SpecError(message, file, line, column)


def _value_message(path: Path, key: str, value: Any) -> str | None:
    """DNS names say what a DNS name is."""
    runtime = runtime_value_message(path, key, value)  # env, probes, rollout (issue 14)
    if runtime is not None:
        return runtime
    if key in ("name", "namespace"):
        return dns_message(where(path, WORDS), value)
    if key in VOLUME_SOURCES:
        return (f"{where(path, WORDS)} {value!r} is not a DNS-1123 subdomain; use at most 253 "
                "lowercase letters, digits, '-' and '.', starting and ending with a letter or "
                "digit")
    return None


def dns_message(what: str, value: Any) -> str:
    return (f"{what} {value!r} is not a DNS-1123 label; use at most 63 lowercase letters, "
            "digits and '-', starting and ending with a letter or digit")


def _one_source(what: str, keys: list[str], given: list[str]) -> str:
    """A volume with no source, or with more than one."""
    runtime = runtime_one_of(what, keys, given)  # env sources, envFrom, probe handlers
    if runtime is not None:
        return runtime
    if not given:
        return (f"{what} has no source; add one of {', '.join(keys)} (e.g. claimName: "
                "<PersistentVolumeClaim>, or emptyDir: {})")
    return (f"{what} has {len(given)} sources ({', '.join(given)}); keep exactly one, and give "
            "each source its own volume")


WORDS = Words(
    root="the spec",
    required={
        "apiVersion": "add apiVersion: pmanifest/v1 at the top",
        "workloads": "add a workloads: list with at least one workload",
        "name": "add name: <DNS-1123 label>",
        "command": "add command: [prog, arg, ...] (or a string run by /bin/sh -c)",
        "trigger": "add trigger: sigterm or trigger: preStop",
        "claimName": "add claimName: <PersistentVolumeClaim name>",
        "mountPath": "add mountPath: <absolute path>",
        **RUNTIME_REQUIRED,
    },
    patterns={
        "kubernetesVersion": 'quote it, e.g. kubernetesVersion: "1.31"',
        "mountPath": "use an absolute path (starting with /)",
        "requests": "use a Kubernetes quantity such as 8, 500m or 64Gi",
        "limits": "use a Kubernetes quantity such as 8, 500m or 64Gi",
        "sizeLimit": "use a Kubernetes quantity such as 64Gi",
    },
    refused={
        "hostPath": "hostPath volumes are not offered: they are the node's local disk, lost "
                    "when a preemptible node is reclaimed, and they expose the node to the "
                    "pod; use claimName (a PersistentVolumeClaim) for data, or emptyDir: {} "
                    "for scratch",
    },
    value_message=_value_message,
    one_of=_one_source,
)
