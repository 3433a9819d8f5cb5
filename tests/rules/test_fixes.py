"""Fixes checks propose (``Hit.fix``, shown by ``--format json``) are correct: applied to the
manifest of every case that has one, the finding is gone and no schema error came with it."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

import yaml

from pmanifest.kube.document import Finding, Fix
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.loader.positions import dotted
from tests.rules.test_cases import _case_files

# rules whose checks propose a fix (at least these; a new rule's fixes are checked on its own
# cases without a change here)
FIXING = {"PM102", "PM103", "PM201", "PM401", "PM402"}


def _applied(data: Any, fix: Fix) -> Any:
    out = copy.deepcopy(data)
    node = out
    for key in fix.path[:-1]:
        node = node[key]
    if fix.remove:
        del node[fix.path[-1]]
    else:
        node[fix.path[-1]] = fix.value
    return out


def _lint(data: Any, rules: set[str], profile: str) -> list[Finding]:
    options = LintOptions(profile_name=profile, select=frozenset(rules))
    return lint_bytes(yaml.safe_dump(data).encode(), "case.yaml", options)


def _single_documents() -> list[tuple[str, dict[str, Any]]]:
    """The cases whose manifest is one object (a fix's path is from that object's root), with
    the rules each runs (its file's rule, or its ``rules:``)."""
    out = []
    for stem, data in _case_files():
        for case in data["cases"]:
            case = {"rules": data.get("rules", [data["rule"]]), **case}
            try:
                docs = [d for d in yaml.safe_load_all(case["manifest"]) if d is not None]
            except yaml.YAMLError:  # PM001's cases
                continue
            if len(docs) == 1 and isinstance(docs[0], dict) and \
                    not str(docs[0].get("kind", "")).endswith("List"):
                out.append((f"{stem}: {case['name']}", case))
    return out


def test_every_fix_removes_its_finding() -> None:
    fixed: set[str] = set()
    for name, case in _single_documents():
        profile = case.get("profile", "together")
        data = yaml.safe_load(case["manifest"])
        rules = {*case["rules"], *FIXING, "PM002"}
        found = _lint(data, rules, profile)
        for finding in (f for f in found if f.fix is not None):
            after = _lint(_applied(data, finding.fix), rules, profile)
            assert (finding.rule, finding.path) not in {(f.rule, f.path) for f in after}, name
            # nor anywhere else in what the fix wrote into (one object's pod, or Job spec)
            within = dotted(finding.fix.path[:-1])
            assert not [f for f in after if f.rule == finding.rule and (
                f.path == within or f.path.startswith((within + ".", within + "[")))], name
            assert {f.message for f in after if f.rule == "PM002"} <= \
                {f.message for f in found if f.rule == "PM002"}, name
            fixed.add(finding.rule)
    assert fixed >= FIXING  # each was proven on some case


def test_the_fixes_say_what_to_write() -> None:
    data = yaml.safe_load(textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          podFailurePolicy:
            rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
          template:
            spec:
              terminationGracePeriodSeconds: 900
              nodeSelector: {cloud.google.com/gke-spot: "true"}
              containers: [{name: main, image: busybox}]
        """))
    found = _lint(data, FIXING, "gke")
    pod = ("spec", "template", "spec")
    assert [(f.rule, f.fix) for f in found] == [
        ("PM402", Fix((*pod, "restartPolicy"), "Never")),  # not set: the only value allowed
        ("PM201", Fix((*pod, "terminationGracePeriodSeconds"), 15)),  # the gke profile's cap
    ]


def test_the_placement_fix_merges_into_the_pods_affinity() -> None:
    data = yaml.safe_load(textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}
        spec:
          selector: {matchLabels: {app: api}}
          template:
            metadata: {labels: {app: api}}
            spec:
              affinity:
                podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: []}
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                      - matchExpressions: [{key: zone, operator: In, values: [a]}]
                      - matchExpressions:
                          - {key: karpenter.sh/capacity-type, operator: NotIn, values: [spot]}
                      - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
              containers: [{name: api, image: api:1}]
        """))
    [finding] = _lint(data, {"PM102"}, "karpenter")
    excluded = {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]}
    affinity = data["spec"]["template"]["spec"]["affinity"]
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert finding.fix == Fix(("spec", "template", "spec", "affinity"), {
        "podAntiAffinity": affinity["podAntiAffinity"],  # kept as it is
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [*terms[0]["matchExpressions"], excluded]},
                terms[1],  # already closed: left alone
                {**terms[2], "matchExpressions": [excluded]},
            ]}}})
    # a term that asks for the preemptible nodes by name is the author's call: no fix
    terms[0]["matchExpressions"] = [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                     "values": ["spot", "on-demand"]}]
    [finding] = _lint(data, {"PM102"}, "karpenter")
    assert finding.fix is None


def test_the_failure_policy_fix_puts_its_rule_first() -> None:
    job = yaml.safe_load(textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          template:
            spec:
              restartPolicy: Never
              nodeSelector: {together.ai/compute-class: preemptible}
              containers: [{name: main, image: busybox}]
        """))
    ignore = {"action": "Ignore",
              "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    [finding] = _lint(job, {"PM401"}, "together")
    assert finding.fix == Fix(("spec", "podFailurePolicy"), {"rules": [ignore]})
    other = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}
    job["spec"]["podFailurePolicy"] = {"rules": [other]}
    [finding] = _lint(job, {"PM401"}, "together")
    assert finding.fix == Fix(("spec", "podFailurePolicy", "rules"), [ignore, other])
    # an earlier rule that acts on preemptions is the author's call: reported, not fixed
    job["spec"]["podFailurePolicy"] = {"rules": [{"action": "FailJob", "onPodConditions": [
        {"type": "DisruptionTarget"}]}]}
    [finding] = _lint(job, {"PM401"}, "together")
    assert finding.fix is None


def test_lint_fix_on_every_case_removes_only_values_and_is_idempotent() -> None:
    """--fix's engine on every case manifest (several documents, Lists and flow style among
    them), under its profile: what it writes leaves no finding with a fix that was not said
    to be skipped, removes nothing but scalar values, and a second pass changes nothing."""
    import difflib
    import re

    from pmanifest.lint.fixes import fix_file

    applied = 0
    for stem, data in _case_files():
        for case in data["cases"]:
            rules = {*data.get("rules", [data["rule"]]), *FIXING}
            options = LintOptions(profile_name=case.get("profile", "together"),
                                  select=frozenset(rules))

            def relint(raw: bytes, options: LintOptions = options) -> list[Finding]:
                return lint_bytes(raw, "case.yaml", options)

            raw = case["manifest"].encode()
            fixed = fix_file(raw, relint(raw), relint)
            applied += len(fixed.applied)
            said = {(f.rule, f.path) for f, _ in fixed.skipped}
            left = [f for f in relint(fixed.raw) if f.fix is not None]
            assert {(f.rule, f.path) for f in left} <= said, (stem, case["name"])
            assert fix_file(fixed.raw, relint(fixed.raw), relint).raw == fixed.raw, stem
            before = re.findall(r"[\w./-]+|[ \t]+|.|\n", raw.decode())
            after = re.findall(r"[\w./-]+|[ \t]+|.|\n", fixed.raw.decode())
            for tag, i1, i2, _, _ in difflib.SequenceMatcher(
                    None, before, after, autojunk=False).get_opcodes():
                removed = "".join(before[i1:i2])
                assert tag == "equal" or not any(c in removed for c in "#\n:{}[],&*"), \
                    (stem, case["name"], removed)
    assert applied > 50  # the cases exercise the fixes


def test_a_fix_in_a_list_is_from_the_document_root() -> None:
    """Issue 24: in a ``kind: List`` the fix's path was the item's (``spec...``), which no tool
    could apply to the file; it is the document's (``items.1.spec...``), and applying it there
    removes the finding, nested Lists included."""
    job = yaml.safe_load(textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          podFailurePolicy:
            rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
          template:
            spec:
              restartPolicy: Never
              terminationGracePeriodSeconds: 900
              nodeSelector: {together.ai/compute-class: preemptible}
              containers: [{name: main, image: busybox}]
        """))
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    inner = {"apiVersion": "v1", "kind": "List", "items": [config, job]}
    listing = {"apiVersion": "v1", "kind": "List", "items": [config, job, inner]}
    found = _lint(listing, {"PM201"}, "together")
    grace = ("spec", "template", "spec", "terminationGracePeriodSeconds")
    assert [f.fix for f in found] == [Fix(("items", 1, *grace), 300),
                                      Fix(("items", 2, "items", 1, *grace), 300)]
    fixed = listing
    for finding in found:
        assert finding.fix is not None
        fixed = _applied(fixed, finding.fix)
    assert _lint(fixed, {"PM201"}, "together") == []
    assert [f.path for f in found] == [".".join(grace)] * 2  # the finding's own: the object's
