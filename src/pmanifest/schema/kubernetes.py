"""Kubernetes schema validation with the strict schemas shipped by kubernetes-validate.

Validators are compiled once per (Kubernetes version, apiVersion, kind) and reused. Only the
built-in API groups are validated: the core group, groups without a dot (apps, batch, policy,
autoscaling) and ``*.k8s.io`` groups; any other group is a custom resource and is not checked
here (``scheduling.volcano.sh`` is not ``scheduling.k8s.io``).

Some fields are marked required by the OpenAPI documents of some versions although the API
server defaults them (``SERVER_DEFAULTED``). They are dropped from ``required`` when the
schemas load, so the compiled check, jsonschema and the messages all agree that a manifest may
omit them. Errors are worded by :mod:`pmanifest.schema.words`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import pathlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from pmanifest.errors import ConfigError
from pmanifest.loader.positions import Path
from pmanifest.schema.placeholders import is_placeholder

if TYPE_CHECKING:  # the error translator is imported when an object is invalid
    from pmanifest.schema.words import Words

DEFAULT_KUBERNETES_VERSION = "1.31"
__all__ = ["DEFAULT_KUBERNETES_VERSION", "SERVER_DEFAULTED", "SchemaProblem", "partial_problems",
           "resolve_version", "supported_versions", "validate", "version_tuple"]

# (definition, field) -> why a manifest may omit it although some versions' OpenAPI marks it
# required (the versions are those of kubernetes-validate's schemas; see tests/test_schema.py).
SERVER_DEFAULTED: dict[tuple[str, str], str] = {
    ("io.k8s.api.apps.v1.StatefulSetSpec", "serviceName"):
        "optional in the API; the OpenAPI marked it required until 1.32",
    ("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern", "status"):
        'defaulted to "True" by the API server; required in the OpenAPI until 1.34',
    ("io.k8s.api.batch.v1.PodFailurePolicyRule", "onPodConditions"):
        "an onExitCodes rule needs none; required in the OpenAPI until 1.28",
    ("io.k8s.api.rbac.v1.RoleRef", "apiGroup"):
        "defaulted to rbac.authorization.k8s.io; required in the OpenAPI until 1.35",
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "podSelector"):
        "omitted means every pod of the namespace; required in the OpenAPI until 1.33",
    ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"):
        "may be omitted (no endpoints); required in the OpenAPI until 1.35",
}
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,99}$")
_GROUP_VERSION = re.compile(r"^(?:(?P<group>[a-z0-9.-]{1,253})/)?(?P<version>v[a-z0-9]{1,20})$")


class SchemaProblem(NamedTuple):
    """A schema violation at a path, worded for the user."""

    path: Path
    message: str


@functools.cache
def _schema_root() -> Any:
    return _package() / "kubernetes-json-schema"


@functools.cache
def _package() -> pathlib.Path:
    # Locate the package without importing it: kubernetes_validate/__init__ imports
    # jsonschema and more, which a valid manifest never needs (see the fast path).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("kubernetes-validate is not installed; reinstall pmanifest")
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


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


def schema_file(api_version: str, kind: str) -> str | None:
    """The file name of a built-in kind's schema, or None for a custom resource (or a name
    that cannot be one): ``apps/v1 Deployment`` -> ``deployment-apps-v1.json``."""
    match = _GROUP_VERSION.match(api_version)
    if match is None or not _KIND.match(kind):
        return None
    group, version = match.group("group"), match.group("version")
    if group is None:
        return f"{kind.lower()}-{version}.json"
    if "." in group and not group.endswith(".k8s.io"):
        return None  # a custom resource's group
    return f"{kind.lower()}-{group.split('.')[0]}-{version}.json"


def _without_defaulted(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    dropped = {field for (definition, field) in SERVER_DEFAULTED if definition == name}
    required = schema.get("required")
    if dropped and isinstance(required, list) and dropped & set(required):
        schema = {**schema, "required": [f for f in required if f not in dropped]}
    return schema


@functools.cache
def definitions_document(version: str) -> dict[str, Any]:
    """``_definitions.json`` of a version, with the server-defaulted fields made optional."""
    document: dict[str, Any] = _json(_schema_dir(version).joinpath("_definitions.json"))
    document["$defs"] = {name: _without_defaulted(name, schema)
                         for name, schema in document["$defs"].items()}
    return document


def _definitions(version: str) -> dict[str, Any]:
    defs: dict[str, Any] = definitions_document(version)["$defs"]
    return defs


@functools.cache
def _kind_schema(version: str, api_version: str, kind: str) -> dict[str, Any] | None:
    name = schema_file(api_version, kind)
    path = _schema_dir(version).joinpath(name) if name is not None else None
    if path is None or not path.is_file():
        return None
    schema: dict[str, Any] = _json(path)
    group_version = api_version.rpartition("/")
    suffix = f".{group_version[2]}.{kind}"
    for definition, _ in SERVER_DEFAULTED:
        if definition.endswith(suffix):
            schema = _without_defaulted(definition, schema)
    return schema


@functools.cache
def definition_fields(version: str, name: str) -> frozenset[str]:
    """The properties the schema of ``version`` gives one definition, e.g.
    ``definition_fields("1.27", "jobspec-batch-v1")`` (empty when it has no such file)."""
    path = _schema_dir(version).joinpath(f"{name}.json")
    if "/" in name or not path.is_file():
        return frozenset()
    return frozenset(_json(path).get("properties", {}))


def _json(path: pathlib.Path) -> Any:
    """A schema file of kubernetes-validate, through the one reader."""
    from pmanifest.io.reading import read_package_file

    return json.loads(read_package_file(str(path)))


@functools.cache
def _fast_check(version: str, api_version: str, kind: str) -> Callable[[Any], bool] | None:
    """The compiled yes/no validator (see fastschema), or None to use jsonschema alone."""
    from pmanifest.schema.fast import compile_schema

    schema = _kind_schema(version, api_version, kind)
    return compile_schema(schema, _definitions(version)) if schema is not None else None


@functools.cache
def validator_for(version: str, api_version: str, kind: str) -> Any | None:
    """A compiled validator, or None when the schema does not know the kind (a CRD)."""
    from referencing import Registry, Resource

    schema = _kind_schema(version, api_version, kind)
    if schema is None:
        return None
    schema = {**schema, "$id": f"https://kubernetes.io/api/{schema_file(api_version, kind)}"}
    resource = Resource.from_contents(definitions_document(version))
    registry = Registry().with_resource("https://kubernetes.io/api/_definitions.json", resource)
    return _validator_class()(schema, registry=registry)


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 asserting the integer formats (int32, int64), like the compiled check."""
    from jsonschema import Draft202012Validator, validators

    from pmanifest.schema.fast import integer_format

    return validators.extend(Draft202012Validator,  # type: ignore[no-untyped-call]
                             {"format": integer_format})


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
    from pmanifest.schema.words import describe

    words = schema_words(version)
    problems = [SchemaProblem(v.path, v.message) for error in validator.iter_errors(obj)
                if not _unwritten(error) for v in describe(error, words)]
    unique = {(p.path, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (tuple(str(x) for x in p.path), p.message))


def _unwritten(error: Any) -> bool:
    """A required field missing inside ``status`` (controllers write status and the API server
    ignores it on create and apply, so nothing there is demanded; its types still are), or a
    value of the wrong type that is wholly a placeholder (not rendered yet)."""
    if error.validator in ("type", "enum"):
        return is_placeholder(error.instance)
    path = error.absolute_path
    return error.validator == "required" and len(path) > 0 and path[0] == "status"


# --- partial objects (a patch, the podTemplate overlay of a spec) --------------------------

def _partial(schema: Any) -> Any:
    """``schema`` with no ``required`` anywhere: what a partial object must satisfy (its
    fields known and well typed, none demanded)."""
    if not isinstance(schema, dict):
        return schema
    out = {key: value for key, value in schema.items() if key != "required"}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _partial(out[key])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _partial(sub) for name, sub in out["properties"].items()}
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [_partial(sub) for sub in out[key]]
    return out


@functools.cache
def _partial_definitions(version: str) -> dict[str, Any]:
    return {name: _partial(schema) for name, schema in _definitions(version).items()}


@functools.cache
def _partial_checks(version: str, definition: str, key: str) -> tuple[Any, Any]:
    """(compiled check or None, jsonschema validator) of ``{key: <definition>}``."""
    from pmanifest.schema.fast import compile_schema

    defs = _partial_definitions(version)
    root = {"type": "object", "properties": {key: {"$ref": f"#/$defs/{definition}"}}}
    return compile_schema(root, defs), _validator_class()({**root, "$defs": defs})


def partial_problems(data: Any, version: str, definition: str, key: str
                     ) -> list[tuple[Path, str, bool]]:
    """(path, message, at the key) of every problem of ``{key: data}`` against one definition
    of the version's strict schema, required fields aside (paths start with ``key``)."""
    fast, validator = _partial_checks(version, definition, key)
    wrapped = {key: data}
    if fast is not None and fast(wrapped):
        return []
    from pmanifest.schema.words import describe

    words = schema_words(version)
    found = [(v.path, v.message, v.at_key)
             for error in validator.iter_errors(wrapped) for v in describe(error, words)]
    return sorted(set(found), key=lambda p: (tuple(str(x) for x in p[0]), p[1]))


# --- a hint for a known field at the wrong level ------------------------------------------------

_LEVELS = (  # where a field may belong, in the order a hint names them
    ("io.k8s.api.core.v1.PodSpec", "the pod spec"),
    ("io.k8s.api.core.v1.Container", "a container"),
    ("io.k8s.api.batch.v1.JobSpec", "the Job spec"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "the Deployment spec"),
    ("io.k8s.api.core.v1.PodTemplateSpec", "the pod template"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "metadata"),
)


@functools.cache
def schema_words(version: str) -> Words:
    from pmanifest.schema.words import Words

    definitions = _definitions(version)
    levels = [(set(definitions.get(name, {}).get("properties", {})), where)
              for name, where in _LEVELS]

    def misplaced(path: Path, key: str) -> str | None:
        places = [where for fields, where in levels if key in fields]
        if not places:
            return None
        return f"{key!r} belongs on {' or '.join(places)}, not here: move it there"

    return Words(root="the object", unknown_hint=misplaced)
