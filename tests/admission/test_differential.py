"""Same verdict as lint, proven on the corpus: every exported policy, under every profile,
admits every object of every rule case file and of every example rendered under every
profile, and denies exactly those on which lint reports its rule. "Every profile" counts one
custom profile, as a config defines it (:data:`tests.admission.corpus.CUSTOM`): its own
label, taint and cap are baked into the policies like a built-in profile's.

The object is what the API server admits (:mod:`tests.admission.corpus`); lint reads the same
object alone, so a ``# pmanifest: ignore`` comment (which never reaches the cluster) is not
there, and an object the Kubernetes schema refuses (PM002) is left out: the API server
rejects it before any admission policy runs, and so is a kustomize patch fragment (PM007),
which reaches the cluster only merged. Objects of kinds a policy does not cover, and
those a policy's scope condition leaves to lint, are counted, not compared; the test checks
their numbers stay what the export says.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Iterable
from typing import Any

import pytest
import yaml

from pmanifest.admission.export import ExportOptions, objects
from pmanifest.admission.rules import EXPORTED
from pmanifest.catalogue import builtin
from pmanifest.lint.engine import LintOptions, lint_bytes

from .corpus import (
    PROFILES,
    Admitted,
    case_objects,
    profile_of,
    relabelled_objects,
    rendered_objects,
)
from .vap import evaluate


@functools.cache
def policies(profile: str) -> dict[str, dict[str, Any]]:
    """Rule id -> its policy, exported for ``profile``."""
    out = {}
    for obj in objects(builtin(), ExportOptions(profile_of(profile))):
        if obj["kind"] == "ValidatingAdmissionPolicy":
            out[obj["metadata"]["annotations"]["pmanifest.io/rule"]] = obj
    return out


def lint_verdict(item: Admitted, profile: str) -> set[str] | None:
    """The exported rules lint reports on the object alone; None when the schema refuses
    it (PM002) or it is a kustomize patch fragment (PM007: lint reads it only merged, and so
    does the API server)."""
    text = yaml.safe_dump(item.data, sort_keys=False).encode("utf-8")
    options = LintOptions(kubernetes_version=item.version, profile_name=profile,
                          resolved=profile_of(profile),
                          select=frozenset({*EXPORTED, "PM002"}))
    found = {f.rule for f in lint_bytes(text, "admitted.yaml", options)}
    return None if found & {"PM002", "PM007"} else found & set(EXPORTED)


CORPUS = {"cases": case_objects, "rendered examples": rendered_objects}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("corpus", sorted(CORPUS))
def test_every_policy_denies_exactly_what_lint_reports(corpus: str, profile: str) -> None:
    compare(CORPUS[corpus](), corpus, profile)


def test_the_custom_profile_is_baked_in() -> None:
    """The case objects moved onto the custom profile's label, with and without a toleration
    of its taint: its label, taint and cap decide, in lint and in the policies alike."""
    tally = compare(relabelled_objects(), "relabelled cases", "playground")
    for rule_id in ("PM101", "PM103", "PM201", "PM401"):  # the custom label and cap bite
        assert tally[f"{rule_id} denied"] > 0, rule_id


def compare(items: Iterable[Admitted], corpus: str, profile: str) -> collections.Counter[str]:
    """Assert every policy of ``profile`` denies exactly what lint reports on ``items``."""
    tally: collections.Counter[str] = collections.Counter()
    wrong = []
    for item in items:
        reported = lint_verdict(item, profile)
        if reported is None:
            tally["refused by the schema, or a patch fragment"] += 1
            continue
        for rule_id, policy in policies(profile).items():
            verdict = evaluate(policy, item.data)
            if not verdict.matched:
                tally[f"{rule_id} kind not covered" + (", lint reports" if rule_id in reported
                                                      else "")] += 1
                continue
            if verdict.skipped_by is not None and verdict.skipped_by.startswith("pm"):
                tally[f"{rule_id} left to lint" + (", lint reports" if rule_id in reported
                                                   else "")] += 1
                continue
            tally[f"{rule_id} {'denied' if verdict.denied else 'admitted'}"] += 1
            if verdict.denied != (rule_id in reported):
                wrong.append(f"{item.source}: {item.data.get('kind')} "
                             f"{item.data.get('metadata', {}).get('name')!r}: {rule_id} "
                             f"policy {'denies' if verdict.denied else 'admits'}, lint "
                             f"{'reports' if rule_id in reported else 'does not report'}")
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()))
    print(f"\n{corpus} under {profile}: {counts}")
    assert not wrong, "\n".join(wrong)
    return tally
