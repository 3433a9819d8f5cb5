"""The compiled yes/no check of the spec schema agrees with jsonschema (so a valid spec can
skip jsonschema, and an invalid one still gets jsonschema's exact error)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pmanifest.render.spec import SPEC_SCHEMA
from pmanifest.schema.datafile import compiled_check
from tests.hypothesis_profiles import examples
from tests.treepaths import all_paths

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
SPECS = [yaml.safe_load(p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))]
VALIDATOR = Draft202012Validator(SPEC_SCHEMA)

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 400) | st.floats(allow_nan=False)
    | st.sampled_from(["", "worker", "serving", "sigterm", "preStop", "/mnt/shared/x", "Bad_Name",
                       "a" * 70, "1.31", "preemptible", "standard", "Memory",
                       "64Gi", "25%", "/health", "metadata.name", "limits.cpu"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "role", "image", "gpus", "command", "checkpoint", "trigger",
                         "dir", "replicas", "env", "x", "volumes", "mountPath", "claimName",
                         "emptyDir", "medium", "secretKeyRef", "key", "fieldRef", "fieldPath",
                         "envFrom", "secretRef", "probes", "readiness", "httpGet", "port",
                         "strategy", "maxSurge", "annotations"]), inner, max_size=3),
    max_leaves=8,
)


def test_examples_are_valid_on_bothall_paths() -> None:
    fast = compiled_check(SPEC_SCHEMA)
    assert fast is not None
    for spec in SPECS:
        assert fast(spec) and VALIDATOR.is_valid(spec)


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(range(len(SPECS))), st.data(), _values)
def test_fast_check_agrees_with_jsonschema(index: int, data: st.DataObject, value: Any) -> None:
    spec = copy.deepcopy(SPECS[index])
    path = data.draw(st.sampled_from(all_paths(spec)[1:]))
    node: Any = spec
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    fast = compiled_check(SPEC_SCHEMA)
    assert fast is not None
    assert fast(spec) == VALIDATOR.is_valid(spec)
