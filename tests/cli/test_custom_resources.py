"""``pmanifest lint`` on custom resources: the two real misses of issue 12 (minimal hand-written
reproductions), PM004 once per kind per run, skipped objects in the JSON summary, and the kinds
of each rule in ``rules`` and ``explain``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

# the reproductions are about placement and roles: the runs select those rules, so a new rule
# changes none of their outputs
PLACEMENT = ("--select", "PM101", "--select", "PM102", "--select", "PM103", "--select", "PM104",
             "--select", "PM105")
ROLE_RULES = ("--select", "PM003", *PLACEMENT)

RAY_HEAD_ON_SPOT = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: b200-ray-cluster
  annotations:
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        nodeSelector:
          cloud.google.com/gke-spot: "true"
          cloud.google.com/machine-family: "c2"
        containers:
          - {name: ray-head, image: rayproject/ray:2.41.0}
  workerGroupSpecs:
    - groupName: b200
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray:2.41.0
              resources: {limits: {nvidia.com/gpu: 8}}
"""
RAYSERVICE_WORKERS_MAY_BE_SPOT = """\
apiVersion: ray.io/v1
kind: RayService
metadata: {name: vllm}
spec:
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions:
                      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
          containers:
            - {name: head, image: rayproject/ray:2.41.0}
    workerGroupSpecs:
      - groupName: gpu-group
        template:
          spec:
            nodeSelector: {NodeGroupType: g5-gpu-karpenter, type: karpenter}
            containers:
              - name: worker
                image: rayproject/ray:2.41.0
                resources: {limits: {nvidia.com/gpu: 1}}
"""
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: b}
"""


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_ray_head_pinned_to_gke_spot_is_reported_under_gke(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    (tmp_path / "ray.yaml").write_text(RAY_HEAD_ON_SPOT)
    result = runner.invoke(main, ["lint", "ray.yaml", "--profile", "gke", *PLACEMENT])
    assert result.exit_code == 1
    assert result.stdout.startswith(
        "ray.yaml:12:11: error PM103[coordinator-on-preemptible] RayCluster head (role "
        "coordinator) is a coordinator / stateful anchor and is confined to preemptible nodes")
    assert result.stdout.count("\n") == 1


def test_rayservice_workers_on_karpenter_spot_are_reported(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    (tmp_path / "svc.yaml").write_text(RAYSERVICE_WORKERS_MAY_BE_SPOT)
    result = runner.invoke(main, ["lint", "svc.yaml", "--profile", "karpenter", *PLACEMENT])
    assert result.exit_code == 0  # a warning
    assert result.stdout.startswith(
        "svc.yaml:20:11: warning PM102[serving-not-pinned-to-standard] RayService worker group "
        "'gpu-group' (role serving) is long-running and can land on preemptible nodes")
    assert result.stdout.count("\n") == 1


def test_unread_kinds_once_per_run_and_counted_in_the_summary(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(QUEUES)
    (tmp_path / "b.yaml").write_text(QUEUES.split("---\n")[0])
    result = runner.invoke(main, ["lint", "a.yaml", "b.yaml", "--format", "json"])
    payload = json.loads(result.stdout)
    assert [(f["rule"], f["file"], f["line"]) for f in payload["findings"]] == [
        ("PM004", "a.yaml", 2)]
    assert payload["findings"][0]["message"].endswith(
        "(3 objects of this kind in 2 files; reported once per run)")
    assert payload["summary"]["skipped"] == 3
    assert result.exit_code == 0  # info

    disabled = runner.invoke(main, ["lint", "a.yaml", "b.yaml", "--format", "json",
                                    "--disable", "PM004"])
    payload = json.loads(disabled.stdout)
    assert payload["findings"] == []
    assert payload["summary"]["skipped"] == 3  # counted whether or not PM004 reports


def test_rules_and_explain_name_the_kinds(runner: CliRunner) -> None:
    listing = runner.invoke(main, ["rules"]).stdout.splitlines()
    pm401 = next(line for line in listing if line.startswith("PM401"))
    assert pm401.endswith("[kinds: batch/Job, batch/CronJob]")
    pm102 = next(line for line in listing if line.startswith("PM102"))
    assert "kinds" not in pm102
    explained = runner.invoke(main, ["explain", "PM404"]).stdout
    assert ("Applies to:\n  objects of kind JobSet, TrainingRuntime, ClusterTrainingRuntime"
            in explained)
    as_json = json.loads(runner.invoke(main, ["rules", "--format", "json"]).stdout)
    kinds = {r["id"]: r["kinds"] for r in as_json}
    assert kinds["PM405"] == ["batch.volcano.sh/Job", "batch.volcano.sh/CronJob",
                              "flow.volcano.sh/JobTemplate"]


TRAINER = """\
apiVersion: example.com/v1
kind: ModelServer
metadata: {name: llm}
spec:
  template:
    spec:
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - {name: server, image: ghcr.io/acme/model-server:1.2,
           resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_a_custom_kind_running_an_inference_server_is_serving(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    """What the pod runs tells its role: no config, and PM101 fires (serving, not a worker)."""
    (tmp_path / "server.yaml").write_text(TRAINER.replace("ghcr.io/acme/model-server:1.2",
                                                          "vllm/vllm-openai:v0.6.4"))
    result = runner.invoke(main, ["lint", "server.yaml", *ROLE_RULES])
    assert result.exit_code == 1
    assert result.stdout == (
        "server.yaml:6:5: info PM003[generic-workload] ModelServer (example.com/v1) is not a "
        "kind pmanifest knows; the pod template at spec.template.spec was found by its shape and "
        "is checked with the role serving, assumed because its image vllm/vllm-openai:v0.6.4 is "
        "an inference server; declare its role with the label or annotation "
        "`pmanifest.io/role: worker|coordinator|serving` on the template or the object, or for "
        "the kind in the config (`roles: {example.com/ModelServer: serving}`)\n"
        "server.yaml:7:22: error PM101[serving-on-preemptible] ModelServer (role serving) is "
        "long-running but only preemptible nodes can take it: every replica goes down when its "
        "node is reclaimed (300 s notice); keep it on standard nodes\n")


def test_config_declares_the_role_of_a_kind(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "server.yaml").write_text(TRAINER)
    assumed = runner.invoke(main, ["lint", "server.yaml", *ROLE_RULES])
    assert assumed.stdout.startswith("server.yaml:6:5: info PM003[generic-workload] ModelServer "
                                      "(example.com/v1) is not a kind pmanifest knows")
    assert "its role is unknown (nothing it runs tells its role)" in assumed.stdout
    assert "`roles: {example.com/ModelServer: worker|coordinator|serving}`" in assumed.stdout
    assert assumed.stdout.count("\n") == 1  # PM003 alone: no role-dependent rule ran
    (tmp_path / ".pmanifest.yaml").write_text("roles:\n  example.com/ModelServer: serving\n")
    declared = runner.invoke(main, ["lint", "server.yaml", *ROLE_RULES])
    assert declared.exit_code == 1
    assert declared.stdout == (
        "server.yaml:7:22: error PM101[serving-on-preemptible] ModelServer (role serving) is "
        "long-running but only preemptible nodes can take it: every replica goes down when its "
        "node is reclaimed (300 s notice); keep it on standard nodes\n")


def test_config_roles_are_validated_at_their_position(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / ".pmanifest.yaml").write_text("roles:\n  ModelServer: leader\n")
    (tmp_path / "server.yaml").write_text(TRAINER)
    result = runner.invoke(main, ["lint", "server.yaml"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{tmp_path / '.pmanifest.yaml'}:2:16: roles.ModelServer is 'leader', which is not one "
        "of worker, coordinator, serving; use one of: worker, coordinator, serving\n")


def test_explain_pm103_documents_the_image_heuristic(runner: CliRunner) -> None:
    explained = " ".join(runner.invoke(main, ["explain", "PM103"]).stdout.split())
    assert "Deployment or ReplicaSet whose image is a database, queue or object store" in explained
    assert "A StatefulSet is a coordinator when it keeps data on volumeClaimTemplates" in explained
    assert "with any version words (`redis7`, `mysql-80-c9s`, `postgresql-16`)" in explained
    # the StatefulSets it reads from what they run are left to lint in the cluster
    assert "StatefulSets with no volumeClaimTemplates, no database image and no declared role" \
        in explained
    assert "`kafka-exporter` is not kafka" in explained
    assert "the config's `roles:`" in explained  # how to override it
