"""Every example, rendered with every provider profile it can run on, lints clean in-process
under that profile (and render has no warning for it); a profile whose grace-period cap is
below the example's checkpoint window refuses it. The example policy pack has nothing to say
about the rendered Jobs once they set priorityClassName."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pmanifest.cli.render_warnings import render_checked
from pmanifest.errors import SpecError
from pmanifest.kube.profile import get_profile, profile_names
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.policy import load_policy_dirs
from pmanifest.render.engine import RenderOptions
from pmanifest.rules import registered

from .conftest import EXAMPLES, ROOT


def _spec(example: Path) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load(example.read_text())
    return data


def _grace_needed(example: Path) -> int:
    """The longest checkpoint window an example asks for (0: it leaves it to the profile)."""
    workloads = _spec(example)["workloads"]
    assert isinstance(workloads, list)
    return max((w.get("checkpoint", {}).get("gracePeriodSeconds", 0) for w in workloads),
               default=0)


def _version(example: Path) -> str:
    cluster = _spec(example).get("cluster") or {}
    assert isinstance(cluster, dict)
    return str(cluster.get("kubernetesVersion", "1.31"))


USABLE = [(e, p) for e in EXAMPLES for p in profile_names()
          if _grace_needed(e) <= get_profile(p).grace_period_cap]
REFUSED = [(e, p) for e in EXAMPLES for p in profile_names() if (e, p) not in USABLE]


def test_every_example_runs_on_the_default_profile_and_some_need_a_long_window() -> None:
    assert {e for e, p in USABLE if p == "together"} == set(EXAMPLES)
    assert REFUSED  # 300 s checkpoints do not fit GKE's 15 s


@pytest.mark.parametrize(("example", "profile"), USABLE,
                         ids=[f"{e.name}-{p}" for e, p in USABLE])
def test_rendered_example_lints_clean_under_its_profile(example: Path, profile: str) -> None:
    rendered = render_checked(example.read_text(), example.name, RenderOptions(profile=profile))
    assert rendered.warnings == ()
    options = LintOptions(kubernetes_version=_version(example), profile_name=profile)
    assert lint_bytes(rendered.text.encode(), "rendered.yaml", options) == []
    label = get_profile(profile).label_key
    assert label in rendered.text  # rendered for this profile, not the default one


@pytest.mark.parametrize(("example", "profile"), REFUSED,
                         ids=[f"{e.name}-{p}" for e, p in REFUSED])
def test_example_refused_where_its_window_does_not_fit(example: Path, profile: str) -> None:
    cap = get_profile(profile).grace_period_cap
    with pytest.raises(SpecError, match=rf"is above the {cap} s cap of preemptible nodes"):
        render_checked(example.read_text(), example.name, RenderOptions(profile=profile))


def test_example_policy_pack_passes_the_rendered_jobs() -> None:
    jobs = 0
    flagged = []
    policies = load_policy_dirs((str(ROOT / "examples" / "policies"),))
    pack = {p.rule().meta.id for p in policies}
    with registered(p.rule() for p in policies):
        for example in EXAMPLES:
            text = render_checked(example.read_text(), example.name).text
            jobs += sum(1 for o in yaml.safe_load_all(text) if o["kind"] == "Job")
            options = LintOptions(kubernetes_version=_version(example))
            flagged += [(example.name, f.object.kind, f.rule)
                        for f in lint_bytes(text.encode(), example.name, options)]
    assert jobs >= 3  # with GPU limits, so ACME001 applies to each
    flagged = [f for f in flagged if f[2] in pack]  # the pack's rules (lint's: the round trip)
    assert [f for f in flagged if f[1] == "Job"] == []
    # the pack's findings: a public image in examples/serving.yaml's inference namespace, and
    # the CPU-only Ray workers of examples/distributed-raycluster.yaml on preemptible nodes
    # (the pack's ACME003 keeps preemptible capacity for GPU pods; lint reads Ray worker groups)
    assert sorted(flagged) == [("distributed-raycluster.yaml", "RayCluster", "ACME003"),
                               ("serving.yaml", "Deployment", "ACME002")]
