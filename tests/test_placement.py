"""placement_of: the one answer to "where can this pod run?" (Together profile)."""

from __future__ import annotations

from typing import Any

import pytest

from pmanifest.kube.placement import Placement, placement_of
from pmanifest.kube.profile import get_profile

LABEL = "together.ai/compute-class"
PROFILE = get_profile("together")


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}}}


def where(pod: dict[str, Any]) -> tuple[bool, bool]:
    p = placement_of(pod, PROFILE)
    return p.preemptible, p.standard


TERMS = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
         "nodeSelectorTerms")

# --------------------------------------------------------------------------- basics


def test_no_placement_rule_can_run_anywhere() -> None:
    p = placement_of({}, PROFILE)
    assert p == Placement(True, True, None, None, None, None)
    assert not p.only_preemptible


def test_node_selector_selects_preemptible_and_points_at_its_key() -> None:
    p = placement_of({"nodeSelector": {LABEL: "preemptible"}}, PROFILE, ("spec",))
    assert (p.preemptible, p.standard) == (True, False)
    assert p.only_preemptible
    assert p.selects == ("spec", "nodeSelector", LABEL)
    assert p.excludes is None


def test_node_selector_on_another_value_means_standard() -> None:
    assert where({"nodeSelector": {LABEL: "standard"}}) == (False, True)


def test_node_selector_on_other_keys_leaves_both_open() -> None:
    assert where({"nodeSelector": {"nvidia.com/gpu.product": "H100"}}) == (True, True)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (expr(LABEL, "In", "preemptible"), (True, False)),
        (expr(LABEL, "In", "preemptible", "reserved"), (True, True)),
        (expr(LABEL, "In", "reserved"), (False, True)),
        (expr(LABEL, "NotIn", "preemptible"), (False, True)),
        (expr(LABEL, "NotIn", "reserved"), (True, True)),
        (expr(LABEL, "Exists"), (True, True)),
        (expr(LABEL, "DoesNotExist"), (False, True)),
    ],
    ids=["In", "In-both", "In-other", "NotIn", "NotIn-other", "Exists", "DoesNotExist"],
)
def test_operators_on_the_profile_label(expression: dict[str, Any],
                                        expected: tuple[bool, bool]) -> None:
    assert where({"affinity": required([expression])}) == expected


def test_required_not_in_points_at_the_excluding_expression() -> None:
    p = placement_of({"affinity": required([expr(LABEL, "NotIn", "preemptible")])}, PROFILE,
                     ("spec", "template", "spec"))
    assert p.excludes == ("spec", "template", "spec", *TERMS, 0, "matchExpressions", 0)
    assert p.selects is None


def test_preferred_affinity_does_not_constrain() -> None:
    pod = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [expr(LABEL, "NotIn", "preemptible")]}},
    ]}}}
    assert where(pod) == (True, True)


# --------------------------------------------------------------- terms ORed, exprs ANDed


def test_terms_are_ored() -> None:
    pod = {"affinity": required([expr(LABEL, "In", "preemptible")],
                                [expr(LABEL, "DoesNotExist")])}
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (True, True)
    assert p.selects is None and p.excludes is None


def test_every_term_excluding_keeps_it_off_preemptible() -> None:
    pod = {"affinity": required([expr(LABEL, "NotIn", "preemptible")],
                                [expr(LABEL, "DoesNotExist"), expr("zone", "In", "a")])}
    assert where(pod) == (False, True)


def test_one_term_without_exclusion_lets_preemptible_in() -> None:
    pod = {"affinity": required([expr(LABEL, "NotIn", "preemptible")],
                                [expr("nvidia.com/gpu.product", "In", "H100")])}
    assert where(pod) == (True, True)


def test_expressions_in_a_term_are_anded() -> None:
    pod = {"affinity": required([expr(LABEL, "Exists"), expr(LABEL, "NotIn", "preemptible")])}
    assert where(pod) == (False, True)
    pod = {"affinity": required([expr("zone", "In", "a"), expr(LABEL, "In", "preemptible")])}
    assert where(pod) == (True, False)


def test_node_selector_and_affinity_are_anded() -> None:
    pod = {"nodeSelector": {LABEL: "preemptible"},
           "affinity": required([expr("nvidia.com/gpu.product", "In", "H100")])}
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (True, False)
    assert p.selects == ("nodeSelector", LABEL)


def test_node_selector_is_anded_with_every_term() -> None:
    pod = {"nodeSelector": {LABEL: "preemptible"},
           "affinity": required([expr(LABEL, "NotIn", "preemptible")], [expr("zone", "Exists")])}
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (True, False)
    assert p.conflict is None


# ----------------------------------------------------------------------------- nodeName


def test_node_name_of_a_preemptible_node() -> None:
    p = placement_of({"nodeName": "gpu-preemptible-dp-0042"}, PROFILE, ("spec",))
    assert (p.preemptible, p.standard) == (True, False)
    assert p.selects == ("spec", "nodeName")


def test_node_name_of_a_standard_node() -> None:
    p = placement_of({"nodeName": "gpu-dp-0001"}, PROFILE, ("spec",))
    assert (p.preemptible, p.standard) == (False, True)
    assert p.excludes == ("spec", "nodeName")


def test_unknown_node_name_could_be_either() -> None:
    assert where({"nodeName": "cpu-node-1"}) == (True, True)


def test_node_name_against_a_selector_is_a_conflict() -> None:
    p = placement_of({"nodeName": "gpu-dp-0001", "nodeSelector": {LABEL: "preemptible"}},
                     PROFILE)
    assert (p.preemptible, p.standard) == (False, False)
    assert p.conflict == ("nodeSelector", LABEL)
    assert p.conflict_reason is not None and LABEL in p.conflict_reason


# ---------------------------------------------------------------------------- conflicts


def test_select_and_exclude_is_a_conflict_on_the_label() -> None:
    pod = {"nodeSelector": {LABEL: "preemptible"},
           "affinity": required([expr(LABEL, "NotIn", "preemptible")])}
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (False, False)
    assert p.conflict == (*TERMS, 0, "matchExpressions", 0)
    assert p.selects is None and p.excludes is None


@pytest.mark.parametrize(
    "exprs",
    [
        [expr("zone", "In", "a"), expr("zone", "In", "b")],
        [expr("zone", "In", "a"), expr("zone", "NotIn", "a")],
        [expr("zone", "Exists"), expr("zone", "DoesNotExist")],
        [expr("zone", "DoesNotExist"), expr("zone", "In", "a")],
        [expr("zone", "In", "a"), expr("zone", "DoesNotExist")],
    ],
    ids=["In-In", "In-NotIn", "Exists-DoesNotExist", "DoesNotExist-In", "In-DoesNotExist"],
)
def test_conflicts_on_other_keys(exprs: list[dict[str, Any]]) -> None:
    p = placement_of({"affinity": required(exprs)}, PROFILE)
    assert (p.preemptible, p.standard) == (False, False)
    assert p.conflict == (*TERMS, 0, "matchExpressions", 1)
    assert p.conflict_reason == "no node can satisfy the requirements on 'zone'"


def test_node_selector_conflicts_with_affinity_on_another_key() -> None:
    pod = {"nodeSelector": {"gpu": "a100"}, "affinity": required([expr("gpu", "In", "h100")])}
    p = placement_of(pod, PROFILE)
    assert p.conflict == (*TERMS, 0, "matchExpressions", 0)


def test_a_satisfiable_term_clears_the_conflict_of_another() -> None:
    pod = {"affinity": required([expr("zone", "Exists"), expr("zone", "DoesNotExist")],
                                [expr(LABEL, "In", "preemptible")])}
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (True, False)
    assert p.conflict is None and p.conflict_reason is None


def test_consistent_requirements_on_other_keys() -> None:
    exprs = [expr("zone", "In", "a", "b"), expr("zone", "NotIn", "a"), expr("zone", "Exists")]
    assert where({"affinity": required(exprs)}) == (True, True)


# -------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    "pod",
    [
        {"nodeSelector": ["together.ai/compute-class", "preemptible"]},
        {"nodeSelector": {LABEL: None}},
        {"nodeName": 42},
        {"affinity": "none"},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [1]}}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [None, "x", {"matchExpressions": [None, {"key": 7}]}]}}}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": LABEL, "operator": "In",
                                                         "values": "preemptible"}]}]}}}},
        {"tolerations": "all"},
    ],
)
def test_wrong_types_never_raise(pod: dict[str, Any]) -> None:
    placement_of(pod, PROFILE)


STANDARD_ONLY = {"nodeSelector": {LABEL: "standard"}}


@pytest.mark.parametrize(
    "pod",
    [
        {**STANDARD_ONLY, "affinity": required([expr(LABEL, "NotIn", "standard")])},
        {**STANDARD_ONLY, "affinity": required([expr(LABEL, "In", "reserved")])},
        {"affinity": required([expr("x", "Exists"), expr(LABEL, "In", "reserved"),
                               expr(LABEL, "DoesNotExist")])},
    ],
    ids=["selector-vs-NotIn", "selector-vs-In", "In-vs-DoesNotExist"],
)
def test_contradictions_among_standard_values_of_the_label(pod: dict[str, Any]) -> None:
    # Regression: each requirement alone fits some standard node, together none does.
    p = placement_of(pod, PROFILE)
    assert (p.preemptible, p.standard) == (False, False)
    last = len(pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
               ["nodeSelectorTerms"][0]["matchExpressions"]) - 1
    assert p.conflict == (*TERMS, 0, "matchExpressions", last)
    assert p.conflict_reason == f"no node can satisfy the requirements on {LABEL!r}"


def test_empty_affinity_term_matches_no_node() -> None:
    from pmanifest.kube.placement import placement_of
    from pmanifest.kube.profile import get_profile

    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}
    placement = placement_of({"affinity": {"nodeAffinity": required}}, get_profile())
    assert (placement.preemptible, placement.standard) == (False, False)
    assert placement.conflict_reason == "an empty nodeSelectorTerm matches no node"


def test_match_fields_node_name_pins_like_node_name() -> None:
    from pmanifest.kube.placement import placement_of
    from pmanifest.kube.profile import get_profile

    term = {"matchFields": [{"key": "metadata.name", "operator": "In",
                             "values": ["gpu-preemptible-dp-7"]}]}
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    placement = placement_of({"affinity": {"nodeAffinity": required}}, get_profile())
    assert (placement.preemptible, placement.standard) == (True, False)
