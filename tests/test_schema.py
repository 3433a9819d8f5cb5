"""Kubernetes schema validation: messages, server-defaulted fields, and the compiled fast path
agreeing with jsonschema on valid and invalid objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmanifest.schema import kubernetes as schema
from tests.hypothesis_profiles import examples

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "labels": {"a": "b"}},
    "spec": {
        "backoffLimit": 3,
        "podFailurePolicy": {"rules": [{"action": "Ignore",
                                        "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"spec": {
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 300,
            "containers": [{"name": "a", "image": "b", "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "2"}}}],
            "volumes": [{"name": "s", "persistentVolumeClaim": {"claimName": "x"}}],
        }},
    },
}


def full_errors(obj: dict[str, Any], version: str = "1.31") -> bool:
    validator = schema.validator_for(version, obj["apiVersion"], obj["kind"])
    return any(True for _ in validator.iter_errors(obj))


def test_valid_job_has_no_problems() -> None:
    assert schema.validate(JOB, "1.31") == []


def test_server_defaulted_status_is_not_reported_before_1_37() -> None:
    assert schema.validate(JOB, "1.31") == []  # the 1.31 OpenAPI marks status required


def _raw_required(version: str, definition: str) -> list[str]:
    import json

    raw = json.loads(schema._schema_dir(version).joinpath("_definitions.json").read_text())
    required: list[str] = raw["$defs"].get(definition, {}).get("required", [])
    return required


@pytest.mark.parametrize(("definition", "field"), sorted(schema.SERVER_DEFAULTED))
def test_each_server_defaulted_entry_is_required_somewhere_and_never_reported(
        definition: str, field: str) -> None:
    """Each entry is real (some shipped OpenAPI marks it required) and, once loaded, no
    version requires it any more (so neither the compiled check nor jsonschema reports it)."""
    versions = schema.supported_versions()
    assert any(field in _raw_required(v, definition) for v in versions), "stale entry"
    for version in versions:
        patched = schema._definitions(version).get(definition, {})
        assert field not in patched.get("required", []), version


OMITTED = [  # (object omitting a server-defaulted field, versions whose OpenAPI requires it)
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
      "spec": {"selector": {"matchLabels": {"a": "b"}},
               "template": {"metadata": {"labels": {"a": "b"}},
                            "spec": {"containers": [{"name": "db", "image": "postgres"}]}}}},
     "1.32"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
      "metadata": {"name": "r"}, "roleRef": {"kind": "Role", "name": "reader"},
      "subjects": [{"kind": "User", "name": "ana", "apiGroup": "rbac.authorization.k8s.io"}]},
     "1.35"),
    ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
      "spec": {"policyTypes": ["Ingress"]}}, "1.33"),
    ({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "e"},
      "addressType": "IPv4"}, "1.35"),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
      "spec": {"podFailurePolicy": {"rules": [{"action": "Ignore", "onExitCodes": {
          "operator": "In", "values": [143]}}]},
               "template": {"spec": {"restartPolicy": "Never",
                                     "containers": [{"name": "a", "image": "b"}]}}}}, "1.28"),
]


@pytest.mark.parametrize(("obj", "version"), OMITTED, ids=lambda v: str(v)[:60])
def test_objects_omitting_a_server_defaulted_field_are_valid(obj: dict[str, Any],
                                                              version: str) -> None:
    assert schema.validate(obj, version) == []
    fast = schema._fast_check(version, obj["apiVersion"], obj["kind"])
    assert fast is not None and fast(obj)  # the compiled check agrees: no slow path


def test_a_truly_required_field_is_still_reported() -> None:
    obj = copy.deepcopy(OMITTED[0][0])
    del obj["spec"]["selector"]
    assert [p.message for p in schema.validate(obj, "1.31")] == [
        "spec is missing 'selector'; add it"]


def test_custom_resource_groups_are_not_core_groups() -> None:
    """scheduling.volcano.sh is not scheduling.k8s.io (which has a PodGroup at 1.37)."""
    podgroup = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": "pg"}, "spec": {"minMember": 2}}
    assert schema.validate(podgroup, "1.37") == []
    assert schema.schema_file("scheduling.volcano.sh/v1beta1", "PodGroup") is None
    assert schema.schema_file("scheduling.k8s.io/v1beta1", "PodGroup") == \
        "podgroup-scheduling-v1beta1.json"
    assert schema.schema_file("apps/v1", "Deployment") == "deployment-apps-v1.json"
    assert schema.schema_file("v1", "Pod") == "pod-v1.json"


def test_odd_kinds_and_groups_are_not_looked_up() -> None:
    """A kind of a few hundred characters or with a slash names no schema file."""
    for api_version, kind in (("v1", "P" * 300), ("v1", "../pod"), ("x/y/v1", "Pod")):
        assert schema.validate({"apiVersion": api_version, "kind": kind}, "1.31") == []


def test_unknown_kinds_are_skipped() -> None:
    crd = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": 1}
    assert schema.validate(crd, "1.31") == []


def test_versions() -> None:
    assert schema.resolve_version("v1.30.4") == "1.30"
    assert schema.supported_versions()[0] == "1.25"


_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
_json = st.recursive(
    _scalars | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_paths = st.lists(st.sampled_from(["spec", "template", "metadata", "containers", 0, "name",
                                   "restartPolicy", "terminationGracePeriodSeconds", "resources",
                                   "limits", "labels", "podFailurePolicy", "rules"]), max_size=6)


@settings(max_examples=examples(300), deadline=None)
@given(_paths, _json)
def test_fast_path_agrees_with_jsonschema(path: list[Any], value: Any) -> None:
    """Mutate one place of a valid Job; the compiled check and jsonschema must agree."""
    obj = copy.deepcopy(JOB)
    obj["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] = "True"
    node: Any = obj
    for part in path[:-1]:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if in_dict or in_list:
            node = node[part]
        else:
            break
    if path and isinstance(node, dict):
        node[path[-1]] = value
    fast = schema._fast_check("1.31", "batch/v1", "Job")
    assert fast is not None
    assert fast(obj) == (not full_errors(obj))


COMBINATORS: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        "a": {"anyOf": [{"type": "string", "pattern": "^x"}, {"type": "integer",
                                                               "exclusiveMinimum": 0}]},
        "b": {"not": {"const": "no"}, "maxLength": 3},
        "c": {"type": "array", "contains": {"const": 1}, "maxItems": 2},
        "d": {"allOf": [{"minimum": 1}, {"exclusiveMaximum": 10}]},
        "e": {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "boolean"}},
    },
    "errorMessage": "ignored: words a policy's violations",
}


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e", "f"]), _json, max_size=4))
def test_fast_combinators_agree_with_jsonschema(value: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from pmanifest.schema.fast import compile_schema

    fast = compile_schema(COMBINATORS, {})
    assert fast is not None
    plain = {k: v for k, v in COMBINATORS.items() if k != "errorMessage"}
    assert fast(value) == Draft202012Validator(plain).is_valid(value)


DEFINITIONS: dict[str, Any] = {
    "Node": {"type": "object", "required": ["name"],
             "properties": {"name": {"type": "string"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                            "odd": {"$ref": "#/$defs/Odd"}}},
    "Odd": {"type": "object", "dependentRequired": {"a": ["b"]}},  # not compiled: unknown
    "Unused": {"type": "object", "unevaluatedProperties": False},
}
ROOT = {"$ref": "#/$defs/Node"}


def test_definitions_compile_when_a_value_reaches_them() -> None:
    """A definition is compiled on first use: one with a keyword the compiler does not know
    makes only the values that reach it undecided (False: the caller asks jsonschema)."""
    from pmanifest.schema.fast import Compiler, compile_schema

    fast = compile_schema(ROOT, DEFINITIONS)
    assert fast is not None  # neither Odd nor Unused stops the compiler
    assert fast({"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]})
    assert not fast({"name": "a", "children": [{"children": []}]})  # recursion: b lacks name
    assert not fast({"name": "a", "odd": {"a": 1, "b": 2}})  # valid, but undecided
    assert fast({"name": "a", "children": [{"name": "b"}]})  # still decided afterwards
    compiler = Compiler(DEFINITIONS)
    compiler.schema(ROOT)
    assert set(compiler.compiled) == {"Node"}  # only referenced, nothing compiled yet


def test_an_undecided_value_gets_jsonschema_s_answer() -> None:
    """What schema.validate does with an undecided value: jsonschema, which finds nothing."""
    from jsonschema import Draft202012Validator

    document = {"$defs": DEFINITIONS, **ROOT}
    assert Draft202012Validator(document).is_valid({"name": "a", "odd": {"a": 1, "b": 2}})
    assert not Draft202012Validator(document).is_valid({"name": "a", "odd": {"a": 1}})
