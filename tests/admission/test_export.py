"""The exported objects themselves: valid against the Kubernetes schema of every supported
version from 1.30, accepted by kubectl's client-side parsing, and their CEL compiled and run
by a second implementation (cel-python) that agrees with the one the differential test
uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.admission.export import ExportOptions, objects, render
from pmanifest.admission.rules import EXPORTED, HEADROOM
from pmanifest.catalogue import builtin
from pmanifest.kube.profile import get_profile, profile_names
from pmanifest.schema.kubernetes import supported_versions, validate, validator_for

from .corpus import case_objects
from .test_differential import lint_verdict, policies
from .vap import evaluate, python_program

VERSIONS = [v for v in supported_versions() if tuple(map(int, v.split("."))) >= (1, 30)]
KUBECTL = Path(sys.executable).parent / "kubectl"


def _exported(profile: str, action: str = "Warn") -> list[dict[str, Any]]:
    return objects(builtin(), ExportOptions(get_profile(profile), action))


def _expressions(obj: dict[str, Any]) -> list[str]:
    spec = obj["spec"]
    return [*(c["expression"] for c in spec["matchConditions"]),
            *(v["expression"] for v in spec["variables"]),
            *(v[key] for v in spec["validations"] for key in ("expression", "messageExpression"))]


@pytest.mark.parametrize("profile", profile_names())
def test_every_object_is_valid_in_every_supported_version(profile: str) -> None:
    assert VERSIONS and VERSIONS[0] == "1.30"
    exported = _exported(profile, "Deny")
    for version in VERSIONS:
        for obj in exported:
            assert validator_for(version, obj["apiVersion"], obj["kind"]) is not None
            assert validate(obj, version) == [], (version, obj["metadata"]["name"])


def test_one_policy_and_binding_per_rule_named_after_it() -> None:
    exported = _exported("together")
    names = [(o["kind"], o["metadata"]["name"], o["metadata"]["annotations"]["pmanifest.io/rule"])
             for o in exported]
    catalogue = builtin()
    expected = []
    for rule_id in sorted(EXPORTED):
        name = f"pmanifest-{rule_id.lower()}-{catalogue[rule_id].slug}"
        expected += [("ValidatingAdmissionPolicy", name, rule_id),
                     ("ValidatingAdmissionPolicyBinding", name, rule_id)]
    assert names == expected
    assert "pmanifest-pm201-grace-period-over-limit" in [n for _, n, _ in names]
    bindings = [o for o in exported if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {tuple(b["spec"]["validationActions"]) for b in bindings} == {("Warn",)}


@pytest.mark.parametrize("profile", ["gke", "aks"])
def test_kubectl_parses_every_object_offline(profile: str, tmp_path: Path) -> None:
    """``kubectl apply --dry-run=client`` asks the API server for its discovery and schema
    even in client mode, and none can run here; ``kubectl annotate --local --dry-run=client``
    parses and maps every object with kubectl's own client-side decoding and no server."""
    text = render(builtin(), ExportOptions(get_profile(profile)))
    result = subprocess.run(
        [str(KUBECTL), "annotate", "--local", "--dry-run=client", "-f", "-", "-o", "yaml",
         "pmanifest.io/checked=true"],
        input=text, capture_output=True, text=True, check=False, timeout=120,
        env={"KUBECONFIG": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    parsed = [d for d in yaml.safe_load_all(result.stdout) if d]
    items = parsed[0]["items"] if parsed[0]["kind"] == "List" else parsed
    assert len(items) == 2 * len(EXPORTED)
    assert [i["metadata"]["name"] for i in items] == \
        [o["metadata"]["name"] for o in _exported(profile)]


@pytest.mark.parametrize("profile", profile_names())
def test_cel_python_compiles_every_expression(profile: str) -> None:
    for obj in _exported(profile):
        if obj["kind"] == "ValidatingAdmissionPolicy":
            for expression in _expressions(obj):
                python_program(expression)


@pytest.mark.parametrize("profile", ["together", "gke"])
@pytest.mark.parametrize("rule_id", sorted(EXPORTED))
def test_cel_python_and_cel_rust_agree_on_the_rules_cases(rule_id: str, profile: str) -> None:
    """Each policy on the objects of its rule's case file that reach admission (cel-python is
    too slow for the whole differential test)."""
    policy = policies(profile)[rule_id]
    seen = 0
    for item in case_objects():
        if item.source.startswith(f"{rule_id}.yaml") and lint_verdict(item, profile) is not None:
            assert evaluate(policy, item.data, python=True) == evaluate(policy, item.data)
            seen += 1
    assert seen


def test_headroom_is_the_rules() -> None:
    from pmanifest.rules.jobs import HEADROOM as LINT_HEADROOM

    assert HEADROOM == LINT_HEADROOM


@pytest.mark.parametrize("kinds", [(), ("Job",), ("batch/Job",), ("apps/Job",), ("x/Pod", "Pod")])
@pytest.mark.parametrize(("group", "kind"), [("", "Pod"), ("batch", "Job"), ("apps", "Job")])
def test_kind_matches_as_lint(kinds: tuple[str, ...], group: str, kind: str) -> None:
    from pmanifest.admission.scope import kind_matches
    from pmanifest.kube.workloads import kind_matches as lints

    assert kind_matches(kinds, group, kind) == lints(kinds, group, kind)
