"""Table-driven rule tests: each case file holds manifests and the exact findings expected.

A case file ``cases/<anything>.yaml`` looks like::

    rule: PM201            # the rule under test; only its findings are compared...
    cases:
      - name: over the cap
        manifest: |
          apiVersion: batch/v1
          ...
        findings: ["12:7 grace-period-over-limit"]   # "line:col slug", in order
        rules: [PM101, PM103]   # ...or those of these rules (also at the top)...
        all_rules: false   # ...or, when true, every finding (a new rule changes these cases)
        kubernetesVersion: "1.31"   # optional
        profile: together           # optional
        cluster: |                  # whole-input rules: the cluster request (also at the top)
          num_gpus: 16

For a cluster rule (``applies="cluster"``) the ``manifest`` is a cluster request body or a
saved ``tg beta clusters`` command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.lint import LintOptions
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
            for shared in ("cluster", "rules"):
                if shared in data:
                    case = {shared: data[shared], **case}
            params.append(pytest.param(data["rule"], case, id=f"{stem}: {case['name']}"))
    return params


def run_case(rule_name: str, case: dict[str, Any]) -> list[str]:
    rule = lookup(rule_name)
    assert rule is not None, f"unknown rule {rule_name}"
    options = LintOptions(
        kubernetes_version=str(case.get("kubernetesVersion", "1.31")),
        profile_name=case.get("profile", "together"),
    )
    findings = findings_of(rule, case["manifest"], "case.yaml", options, case.get("cluster", ""))
    selected = {rule.meta.id}
    for name in case.get("rules", ()):
        other = lookup(name)
        assert other is not None, f"unknown rule {name}"
        selected.add(other.meta.id)
    return [
        f"{f.line}:{f.column} {f.slug}"
        for f in findings
        if case.get("all_rules") or f.rule in selected
    ]


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
