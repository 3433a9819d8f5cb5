"""Provider profiles: render and lint read the active profile's label, taint and cap."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.errors import ConfigError
from pmanifest.kube.profile import ComputeClasses, Taint, get_profile, parse_profiles, profile_names

SPEC = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
workloads:
  - name: finetune
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
    checkpoint: {command: [python, ckpt.py], trigger: sigterm, dir: /mnt/shared/ckpt}
  - name: api
    role: serving
    image: ghcr.io/acme/api:1.0
    ports: [8000]
"""


def render(spec: str, *args: str) -> Any:
    result = CliRunner().invoke(main, ["render", "-f", "-", *args], input=spec)
    return result


def objects(text: str) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in yaml.safe_load_all(text)}


def test_the_four_providers_are_shipped() -> None:
    assert profile_names() == ["aks", "gke", "gke-autopilot", "karpenter", "together"]
    assert get_profile("karpenter").grace_period_cap == 120
    assert get_profile("gke").label_key == "cloud.google.com/gke-spot"
    assert get_profile("aks").taint is not None


@pytest.mark.parametrize("name", profile_names())
def test_render_then_lint_round_trip(name: str) -> None:
    profile = get_profile(name)
    rendered = render(SPEC, "--profile", name)
    assert rendered.exit_code == 0, rendered.stderr
    got = objects(rendered.stdout)
    job_pod = got["Job"]["spec"]["template"]["spec"]
    assert job_pod["nodeSelector"] == {profile.label_key: profile.label_value}
    assert job_pod["terminationGracePeriodSeconds"] == profile.grace_period_cap
    term = got["Deployment"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchExpressions"] == [
        {"key": profile.label_key, "operator": "NotIn", "values": [profile.label_value]}]
    linted = CliRunner().invoke(main, ["lint", "--profile", name, "--fail-on", "info",
                                       "--format", "json", "-"], input=rendered.stdout)
    assert json.loads(linted.stdout)["findings"] == []  # the renderer claims the whole window


def test_gke_selects_spot_nodes_and_keeps_serving_off_them() -> None:
    got = objects(render(SPEC, "--profile", "gke").stdout)
    assert got["Job"]["spec"]["template"]["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-spot": "true"}
    expr = got["Deployment"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0]
    assert expr["key"] == "cloud.google.com/gke-spot"
    assert "tolerations" not in got["Job"]["spec"]["template"]["spec"]


def test_aks_workers_tolerate_the_spot_taint() -> None:
    got = objects(render(SPEC, "--profile", "aks").stdout)
    assert got["Job"]["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
         "effect": "NoSchedule"}]
    assert "tolerations" not in got["Deployment"]["spec"]["template"]["spec"]


KARPENTER_300 = SPEC.replace("dir: /mnt/shared/ckpt}",
                             "dir: /mnt/shared/ckpt, gracePeriodSeconds: 300}")


def test_karpenter_refuses_300_at_render() -> None:
    result = render(KARPENTER_300, "--profile", "karpenter")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("<stdin>:9:107: gracePeriodSeconds 300 is above the 120 s cap of "
                             "preemptible nodes (the node is removed after 120 s); use at most "
                             "120\n")
    assert render(KARPENTER_300).exit_code == 0  # 300 is the together cap


def test_spec_cluster_profile_and_the_flag_overriding_it() -> None:
    spec = KARPENTER_300.replace("cluster:\n", "cluster:\n  profile: karpenter\n")
    assert render(spec).exit_code == 2
    overridden = render(spec, "--profile", "together")
    assert overridden.exit_code == 0
    assert "together.ai/compute-class" in overridden.stdout
    typo = render(SPEC.replace("cluster:\n", "cluster:\n  profile: karpentr\n"))
    assert typo.exit_code == 2
    assert "did you mean 'karpenter'?" in typo.stderr
    unknown = render(SPEC, "--profile", "azure")
    assert (unknown.exit_code, unknown.stderr) == (
        2, "pmanifest: unknown profile 'azure'; known profiles: aks, gke, gke-autopilot, "
           "karpenter, together\n")


JOB_300 = textwrap.dedent("""\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: train}
    spec:
      podFailurePolicy:
        rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 300
          nodeSelector: {karpenter.sh/capacity-type: spot}
          containers: [{name: main, image: busybox}]
    """)


def test_karpenter_lint_uses_its_label_and_cap(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lint", "--profile", "karpenter", "--format", "json",
                                       "-"], input=JOB_300)
    pm201 = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "PM201"]
    assert [(f["line"], f["column"], f["message"]) for f in pm201] == [(
        10, 7, "terminationGracePeriodSeconds is 300, above the 120 s cap of preemptible nodes "
               "(karpenter profile): the node is removed 120 s after the notice whatever the "
               "pod is doing; set it to 120 or less and finish the checkpoint inside that "
               "window")]
    # the together profile does not know the karpenter label: 300 s is within its cap anyway
    together = CliRunner().invoke(main, ["lint", "--profile", "together", "--format", "json",
                                         "-"], input=JOB_300)
    assert "PM201" not in together.stdout
    # with no profile given, the karpenter label tells the provider
    inferred = CliRunner().invoke(main, ["lint", "--format", "json", "-"], input=JOB_300)
    assert "PM201" in [f["rule"] for f in json.loads(inferred.stdout)["findings"]]
    config = tmp_path / ".pmanifest.yaml"
    config.write_text("profile: karpenter\n")
    from_config = CliRunner().invoke(main, ["lint", "--config", str(config), "-"],
                                     input=JOB_300)
    assert "PM201[grace-period-over-limit]" in from_config.stdout


def test_a_mistyped_profile_field_is_one_line_at_its_position() -> None:
    """Profiles are validated by a JSON Schema (no KeyError, no exit 3)."""
    import importlib.resources

    from pmanifest.errors import ConfigError
    from pmanifest.kube.profile import PROFILE_SCHEMA, PROFILES_FILE
    from pmanifest.schema.datafile import load_data

    text = importlib.resources.files("pmanifest.policies").joinpath(PROFILES_FILE).read_text()
    load_data(text, "profiles.yaml", PROFILE_SCHEMA, "the profiles")  # the shipped file passes
    broken = text.replace("  gracePeriodCap: 120", "  gracePeriodCapp: 120", 1)
    line = broken.splitlines().index("  gracePeriodCapp: 120") + 1
    with pytest.raises(ConfigError) as caught:
        load_data(broken, "profiles.yaml", PROFILE_SCHEMA, "the profiles")
    assert str(caught.value) == (f"profiles.yaml:{line}:3: unknown key 'gracePeriodCapp' in "
                                 "karpenter; did you mean 'gracePeriodCap'?")


AUTOPILOT_CLASS = {"nodeSelector": {"cloud.google.com/compute-class": "Accelerator"}}


def test_a_pod_that_selects_an_autopilot_class_is_governed_by_gke_autopilot() -> None:
    gke = get_profile("gke")
    assert gke.for_pod(AUTOPILOT_CLASS).name == "gke-autopilot"
    assert gke.for_pod({"nodeSelector": {"cloud.google.com/compute-class": "mine"}}) is gke
    assert gke.for_pod({}) is gke
    every_term = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{
            "key": "cloud.google.com/compute-class", "operator": "In",
            "values": ["Balanced", "Scale-Out"]}]}]}}}}
    assert gke.for_pod(every_term).name == "gke-autopilot"
    autopilot = get_profile("gke-autopilot")
    assert (autopilot.taint, autopilot.auto_toleration, autopilot.grace_period_cap) == (
        Taint("cloud.google.com/gke-spot", "true", "NoSchedule"), True, 25)
    assert get_profile("together").for_pod(AUTOPILOT_CLASS).name == "together"


def test_a_compute_class_profile_must_exist_and_not_chain() -> None:
    text = """\
a:
  description: A
  label: {key: k, value: v}
  standardNodePrefix: null
  preemptibleNodePrefix: null
  taint: null
  gracePeriodCap: 10
  drainWindowSeconds: 10
  computeClasses: {key: c, values: [x], profile: b}
"""
    with pytest.raises(ConfigError) as missing:
        parse_profiles(text, "profiles.yaml")
    assert (str(missing.value)) == ("profiles.yaml:9:41: computeClasses.profile 'b' must name a "
                                    "profile without computeClasses of its own")
    chained = text + text.replace("a:", "b:").replace("profile: b", "profile: a")
    with pytest.raises(ConfigError):
        parse_profiles(chained, "profiles.yaml")
    fine = text + text.replace("a:", "b:").replace("  computeClasses: {key: c, values: [x], "
                                                   "profile: b}\n", "")
    assert parse_profiles(fine, "profiles.yaml")["a"].compute_classes == ComputeClasses(
        "c", ("x",), "b")
