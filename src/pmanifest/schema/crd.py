"""Validation of the custom resources render emits: JobSet, RayCluster and RayJob.

The Kubernetes schemas of kubernetes-validate know only the core kinds. For the custom
resources pmanifest writes, ``pmanifest/schema/crd_schemas/`` ships JSON Schemas (draft
2020-12) made from the upstream API types; they are strict (an unknown key is an error) and
delegate every pod or Job template to the core ``_definitions.json`` of the target Kubernetes
version, the same document ``pmanifest.schema.kubernetes`` resolves its references in (with
the same server-defaulted fields made optional). Problems are worded by
:mod:`pmanifest.schema.words`, like those of core kinds.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pmanifest.io.reading import read_shipped
from pmanifest.schema.kubernetes import SchemaProblem, definitions_document, schema_words
from pmanifest.schema.words import describe

# (apiVersion, kind) -> schema file in pmanifest/schema/crd_schemas
CRD_SCHEMAS: dict[tuple[str, str], str] = {
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "jobset.x-k8s.io-v1alpha2-JobSet.json",
    ("ray.io/v1", "RayCluster"): "ray.io-v1-RayCluster.json",
    ("ray.io/v1", "RayJob"): "ray.io-v1-RayJob.json",
}
# Base URI of the shipped schemas: their "/api/_definitions.json#/$defs/..." references then
# resolve to the core definitions registered by pmanifest.schema.kubernetes, exactly as those of the
# kubernetes-validate schema files do.
_BASE_URI = "https://kubernetes.io/api/crd/"


def is_custom_kind(api_version: str, kind: str) -> bool:
    """True for a custom resource this module has a schema for."""
    return (api_version, kind) in CRD_SCHEMAS


@functools.cache
def load_schema(file: str) -> dict[str, Any]:
    """One shipped schema, with the ``$id`` its relative references resolve against."""
    schema: dict[str, Any] = json.loads(read_shipped("pmanifest.schema", "crd_schemas", file))
    schema["$id"] = _BASE_URI + file
    return schema


@functools.cache
def validator_for(version: str, api_version: str, kind: str) -> Any:
    """A jsonschema validator of one custom kind against the core schemas of ``version``."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry().with_resources([
        ("https://kubernetes.io/api/_definitions.json",
         Resource.from_contents(definitions_document(version))),
        *((_BASE_URI + file, Resource.from_contents(load_schema(file)))
          for file in CRD_SCHEMAS.values()),
    ])
    return Draft202012Validator(load_schema(CRD_SCHEMAS[(api_version, kind)]),
                                registry=registry)


def validate_custom(obj: dict[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of a JobSet, RayCluster or RayJob (sorted by path); a KeyError for any
    other kind (ask ``is_custom_kind`` first)."""
    validator = validator_for(version, str(obj.get("apiVersion")), str(obj.get("kind")))
    words = schema_words(version)
    problems = [SchemaProblem(v.path, v.message)
                for error in validator.iter_errors(obj) for v in describe(error, words)]
    unique = {(p.path, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (tuple(str(x) for x in p.path), p.message))
