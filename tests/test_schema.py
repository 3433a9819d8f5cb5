"""Kubernetes schema validation: messages, server-defaulted fields, and the compiled fast path
agreeing with jsonschema on valid and invalid objects."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pmanifest import schema

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
    assert full_errors(JOB)  # the 1.31 OpenAPI document marks status required
    assert schema.validate(JOB, "1.31") == []


def test_messages_and_paths() -> None:
    bad = copy.deepcopy(JOB)
    pod = bad["spec"]["template"]["spec"]
    pod["terminationGracePeriodSeconds"] = "300"
    del pod["containers"][0]["name"]
    pod["containers"][0]["bogus"] = 1
    problems = {(p.path, p.message) for p in schema.validate(bad, "1.31")}
    base = ("spec", "template", "spec")
    assert problems == {
        ((*base, "terminationGracePeriodSeconds"), "expected integer, got string"),
        ((*base, "containers", 0, "bogus"), "unknown field 'bogus'"),
        ((*base, "containers", 0), "missing required field 'name'"),
    }


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


@settings(max_examples=300, deadline=None)
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


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e", "f"]), _json, max_size=4))
def test_fast_combinators_agree_with_jsonschema(value: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from pmanifest.fastschema import compile_schema

    fast = compile_schema(COMBINATORS, {})
    assert fast is not None
    plain = {k: v for k, v in COMBINATORS.items() if k != "errorMessage"}
    assert fast(value) == Draft202012Validator(plain).is_valid(value)
