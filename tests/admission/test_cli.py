"""``pmanifest export admission`` and ``explain`` from the command line, the config it honours,
and the objects the corpus does not hold (controller-made objects, suppression, config
roles), admitted through the policies as in the differential test."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main

from .vap import evaluate

SERVING = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
    "spec": {"selector": {"matchLabels": {"app": "api"}},
             "template": {"metadata": {"labels": {"app": "api"}},
                          "spec": {"containers": [{"name": "api", "image": "vllm"}]}}},
}


@functools.cache
def _exported(*args: str) -> str:
    """What ``export admission ARGS`` writes, run once per ARGS in this module (an export takes
    about a second): the tests only read it."""
    result = CliRunner().invoke(main, ["export", "admission", *args])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# pmanifest ")
    return result.stdout


def _export(*args: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(_exported(*args)) if d]


def _policy(docs: list[dict[str, Any]], rule_id: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"
                and d["metadata"]["annotations"]["pmanifest.io/rule"] == rule_id)


def test_default_is_warn_and_together_and_the_header_lists_lint_only_rules() -> None:
    exported = _exported()
    header = "".join(line + "\n" for line in exported.splitlines() if line.startswith("#"))
    assert "profile together: preemptible nodes carry together.ai/compute-class=preemptible" \
        in header
    assert "#   PM301 double-checkpoint-trigger: shell analysis" in header
    assert "#   PM501 preemptible-gpus-not-multiple-of-8: needs the cluster request" in header
    assert "#   kubeflow.org/PyTorchJob: keeps pod templates in lists or maps" in header
    docs = _export()
    actions = {tuple(d["spec"]["validationActions"]) for d in docs
               if d["kind"] == "ValidatingAdmissionPolicyBinding"}
    assert actions == {("Warn",)}
    assert _policy(docs, "PM201")["metadata"]["annotations"]["pmanifest.io/profile"] == "together"


@pytest.mark.parametrize("action", ["Audit", "Deny"])
def test_action(action: str) -> None:
    docs = _export("--action", action, "--profile", "karpenter")
    assert {tuple(d["spec"]["validationActions"]) for d in docs
            if d["kind"] == "ValidatingAdmissionPolicyBinding"} == {(action,)}


def test_unknown_profile_and_action_are_usage_errors() -> None:
    result = CliRunner().invoke(main, ["export", "admission", "--profile", "nope"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "unknown profile 'nope'" in result.stderr
    result = CliRunner().invoke(main, ["export", "admission", "--action", "Block"])
    assert result.exit_code == 2 and result.stdout == ""


def test_config_profile_roles_levels_and_suppressions(tmp_path: Path) -> None:
    config = tmp_path / "pmanifest.yaml"
    config.write_text("profile: gke\nroles: {Deployment: worker}\nrules: {PM403: off}\n"
                      "inlineSuppressions: false\n")
    docs = _export("--config", str(config))
    policy = _policy(docs, "PM102")
    assert policy["metadata"]["annotations"]["pmanifest.io/profile"] == "gke"
    assert "PM403" not in {d["metadata"]["annotations"]["pmanifest.io/rule"] for d in docs}
    assert [c["name"] for c in policy["spec"]["matchConditions"]] == \
        ["not-made-by-a-judged-controller", "pm-role-decidable-without-reading-what-the-pod-runs"]
    # the config makes Deployments workers: no longer a serving pod on preemptible nodes
    assert not evaluate(policy, SERVING).denied
    assert evaluate(_policy(_export("--profile", "gke"), "PM102"), SERVING).denied


def test_suppression_annotation_on_the_template_and_controller_made_objects() -> None:
    policy = _policy(_export(), "PM102")
    assert evaluate(policy, SERVING).denied
    ignored = json.loads(json.dumps(SERVING))
    ignored["spec"]["template"]["metadata"]["annotations"] = {
        "pmanifest.io/ignore": "PM999, serving-not-pinned-to-standard "}
    assert evaluate(policy, ignored).skipped_by == "not-suppressed-by-annotation"
    ignored["spec"]["template"]["metadata"]["annotations"] = {"pmanifest.io/ignore": "pm102"}
    assert evaluate(policy, ignored).skipped_by == "not-suppressed-by-annotation"
    ignored["spec"]["template"]["metadata"]["annotations"] = {"pmanifest.io/ignore": "PM1020"}
    assert evaluate(policy, ignored).denied
    owned = json.loads(json.dumps(SERVING))
    owned["kind"] = "ReplicaSet"
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "u",
         "controller": True}]
    assert evaluate(policy, owned).skipped_by == "not-made-by-a-judged-controller"
    owned["metadata"]["ownerReferences"][0].update(apiVersion="example.com/v1", kind="Api")
    assert evaluate(policy, owned).denied  # an owner no policy judges: judged as itself


def test_a_database_image_makes_a_coordinator() -> None:
    database = json.loads(json.dumps(SERVING))
    database["spec"]["template"]["spec"]["containers"][0]["image"] = \
        "registry:5000/bitnami/PostgreSQL:16@sha256:abc"
    docs = _export()
    assert evaluate(_policy(docs, "PM103"), database).denied
    assert not evaluate(_policy(docs, "PM102"), database).denied


def test_explain_says_what_the_cluster_enforces() -> None:
    exported = CliRunner().invoke(main, ["explain", "PM402"]).stdout
    section = exported.split("In the cluster:\n")[1].split("\n\n")[0]  # wrapped to the width
    assert " ".join(section.split()) == \
           "enforced by `pmanifest export admission` as ValidatingAdmissionPolicy " \
           "pmanifest-pm402-pod-failure-policy-restart-policy, on Job, CronJob (other " \
           "kinds: lint only)"
    lint_only = CliRunner().invoke(main, ["explain", "PM105"]).stdout
    assert "In the cluster:\n  lint only: near misses are weighed by edit distance" in lint_only


def test_lint_does_not_load_the_export(tmp_path: Path) -> None:
    from tests.cli.test_startup_imports import JOB, PROBE

    (tmp_path / "job.yaml").write_text(JOB)
    result = subprocess.run([sys.executable, "-c", PROBE, "lint", "job.yaml"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    code, modules = json.loads(result.stderr.splitlines()[-1])
    assert code == 0 and "pmanifest.lint.engine" in modules
    assert not [m for m in modules if m.startswith("pmanifest.admission")]
