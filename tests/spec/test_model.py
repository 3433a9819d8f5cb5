"""What the spec means once valid: defaults, placement, checkpoint wiring."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml

from pmanifest.errors import SpecError
from pmanifest.kube.profile import get_profile
from pmanifest.render.context import PRESTOP_HOOK, PRESTOP_MARK, PRESTOP_NAME
from pmanifest.render.engine import render_text
from pmanifest.render.spec import load_spec

PROFILE = get_profile()


def _objects(spec: str, version: str | None = None) -> list[dict[str, Any]]:
    from pmanifest.render.engine import RenderOptions

    text = render_text(textwrap.dedent(spec), "s.yaml", RenderOptions(kubernetes_version=version))
    return list(yaml.safe_load_all(text))


def _pod(obj: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = obj["spec"]["template"]["spec"]
    return pod


NOT_IN = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": PROFILE.label_key, "operator": "NotIn",
                           "values": [PROFILE.label_value]}]}]}}


def test_worker_defaults_to_preemptible_job() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, command: [run]}
        """)
    assert job["kind"] == "Job" and job["apiVersion"] == "batch/v1"
    pod = _pod(job)
    assert pod["nodeSelector"] == {PROFILE.label_key: PROFILE.label_value}
    assert "affinity" not in pod
    assert pod["restartPolicy"] == "Never"
    assert "terminationGracePeriodSeconds" not in pod  # no checkpoint: nothing to wait for
    assert job["spec"]["backoffLimit"] == 3
    assert job["spec"]["podReplacementPolicy"] == "Failed"
    assert job["spec"]["podFailurePolicy"] == {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "Ignore", "onExitCodes": {"containerName": "train", "operator": "In",
                                             "values": [143]}},
    ]}


def test_standard_worker_is_kept_off_preemptible_nodes() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, command: [run], compute: standard,
             nodeSelector: {gpu: h100}}
        """)
    assert _pod(job)["affinity"] == {"nodeAffinity": NOT_IN}
    assert _pod(job)["nodeSelector"] == {"gpu": "h100"}


def test_old_versions_get_no_pod_replacement_policy() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, command: [run]}
        """, version="1.28")
    assert "podReplacementPolicy" not in job["spec"]
    assert job["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"] == []


def test_completions_make_an_indexed_job() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        workloads:
          - {name: sweep, image: x, command: [run], parallelism: 4, completions: 16, gpus: 2,
             backoffLimit: 9, activeDeadlineSeconds: 86400}
        """)
    spec = job["spec"]
    assert (spec["parallelism"], spec["completions"], spec["completionMode"]) == (4, 16, "Indexed")
    assert spec["backoffLimit"] == 9
    assert spec["activeDeadlineSeconds"] == 86400
    # no CPU or memory given: 4 CPU and 32Gi a GPU, so the pod is Burstable, not BestEffort
    assert _pod(job)["containers"][0]["resources"] == {
        "requests": {"cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": 2}}


def test_serving_and_coordinator_deployments() -> None:
    objects = _objects("""\
        apiVersion: pmanifest/v1
        cluster: {sharedVolume: {claimName: fs, mountPath: /mnt/fs}}
        defaults: {image: img, namespace: ml, labels: {team: a}}
        workloads:
          - {name: api, role: serving, ports: [8000, 9000]}
          - {name: one, role: serving, replicas: 1}
          - {name: coord, role: coordinator, labels: {team: b}}
        """)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds == [("Service", "api"), ("PodDisruptionBudget", "api"), ("Deployment", "api"),
                     ("Deployment", "one"), ("Deployment", "coord")]
    service, pdb, api, one, coord = objects
    assert [p["port"] for p in service["spec"]["ports"]] == [8000, 9000]
    assert pdb["spec"] == {"maxUnavailable": 1,
                           "selector": {"matchLabels": {"app.kubernetes.io/name": "api"}}}
    assert api["spec"]["replicas"] == 2 and one["spec"]["replicas"] == 1
    assert coord["spec"]["replicas"] == 1
    assert coord["spec"]["strategy"] == {"type": "Recreate"}
    for deployment in (api, one, coord):
        pod = _pod(deployment)
        assert pod["affinity"] == {"nodeAffinity": NOT_IN}
        assert "nodeSelector" not in pod
        assert deployment["metadata"]["namespace"] == "ml"
        assert pod["volumes"] == [{"name": "shared", "persistentVolumeClaim": {"claimName": "fs"}}]
        assert pod["containers"][0]["volumeMounts"] == [{"name": "shared", "mountPath": "/mnt/fs"}]
    assert api["metadata"]["labels"]["team"] == "a"
    assert coord["metadata"]["labels"]["team"] == "b"


def test_prestop_string_runs_in_sh_and_the_supervisor_stops_the_main() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        cluster: {sharedVolume: {claimName: fs, mountPath: /mnt/fs}}
        workloads:
          - name: eval
            image: x
            command: [python, eval.py]
            args: [--n, 3]
            env: {A: 1}
            checkpoint: {command: "flush && sync", trigger: preStop, dir: /mnt/fs/./c/,
                         gracePeriodSeconds: 90}
        """)
    container = _pod(job)["containers"][0]
    # after the hook, the main gets marginSeconds (10 s by default) to stop
    assert container["command"][3:] == ["pmanifest-supervisor", "prestop", "10", "0"]
    assert container["args"] == ["python", "eval.py", "--n", "3"]
    # the hook marks the termination for the supervisor, then runs the checkpoint bounded to
    # the grace period less the margin (90 - 10 s)
    assert container["lifecycle"] == {"preStop": {"exec": {"command": [
        "/bin/sh", "-c", PRESTOP_HOOK, PRESTOP_NAME, "80", "/bin/sh", "-c", "flush && sync"]}}}
    assert container["env"] == [{"name": "A", "value": "1"},
                                {"name": "CHECKPOINT_DIR", "value": "/mnt/fs/c"}]
    assert _pod(job)["terminationGracePeriodSeconds"] == 90


def test_sigterm_passes_argv_as_parameters() -> None:
    [job] = _objects("""\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            args: ["$(id)"]
            checkpoint: {command: [save, "`id`"], trigger: sigterm}
        """)
    container = _pod(job)["containers"][0]
    assert container["command"][:2] == ["/bin/sh", "-c"]
    # mode command (a command is given), deadline 300 - 10 s after SIGTERM
    assert container["command"][3:] == ["pmanifest-supervisor", "command", "290", "2", "save",
                                        "`id`"]
    assert container["args"] == ["python", "train.py", "$(id)"]
    assert "$(id)" not in container["command"][2] and "`id`" not in container["command"][2]
    # the preStop hook only marks the termination (143 then means the kubelet's TERM)
    assert container["lifecycle"] == {"preStop": {"exec": {"command": [
        "/bin/sh", "-c", PRESTOP_MARK]}}}
    assert _pod(job)["terminationGracePeriodSeconds"] == 300


def test_standard_worker_may_exceed_the_cap() -> None:
    spec = load_spec(textwrap.dedent("""\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            compute: standard
            command: [run]
            checkpoint: {command: save, trigger: preStop, gracePeriodSeconds: 900}
        """), "s.yaml")
    checkpoint = spec.workloads[0].checkpoint
    assert checkpoint is not None and checkpoint.grace_period_seconds == 900


@pytest.mark.parametrize(("body", "message"), [
    ("labels: {app.kubernetes.io/name: x}", "label 'app.kubernetes.io/name' is set by pmanifest"),
    ("labels: {team: 'a b'}", "label value 'a b' is not a valid Kubernetes label value"),
    ("env: {1BAD: x}", "environment variable name '1BAD' is not valid"),
    ("command: [run]\n    gpus: 2\n    resources: {limits: {nvidia.com/gpu: 1}}",
     "nvidia.com/gpu is set from gpus"),
    ("args: [x]", "a worker needs command as well as args"),
    ("parallelism: 0", "workloads[0].parallelism must be at least 1, got 0"),
    ("ports: [8000, 8000]", "workloads[0].ports has duplicate entries"),
    ("resources: {requests: {memory: 64 GB}}",
     "workloads[0].resources.requests.memory '64 GB' does not match"),
    ("command: [run, 1.5]", "workloads[0].command[1] must be a string or integer, got number"),
])
def test_more_refusals(body: str, message: str) -> None:
    text = f"apiVersion: pmanifest/v1\nworkloads:\n  - name: w\n    image: x\n    {body}\n"
    with pytest.raises(SpecError) as info:
        load_spec(text, "s.yaml")
    assert info.value.file == "s.yaml" and info.value.line is not None
    assert info.value.message.startswith(message), info.value.message
    assert ";" in info.value.message
