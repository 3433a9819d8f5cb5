"""What a distributed worker renders as, and where each object is placed: the anchors
(rendezvous, Ray head, submitter) on standard nodes, the workers on preemptible ones under the
supervisor, the version-dependent Job fields, and custom resources checked by their schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.render.distributed import STORE_SCRIPT
from pmanifest.render.elastic import LAUNCHER, STORE_LOST_EXIT, STORE_OPS
from pmanifest.render.engine import RenderOptions, render_text

from .conftest import ROOT

NOT_IN = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{
        "key": "together.ai/compute-class", "operator": "NotIn", "values": ["preemptible"]}]}]}}}
PREEMPTIBLE = {"together.ai/compute-class": "preemptible"}


def _objects(example: str, **options: Any) -> dict[str, dict[str, Any]]:
    path = ROOT / "examples" / example
    text = render_text(path.read_text(), example, RenderOptions(**options))
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in yaml.safe_load_all(text)}


def _pod(template: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = template["spec"]
    return spec


def test_torchrun_job_shape() -> None:
    objects = _objects("distributed-torchrun.yaml")
    headless = objects["Service/trainer"]["spec"]
    assert headless == {"clusterIP": "None", "publishNotReadyAddresses": True,
                        "selector": {"app.kubernetes.io/name": "trainer"}}
    store = _pod(objects["Deployment/trainer-rendezvous"]["spec"]["template"])
    assert store["affinity"] == NOT_IN and "nodeSelector" not in store
    assert store["containers"][0]["command"] == ["python", "-c", STORE_SCRIPT, "29400"]
    assert objects["Deployment/trainer-rendezvous"]["spec"]["strategy"] == {"type": "Recreate"}
    job = objects["Job/trainer"]["spec"]
    assert (job["completionMode"], job["completions"], job["parallelism"]) == ("Indexed", 4, 4)
    assert (job["backoffLimitPerIndex"], job["maxFailedIndexes"]) == (3, 2)
    assert job["successPolicy"] == {"rules": [{"succeededCount": 1}]}
    pod = _pod(job["template"])
    assert pod["subdomain"] == "trainer" and pod["nodeSelector"] == PREEMPTIBLE
    assert pod["terminationGracePeriodSeconds"] == 240 and pod["restartPolicy"] == "Never"
    container = pod["containers"][0]
    assert container["command"][:2] == ["/bin/sh", "-c"]  # the supervisor
    # the launcher (its join timeout: how long it waits for the store), then torchrun
    assert container["args"] == [
        "python", "-c", LAUNCHER, STORE_OPS, "600",
        "torchrun", "--nnodes", "2:4", "--nproc-per-node", "8", "--max-restarts", "10",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", "trainer-rendezvous:29400",
        "--rdzv-id", "$(PMANIFEST_RDZV_ID)",
        "--rdzv-conf", "is_host=false,join_timeout=600,last_call_timeout=30",
        "train.py", "--config", "configs/7b.yaml"]
    env = {e["name"]: e for e in container["env"]}
    # the supervisor's deadline (240 - 10) minus 3 s, in the variable releases without
    # --shutdown-timeout ignore (the flag would stop them at start)
    assert env["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"]["value"] == "227"
    assert job["podFailurePolicy"]["rules"][1:] == [
        {"action": "Ignore", "onExitCodes": {"containerName": "trainer", "operator": "In",
                                             "values": [143]}},
        {"action": "Ignore", "onExitCodes": {"containerName": "trainer", "operator": "In",
                                             "values": [STORE_LOST_EXIT]}}]
    assert env["PMANIFEST_RDZV_ID"]["valueFrom"] == {"fieldRef": {
        "fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}}
    assert env["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"]["value"] == "1"
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]


@pytest.mark.parametrize(("checkpoint", "profile", "deadline", "timeout"), [
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240}", None, "230", "227"),
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 300, marginSeconds: 30}", None,
     "270", "267"),  # a save of more than torchrun's default 30 s gets its time
    ("{trigger: sigterm, command: [save], gracePeriodSeconds: 120}", None, "110", "107"),
    ("{trigger: preStop, command: [save], gracePeriodSeconds: 120, marginSeconds: 15}", None,
     "15", "12"),  # after the hook, the main has the margin
    (None, None, "20", "17"),  # no checkpoint: Kubernetes' 30 s, minus the 10 s margin
    (None, "gke", "5", "2"),  # GKE spot: 15 s at most
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 13}", None, "3", "1"),  # at least 1
])
def test_torchrun_stops_its_trainers_before_the_supervisor_deadline(
        checkpoint: str | None, profile: str | None, deadline: str, timeout: str) -> None:
    """torchrun's shutdown timeout (TERM to its trainers, SIGKILL after; 30 s by default,
    whatever the grace period) ends 3 s before the supervisor's deadline. It is rendered as
    TORCH_ELASTIC_SHUTDOWN_TIMEOUT, never as --shutdown-timeout, which torch releases before
    pytorch/pytorch PR #172596 reject at start."""
    spec = ("apiVersion: pmanifest/v1\nworkloads:\n  - name: t\n    image: x\n"
            "    command: [python, train.py]\n    distributed: {minNodes: 1, maxNodes: 2}\n")
    if checkpoint is not None:
        spec += f"    checkpoint: {checkpoint}\n"
    objects = yaml.safe_load_all(render_text(spec, "s.yaml", RenderOptions(profile=profile)))
    [job] = [o for o in objects if o["kind"] == "Job"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][5] == deadline  # sh -c SCRIPT $0 MODE DEADLINE ...
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"] == timeout
    assert not any(a.startswith("--shutdown") for a in container["args"])


@pytest.mark.parametrize(("version", "per_index", "success", "uid_label"), [
    ("1.26", False, False, "controller-uid"),
    ("1.28", False, False, "batch.kubernetes.io/controller-uid"),
    ("1.29", True, False, "batch.kubernetes.io/controller-uid"),
    ("1.31", True, True, "batch.kubernetes.io/controller-uid"),
])
def test_job_fields_follow_the_version(version: str, per_index: bool, success: bool,
                                       uid_label: str) -> None:
    job = _objects("distributed-torchrun.yaml", kubernetes_version=version)["Job/trainer"]
    spec = job["spec"]
    if per_index:
        assert "backoffLimit" not in spec and spec["backoffLimitPerIndex"] == 3
    else:  # one budget for the whole Job: the per-node budget times the nodes
        assert spec["backoffLimit"] == 12 and "backoffLimitPerIndex" not in spec
    assert ("successPolicy" in spec) == success
    env = {e["name"]: e for e in _pod(spec["template"])["containers"][0]["env"]}
    assert env["PMANIFEST_RDZV_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        f"metadata.labels['{uid_label}']")


def test_user_dev_shm_is_kept() -> None:
    text = (ROOT / "examples" / "distributed-torchrun.yaml").read_text().replace(
        "    distributed:", "    volumes:\n      - {name: shm, mountPath: /dev/shm, emptyDir: "
        "{medium: Memory, sizeLimit: 64Gi}}\n    distributed:")
    job = yaml.safe_load_all(render_text(text, "x.yaml"))
    pod = _pod(next(o for o in job if o["kind"] == "Job")["spec"]["template"])
    assert [v["name"] for v in pod["volumes"]] == ["shared", "shm"]


def test_jobset_shape() -> None:
    jobset = _objects("distributed-jobset.yaml")["JobSet/pretrain"]["spec"]
    assert jobset["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert jobset["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["workers"]}
    rules = jobset["failurePolicy"]["rules"]
    assert rules[0]["action"] == "RestartJobSetAndIgnoreMaxRestarts"
    assert rules[0]["onJobFailureReasons"] == ["PodFailurePolicy"]
    rdzv, workers = jobset["replicatedJobs"]
    assert (rdzv["name"], workers["name"]) == ("rendezvous", "workers")
    rdzv_pod = _pod(rdzv["template"]["spec"]["template"])
    assert rdzv_pod["affinity"] == NOT_IN and rdzv_pod["restartPolicy"] == "Never"
    assert rdzv["template"]["spec"]["podFailurePolicy"]["rules"][0]["action"] == "FailJob"
    worker_pod = _pod(workers["template"]["spec"]["template"])
    assert worker_pod["nodeSelector"] == PREEMPTIBLE and "subdomain" not in worker_pod
    args = worker_pod["containers"][0]["args"]
    assert args[args.index("--rdzv-endpoint") + 1] == "pretrain-rendezvous-0-0.pretrain:29400"
    assert args[-4:] == ["-m", "acme.pretrain", "--config", "configs/70b.yaml"]


def test_ray_shapes() -> None:
    rayjob = _objects("distributed-ray.yaml")["RayJob/finetune-ray"]
    assert rayjob["metadata"]["annotations"] == {"ray.io/overwrite-container-cmd": "true"}
    spec = rayjob["spec"]
    assert spec["entrypoint"] == "python finetune.py --storage-path /mnt/shared/ray/finetune"
    assert _pod(spec["submitterPodTemplate"])["affinity"] == NOT_IN
    cluster = spec["rayClusterSpec"]
    head = _pod(cluster["headGroupSpec"]["template"])
    assert head["affinity"] == NOT_IN and "nodeSelector" not in head
    assert cluster["gcsFaultToleranceOptions"]["redisPassword"] == {
        "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}}}
    group = cluster["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (4, 1, 4)
    worker = _pod(group["template"])
    assert worker["nodeSelector"] == PREEMPTIBLE
    assert worker["terminationGracePeriodSeconds"] == 300
    container = worker["containers"][0]
    assert container["command"][:2] == ["/bin/sh", "-c"]  # the supervisor
    assert container["args"] == ["/bin/bash", "-c",
                                 "ulimit -n 65536; exec $KUBERAY_GEN_RAY_START_CMD"]
    cluster_only = _objects("distributed-ray.yaml", distributed_output="raycluster")
    assert list(cluster_only) == ["RayCluster/finetune-ray"]
    assert cluster_only["RayCluster/finetune-ray"]["spec"] == cluster


RAY_DEADLINE = ("apiVersion: pmanifest/v1\nworkloads:\n  - name: tune\n    image: x\n"
                "    command: [python, tune.py]\n    activeDeadlineSeconds: 86400\n"
                "    distributed: {framework: ray, maxNodes: 2}\n")


def test_ray_job_gets_the_active_deadline() -> None:
    """A RayJob keeps the worker's activeDeadlineSeconds (KubeRay fails the job past it); the
    schema pmanifest ships for RayJob checks it."""
    [rayjob] = yaml.safe_load_all(render_text(RAY_DEADLINE, "s.yaml"))
    assert rayjob["kind"] == "RayJob" and rayjob["spec"]["activeDeadlineSeconds"] == 86400
    assert "activeDeadlineSeconds" not in _objects("distributed-ray.yaml")[
        "RayJob/finetune-ray"]["spec"]


def test_ray_cluster_output_flag_refuses_the_active_deadline() -> None:
    result = CliRunner().invoke(main, ["render", "-f", "-", "--distributed-output",
                                       "raycluster"], input=RAY_DEADLINE)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "<stdin>:6:5: activeDeadlineSeconds bounds a run, and a RayCluster "
        "(--distributed-output raycluster) is no run: it lives until deleted; use output: "
        "rayjob, or remove activeDeadlineSeconds\n")


def test_flag_overrides_the_output() -> None:
    objects = _objects("distributed-torchrun.yaml", distributed_output="jobset")
    assert list(objects) == ["JobSet/trainer"]


def test_broken_custom_resource_template_is_refused(tmp_path: Path) -> None:
    """A --templates override that writes a wrong JobSet field is caught by its schema."""
    builtin = (ROOT / "templates" / "jobset.yaml.j2").read_text()
    (tmp_path / "jobset.yaml.j2").write_text(builtin.replace("maxRestarts:", "maxRestart:"))
    result = CliRunner().invoke(main, ["render", "-f", str(ROOT / "examples" /
                                                           "distributed-jobset.yaml"),
                                       "--templates", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"{tmp_path / 'jobset.yaml.j2'}: rendered JobSet is not valid for "
                             "Kubernetes 1.31: unknown key 'maxRestart' in spec.failurePolicy; "
                             "did you mean 'maxRestarts'?; fix the template\n")


def test_run_time_fields_go_to_the_workers_only() -> None:
    objects = _objects("distributed-torchrun.yaml")
    worker = _pod(objects["Job/trainer"]["spec"]["template"])
    store = _pod(objects["Deployment/trainer-rendezvous"]["spec"]["template"])
    assert worker["priorityClassName"] == "training-high"
    assert "priorityClassName" not in store
    assert store["containers"][0]["readinessProbe"] == {"tcpSocket": {"port": 29400},
                                                        "periodSeconds": 5}
    ray = _objects("distributed-ray.yaml")["RayJob/finetune-ray"]["spec"]
    head = _pod(ray["rayClusterSpec"]["headGroupSpec"]["template"])
    worker = _pod(ray["rayClusterSpec"]["workerGroupSpecs"][0]["template"])
    assert (worker["priorityClassName"], "priorityClassName" in head) == ("training-low", False)


@pytest.mark.parametrize(("checkpoint", "framework", "warned"), [
    # trainers that save in their TERM handler under torchrun, for longer than its 30 s
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240, expectedSeconds: 90}",
     "torchrun", True),
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240, expectedSeconds: 31}",
     "torchrun", True),
    # within torchrun's own 30 s, or unknown: nothing to say
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240, expectedSeconds: 30}",
     "torchrun", False),
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240}", "torchrun", False),
    # the save runs outside torchrun: the supervisor's command, or the preStop hook
    ("{trigger: sigterm, command: [save], gracePeriodSeconds: 240, expectedSeconds: 90}",
     "torchrun", False),
    ("{trigger: preStop, command: [save], gracePeriodSeconds: 240, expectedSeconds: 90}",
     "torchrun", False),
    ("{trigger: sigterm, mode: signal, gracePeriodSeconds: 240, expectedSeconds: 90}", "ray",
     False),
])
def test_a_save_longer_than_torchruns_own_kill_is_warned_about(
        tmp_path: Path, checkpoint: str, framework: str, warned: bool) -> None:
    """torch releases without pytorch/pytorch PR #172596 ignore TORCH_ELASTIC_SHUTDOWN_TIMEOUT
    and kill a trainer 30 s after TERM: render says so at the spec's expectedSeconds, on
    stderr, and writes the same output."""
    from click.testing import CliRunner

    from pmanifest.cli.main import main
    from tests.stderr import render_stderr

    spec = ("apiVersion: pmanifest/v1\nworkloads:\n  - name: t\n    image: x\n"
            "    command: [python, train.py]\n"
            f"    distributed: {{framework: {framework}, minNodes: 1, maxNodes: 2}}\n"
            f"    checkpoint: {checkpoint}\n")
    (tmp_path / "s.yaml").write_text(spec)
    result = CliRunner().invoke(main, ["render", "-f", str(tmp_path / "s.yaml")])
    assert result.exit_code == 0, result.output
    stderr = render_stderr(result.stderr)
    if not warned:
        assert stderr == ""
        return
    expected = checkpoint.split("expectedSeconds: ")[1].rstrip("}")
    column = spec.splitlines()[6].index("expectedSeconds") + 1
    assert stderr == (
        f"{tmp_path / 's.yaml'}:7:{column}: warning: workload 't': its trainers save for up to "
        f"{expected} s after TERM, and torchrun kills them 30 s after TERM unless its torch "
        "reads TORCH_ELASTIC_SHUTDOWN_TIMEOUT (rendered: 227 s; torch releases with "
        "pytorch/pytorch PR #172596, 2026; older ones ignore it): run such a torch in the "
        "image, or save with mode: command or trigger: preStop, which torchrun does not cut\n")


def _pod_verdict(job: dict[str, Any], container: str, code: int, disrupted: bool) -> str:
    """What a Job's podFailurePolicy makes of a pod that failed with ``code`` in
    ``container`` (with the DisruptionTarget condition or without): the first rule that
    matches, in order, as the Job controller evaluates them; "Count" when none does."""
    if code == 0:
        return "Succeeded"
    for rule in job["spec"].get("podFailurePolicy", {}).get("rules", []):
        codes = rule.get("onExitCodes")
        if codes is not None:
            named = codes.get("containerName") in (None, container)
            inside = code in codes["values"]
            if named and inside == (codes["operator"] == "In"):
                return str(rule["action"])
        for condition in rule.get("onPodConditions", []):
            if (condition["type"] == "DisruptionTarget" and disrupted
                    and condition.get("status", "True") == "True"):
                return str(rule["action"])
    return "Count"


def _jobset_verdict(jobset: dict[str, Any], replicated: str, reason: str) -> str:
    """The JobSet failure policy's action for a failed Job of ``replicated`` (its reason:
    PodFailurePolicy after a FailJob rule, BackoffLimitExceeded after counted failures)."""
    for rule in jobset["spec"]["failurePolicy"]["rules"]:
        reasons = rule.get("onJobFailureReasons")
        targets = rule.get("targetReplicatedJobs")
        if (reasons is None or reason in reasons) and (targets is None or replicated in targets):
            return str(rule["action"])
    return "RestartJobSet"


@pytest.mark.parametrize("version", ["1.27", "1.31"])
@pytest.mark.parametrize(("code", "disrupted", "rendezvous", "workers"), [
    # the store stopped by the kubelet (a drain, an upgrade of its standard node): it exits
    # 143, with or without the condition; the JobSet restarts without counting it
    (143, False, "RestartJobSetAndIgnoreMaxRestarts", "Ignore"),
    (143, True, "RestartJobSetAndIgnoreMaxRestarts", "Ignore"),
    # a worker whose store went away (the launcher's 75): a disruption, not counted
    (75, False, "RestartJobSet", "Ignore"),
    # genuine failures still count: the store crashing, a worker failing
    (1, False, "RestartJobSet", "Count"),
    (137, False, "RestartJobSet", "Count"),
])
def test_losing_the_store_is_a_disruption_in_the_rendered_policies(
        version: str, code: int, disrupted: bool, rendezvous: str, workers: str) -> None:
    """The rendered JobSet judged from each pod's end state: the store's 143 (its TERM handler,
    tests/distributed/test_store_lost.py) fails the rendezvous Job by its podFailurePolicy, which
    restarts the JobSet without counting; a worker's 75 is ignored; other codes count."""
    jobset = _objects("distributed-jobset.yaml", kubernetes_version=version)["JobSet/pretrain"]
    rdzv, worker = jobset["spec"]["replicatedJobs"]
    store = _pod_verdict(rdzv["template"], "rendezvous", code, disrupted)
    # backoffLimit 0: a counted failure fails the rendezvous Job too, as BackoffLimitExceeded
    assert rdzv["template"]["spec"]["backoffLimit"] == 0
    reason = "PodFailurePolicy" if store == "FailJob" else "BackoffLimitExceeded"
    assert _jobset_verdict(jobset, "rendezvous", reason) == rendezvous
    name = worker["template"]["spec"]["template"]["spec"]["containers"][0]["name"]
    assert _pod_verdict(worker["template"], name, code, disrupted) == workers
    # the same worker rules in the Job output
    job = _objects("distributed-torchrun.yaml", kubernetes_version=version)["Job/trainer"]
    assert _pod_verdict(job, "trainer", code, disrupted) == workers


def test_the_store_never_succeeds_on_term() -> None:
    """Before, the store exited 0 on TERM: the rendezvous Job completed, no failure rule could
    restart the JobSet, and the workers lost their store for good."""
    assert "sys.exit(143)" in STORE_SCRIPT and "sys.exit(0)" not in STORE_SCRIPT
