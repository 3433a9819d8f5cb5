"""Each rule's documented examples are run, so the docs cannot drift from the code."""

from __future__ import annotations

import pytest

from pmanifest.lint.engine import LintOptions
from pmanifest.rules import Rule, registry
from tests.rules.running import findings_of


@pytest.mark.parametrize("rule", list(registry().values()), ids=lambda r: r.meta.id)
def test_failing_example_is_flagged(rule: Rule) -> None:
    findings = findings_of(rule, rule.meta.example_fail, "example.yaml", LintOptions(),
                           rule.meta.example_cluster)
    assert rule.meta.id in {f.rule for f in findings}


@pytest.mark.parametrize("rule", list(registry().values()), ids=lambda r: r.meta.id)
def test_passing_example_is_clean(rule: Rule) -> None:
    findings = findings_of(rule, rule.meta.example_pass, "example.yaml", LintOptions(),
                           rule.meta.example_cluster)
    flagged = {f.rule for f in findings}
    assert rule.meta.id not in flagged
    assert "PM002" not in flagged, [f.message for f in findings if f.rule == "PM002"]
