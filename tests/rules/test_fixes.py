"""Fixes checks propose (``Hit.fix``, shown by ``--format json``) are correct: applied to the
manifest of every case that has one, the finding is gone and no schema error came with it."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

import yaml

from pmanifest.kube.document import Finding, Fix
from pmanifest.lint.engine import LintOptions, lint_bytes
from tests.rules.test_cases import _case_files

FIXING = {"PM201", "PM402"}  # rules whose checks propose a fix (at least these; a new rule's
# fixes are checked on its own cases without a change here)


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
