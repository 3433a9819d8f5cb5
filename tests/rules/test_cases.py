"""Table-driven rule tests: each case file holds manifests and the exact findings expected.

A case file ``cases/<anything>.yaml`` looks like::

    rule: PM201            # the rule under test
    rules: [PM201, PM302]  # optional: more rules run and compared (rule always is)
    cases:
      - name: over the cap
        manifest: |
          apiVersion: batch/v1
          ...
        findings: ["12:7 grace-period-over-limit"]   # "line:col slug", in order
        rules: [PM401]              # optional, for this case: instead of the file's
        kubernetesVersion: "1.31"   # optional
        profile: together           # optional
        cluster: |                  # whole-input rules: the cluster request (also at the top)
          num_gpus: 16

A case runs only its file's rule and the rules it lists (``--select``; PM001 and PM007,
which the engine reports always, are dropped unless listed) and compares all their findings,
so a case file checks its own rules and a new rule changes no other rule's cases. A file
about kinds or roles, which proves that every rule reads them, lists the rules there were
when it was written.

For a cluster rule (``applies="cluster"``) the ``manifest`` is a cluster request body or a
saved ``tg beta clusters`` command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.lint.engine import LintOptions
from pmanifest.rules import lookup, registry
from tests.rules.running import findings_of

CASES_DIR = Path(__file__).parent / "cases"


def _case_files() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append((path.stem, data))
    return out


def _cases() -> list[Any]:
    params = []
    for stem, data in _case_files():
        for case in data["cases"]:
            assert "all_rules" not in case, f"{stem}: list the rules compared in `rules:`"
            case = {"rules": data.get("rules", []), **case}
            if "cluster" in data:
                case = {"cluster": data["cluster"], **case}
            params.append(pytest.param(data["rule"], case, id=f"{stem}: {case['name']}"))
    return params


def run_case(rule_name: str, case: dict[str, Any]) -> list[str]:
    rule = lookup(rule_name)
    assert rule is not None, f"unknown rule {rule_name}"
    compared = {rule.meta.id}
    for name in case.get("rules", ()):
        listed = lookup(name)
        assert listed is not None, f"unknown rule {name} in rules:"
        compared.add(listed.meta.id)
    options = LintOptions(
        kubernetes_version=str(case.get("kubernetesVersion", "1.31")),
        profile_name=case.get("profile", "together"),
        select=frozenset(compared),
    )
    findings = findings_of(rule, case["manifest"], "case.yaml", options, case.get("cluster", ""))
    return [f"{f.line}:{f.column} {f.slug}" for f in findings if f.rule in compared]


@pytest.mark.parametrize(("rule_name", "case"), _cases())
def test_rule_case(rule_name: str, case: dict[str, Any]) -> None:
    assert run_case(rule_name, case) == case["findings"]


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    failing: set[str] = set()
    passing: set[str] = set()
    for _, data in _case_files():
        rule = lookup(data["rule"])
        assert rule is not None
        for case in data["cases"]:
            mine = [f for f in case["findings"] if f.endswith(" " + rule.meta.slug)]
            (failing if mine else passing).add(rule.meta.id)
    missing = {r for r in registry() if r not in failing or r not in passing}
    assert not missing, f"rules without both a failing and a passing case: {sorted(missing)}"
