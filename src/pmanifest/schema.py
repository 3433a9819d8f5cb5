"""Kubernetes schema validation with the strict schemas shipped by kubernetes-validate.

Validators are compiled once per (Kubernetes version, apiVersion, kind) and reused. Errors are
reduced to a path and a short message; fields the API server defaults (so a manifest may omit
them although older OpenAPI documents mark them required) are not reported.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import pathlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pmanifest.document import Path
from pmanifest.errors import ConfigError

DEFAULT_KUBERNETES_VERSION = "1.31"

# (parent path pattern, property) pairs the API server defaults although the schema of some
# versions marks them required. Patterns match the dotted path with list indexes as [*].
_SERVER_DEFAULTED = {
    ("podFailurePolicy.rules[*].onPodConditions[*]", "status"),
}
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


@dataclass(frozen=True)
class SchemaProblem:
    path: Path
    message: str


@functools.cache
def _schema_root() -> Any:
    # Locate the package without importing it: kubernetes_validate/__init__ imports
    # jsonschema and more, which a valid manifest never needs (see the fast path).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("kubernetes-validate is not installed; reinstall pmanifest")
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


@functools.cache
def supported_versions() -> tuple[str, ...]:
    versions = []
    for entry in _schema_root().iterdir():
        match = re.match(r"^v(\d+)\.(\d+)\.\d+-local-strict$", entry.name)
        if match:
            versions.append((int(match.group(1)), int(match.group(2))))
    return tuple(f"{a}.{b}" for a, b in sorted(versions))


def resolve_version(version: str) -> str:
    """``"1.31"``, ``"v1.31.4"`` -> ``"1.31"``; a ConfigError for versions with no schema."""
    match = _VERSION.match(str(version).strip())
    known = supported_versions()
    if not match or f"{match.group(1)}.{match.group(2)}" not in known:
        raise ConfigError(
            f"unsupported Kubernetes version {version!r}; supported: {known[0]} to {known[-1]}"
        )
    return f"{match.group(1)}.{match.group(2)}"


def version_tuple(version: str) -> tuple[int, int]:
    major, minor = resolve_version(version).split(".")
    return int(major), int(minor)


def _schema_dir(version: str) -> Any:
    return _schema_root().joinpath(f"v{version}.0-local-strict")


@functools.cache
def _registry(version: str) -> Any:
    from referencing import Registry, Resource

    definitions = json.loads(_schema_dir(version).joinpath("_definitions.json").read_text())
    resource = Resource.from_contents(definitions)
    return Registry().with_resource("https://kubernetes.io/api/_definitions.json", resource)


def _schema_file(api_version: str, kind: str) -> str:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.cache
def _definitions(version: str) -> dict[str, Any]:
    text = _schema_dir(version).joinpath("_definitions.json").read_text()
    definitions: dict[str, Any] = json.loads(text)["$defs"]
    return definitions


@functools.cache
def definition_fields(version: str, name: str) -> frozenset[str]:
    """The properties the schema of ``version`` gives one definition, e.g.
    ``definition_fields("1.27", "jobspec-batch-v1")`` (empty when it has no such file)."""
    path = _schema_dir(version).joinpath(f"{name}.json")
    if "/" in name or not path.is_file():
        return frozenset()
    return frozenset(json.loads(path.read_text()).get("properties", {}))


@functools.cache
def _fast_check(version: str, api_version: str, kind: str) -> Callable[[Any], bool] | None:
    """The compiled yes/no validator (see fastschema), or None to use jsonschema alone."""
    from pmanifest.fastschema import compile_schema

    path = _schema_dir(version).joinpath(_schema_file(api_version, kind))
    if "/" in kind or not path.is_file():
        return None
    return compile_schema(json.loads(path.read_text()), _definitions(version))


@functools.cache
def validator_for(version: str, api_version: str, kind: str) -> Any | None:
    """A compiled validator, or None when the schema does not know the kind (a CRD)."""
    from jsonschema import Draft202012Validator

    path = _schema_dir(version).joinpath(_schema_file(api_version, kind))
    if "/" in kind or not path.is_file():
        return None
    schema = json.loads(path.read_text())
    schema["$id"] = "https://kubernetes.io/api/" + _schema_file(api_version, kind)
    return Draft202012Validator(schema, registry=_registry(version))


def validate(obj: dict[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of one object (empty when valid or of an unknown kind)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []
    fast = _fast_check(version, api_version, kind)
    if fast is not None and fast(obj):
        return []  # valid: the common case, answered without jsonschema
    validator = validator_for(version, api_version, kind)
    if validator is None:
        return []
    problems = [p for error in validator.iter_errors(obj) for p in _problems(error)]
    unique = {(p.path, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (tuple(str(x) for x in p.path), p.message))


def _pattern(path: Path) -> str:
    out = ""
    for part in path:
        out += "[*]" if isinstance(part, int) else ("." if out else "") + part
    return out


def _problems(error: Any) -> Iterator[SchemaProblem]:
    if error.context:
        # anyOf/oneOf: report the branch that got furthest, not the whole alternative
        from jsonschema.exceptions import best_match

        best = best_match(error.context)
        if best is not None and best is not error:
            yield from _problems(best)
            return
    path: Path = tuple(error.absolute_path)
    validator = error.validator
    if validator == "required":
        missing = [p for p in error.validator_value if p not in (error.instance or {})]
        pattern = _pattern(path)
        for prop in missing:
            if any(pattern.endswith(parent) and prop == name for parent, name in _SERVER_DEFAULTED):
                continue
            yield SchemaProblem(path, f"missing required field {prop!r}")
        return
    if validator == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in allowed:
                yield SchemaProblem((*path, key), f"unknown field {key!r}")
        return
    if validator == "type":
        expected = error.validator_value
        expected_text = " or ".join(t for t in expected if t != "null") if isinstance(
            expected, list) else expected
        yield SchemaProblem(path, f"expected {expected_text}, got {json_type(error.instance)}")
        return
    if validator == "enum":
        allowed_values = ", ".join(repr(v) for v in error.validator_value if v is not None)
        yield SchemaProblem(path, f"{error.instance!r} is not one of {allowed_values}")
        return
    message = error.message
    if len(message) > 200:
        message = message[:197] + "..."
    yield SchemaProblem(path, message)


def json_type(value: Any) -> str:
    """The JSON Schema type name of a loaded YAML value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
