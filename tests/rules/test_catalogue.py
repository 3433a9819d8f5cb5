"""The catalogue says what each rule reads (``applies``, ``kinds``, ``roles``), so that
``explain`` and the engine need no check code to know it; a malformed entry is refused loudly."""

from __future__ import annotations

import pytest

from pmanifest.catalogue import RegistryError, RuleMeta, check_meta
from pmanifest.rules import registry
from tests.rules.running import catalogue_entries

ENTRY = """\
- id: PM999
  slug: an-example
  severity: warning
  summary: An example.
  rationale: Why.
  fix: How.
  examples: {fail: "", pass: ""}
"""


def test_what_a_rule_applies_to_is_read_from_its_entry() -> None:
    meta = catalogue_entries(ENTRY + "  applies: object\n", "policies/rules-x.yaml")[0]
    assert (meta.applies, meta.roles) == ("object", ())
    meta = catalogue_entries(ENTRY + "  roles: [worker, serving]\n", "policies/rules-x.yaml")[0]
    assert (meta.applies, meta.roles) == ("workload", ("worker", "serving"))


@pytest.mark.parametrize(("extra", "message"), [
    ("  applies: objects\n", "policies/rules-x.yaml:8:12: [0].applies is 'objects', which is not "
     "one of workload, object, cluster, input; did you mean 'object'?"),
    ("  roles: [daemons]\n", "policies/rules-x.yaml:8:11: [0].roles[0] is 'daemons', which is "
     "not one of worker, coordinator, serving, daemon, unknown; did you mean 'daemon'?"),
])
def test_a_malformed_entry_is_refused_at_its_position(extra: str, message: str) -> None:
    with pytest.raises(RegistryError) as raised:
        catalogue_entries(ENTRY + extra, "policies/rules-x.yaml")
    assert str(raised.value) == message


def test_roles_are_for_rules_about_pod_templates() -> None:
    meta = RuleMeta("PM999", "an-example", "warning", "s", "r", "f", applies="object",
                    roles=("worker",), source="x.yaml")
    with pytest.raises(RegistryError, match=r"^x.yaml: rule PM999: roles are for rules that "
                                            r"apply to pod templates \(applies: workload\)$"):
        check_meta(meta)


def test_the_registry_runs_each_check_as_its_entry_says() -> None:
    for rule in registry().values():
        assert rule.applies == rule.meta.applies, rule.meta.id
