"""``pmanifest render --cluster``: refusals for standard capacity, warnings for preemptible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from tests.stderr import render_stderr

CREATE = {"name": "c", "region": "us-central-8", "gpu_type": "H100_SXM",
          "cluster_type": "KUBERNETES", "num_gpus": 16, "num_preemptible_gpus": 16,
          "project_id": "p"}

SERVING = """\
apiVersion: pmanifest/v1
workloads:
  - name: chat
    role: serving
    image: ghcr.io/acme/vllm:1
    command: [vllm, serve]
    gpus: {gpus}
    replicas: {replicas}
"""
WORKER = """\
  - name: train
    role: worker
    image: ghcr.io/acme/trainer:1
    command: [python, train.py]
    gpus: 8
    parallelism: {parallelism}
    checkpoint: {{command: [python, ckpt.py], trigger: sigterm}}
"""


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.json").write_text(json.dumps(CREATE, indent=2))
    return CliRunner()


# what these tests are about: the capacity rules render --cluster warns under
CAPACITY_RULES = ("PM510", "PM511", "PM512", "PM513", "PM514")


def render(runner: CliRunner, spec: str, *extra: str) -> tuple[int, str, str]:
    Path("spec.yaml").write_text(spec)
    result = runner.invoke(main, ["render", "-f", "spec.yaml", "--cluster", "cluster.json",
                                  *extra])
    return result.exit_code, result.stdout, render_stderr(result.stderr, CAPACITY_RULES)


def test_fits_renders_as_without_the_flag(runner: CliRunner) -> None:
    spec = SERVING.format(gpus=4, replicas=2) + WORKER.format(parallelism=2)
    code, out, err = render(runner, spec)
    plain = runner.invoke(main, ["render", "-f", "spec.yaml"])
    assert (code, err) == (0, "")
    assert out == plain.stdout and "kind: Deployment" in out


def test_standard_pods_that_do_not_fit_are_refused(runner: CliRunner) -> None:
    code, out, err = render(runner, SERVING.format(gpus=8, replicas=3))
    assert (code, out) == (2, "")
    assert err == (
        "spec.yaml:8:15: workload chat: the pods kept off preemptible nodes need 24 GPUs "
        "(3 x 8 GPUs a pod) and do not all fit on the 16 standard GPUs (2 nodes of 8) of "
        "cluster.json; raise num_gpus in the cluster request, or lower replicas or gpus\n")


def test_a_rollout_without_room_is_refused(runner: CliRunner) -> None:
    spec = SERVING.format(gpus=8, replicas=2) + "    strategy: {maxSurge: 1, maxUnavailable: 0}\n"
    code, out, err = render(runner, spec)
    assert (code, out) == (2, "")
    assert err == (
        "spec.yaml:9:15: workload chat: a rolling update adds 1 pod of 8 GPUs (maxSurge) before "
        "it removes any (maxUnavailable 0), and they do not fit beside the other standard pods "
        "on the 16 standard GPUs (2 nodes of 8) of cluster.json: the rollout cannot progress; "
        "raise num_gpus in the cluster request, or let the rollout take a replica down first "
        "(strategy: {maxSurge: 0, maxUnavailable: 1}, the default from 2 replicas)\n")


def test_one_replica_surges_by_default_and_needs_room(runner: CliRunner) -> None:
    Path("cluster.json").write_text(json.dumps({**CREATE, "num_gpus": 8}))
    code, out, err = render(runner, SERVING.format(gpus=8, replicas=1))
    assert (code, out) == (2, "")
    assert err.startswith("spec.yaml:8:15: workload chat: a rolling update adds 1 pod of 8 GPUs")
    assert render(runner, SERVING.format(gpus=8, replicas=2))[0] == 2  # 16 > 8 standard GPUs


def test_the_default_rollout_of_two_replicas_needs_no_room(runner: CliRunner) -> None:
    code, _, err = render(runner, SERVING.format(gpus=8, replicas=2))
    assert (code, err) == (0, "")


def test_a_pod_larger_than_a_node_is_refused(runner: CliRunner) -> None:
    code, out, err = render(runner, SERVING.format(gpus=16, replicas=1))
    assert (code, out) == (2, "")
    assert err == ("spec.yaml:7:11: workload chat: a pod asks for 16 GPUs but a H100_SXM node "
                   "has 8: it can never be scheduled; lower gpus to what one node has\n")


def test_preemptible_shortfall_is_a_warning(runner: CliRunner) -> None:
    spec = SERVING.format(gpus=1, replicas=1) + WORKER.format(parallelism=3)
    code, out, err = render(runner, spec)
    assert code == 0
    assert "kind: Job" in out
    assert err == (
        "spec.yaml:14:18: warning: PM513[preemptible-demand-over-target] workload train: the "
        "pods pinned to preemptible nodes need 24 GPUs (3 x 8 GPUs a pod) at once, and "
        "cluster.json has a preemptible target of 16 GPUs (2 nodes of 8): some stay Pending\n")


def test_a_read_warns_about_what_is_allocated(runner: CliRunner) -> None:
    Path("cluster.json").write_text(json.dumps({
        "cluster_id": "c-1", "gpu_type": "H100_SXM", "num_gpus": 8,
        "desired_preemptible_gpus": 32, "allocated_preemptible_gpus": 8}))
    code, _, err = render(runner, WORKER.join(["apiVersion: pmanifest/v1\nworkloads:\n", ""])
                          .format(parallelism=2))
    assert code == 0
    assert err == (
        "spec.yaml:8:18: warning: PM514[preemptible-demand-over-allocation] workload train: the "
        "pods pinned to preemptible nodes need 16 GPUs (2 x 8 GPUs a pod) at once; the target "
        "holds them, but cluster.json has 8 allocated now: some stay Pending until capacity "
        "frees up\n")


def test_a_saved_command_line(runner: CliRunner) -> None:
    Path("create.sh").write_text("tg beta clusters create --name c --num-gpus 8 \\\n"
                                 "  --num-preemptible-gpus 8 --project p\n")
    Path("spec.yaml").write_text(SERVING.format(gpus=8, replicas=2))
    result = runner.invoke(main, ["render", "-f", "spec.yaml", "--cluster", "create.sh"])
    assert result.exit_code == 2
    assert result.stderr.startswith("spec.yaml:8:15: workload chat: the pods kept off "
                                    "preemptible nodes need 16 GPUs (2 x 8 GPUs a pod) and do "
                                    "not all fit on the 8 standard GPUs (1 node of 8) of "
                                    "create.sh;")


@pytest.mark.parametrize(("args", "message"), [
    (["--cluster", "nope.json"], "nope.json: cannot read: No such file or directory"),
    (["--cluster", "-", "-f", "-"], "pmanifest: --cluster - and another input cannot both read "
                                    "stdin"),
])
def test_cluster_file_errors(runner: CliRunner, args: list[str], message: str) -> None:
    Path("spec.yaml").write_text(SERVING.format(gpus=1, replicas=1))
    result = runner.invoke(main, ["render", "-f", "spec.yaml", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_a_bad_cluster_file_names_it(runner: CliRunner) -> None:
    Path("cluster.json").write_text('{"num_gpus": 8,\n')
    code, out, err = render(runner, SERVING.format(gpus=1, replicas=1))
    assert (code, out) == (2, "")
    assert err.startswith("cluster.json:2:1: did not find expected node content")


# --- every example, every distributed output ------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_REQUEST = "examples/cluster/create-request.json"  # 8 standard, 8 preemptible GPUs
_TARGET = (f"and {EXAMPLE_REQUEST} has a preemptible target of 8 GPUs (1 node of 8): some stay "
           "Pending\n")


def _over_target(at: str, who: str, pods: int) -> str:
    return (f"{at}: warning: PM513[preemptible-demand-over-target] {who}: the pods pinned to "
            f"preemptible nodes need {pods * 8} GPUs ({pods} x 8 GPUs a pod) at once, {_TARGET}")


# (example, --distributed-output or None, exit code, stderr): each distributed example with
# every output its framework makes; objects without GPUs (the rendezvous Deployment and its
# Services, a Ray head, CPU-only Ray workers) ask for no GPU capacity
EVERY_EXAMPLE = [
    ("distributed-jobset.yaml", "job", 0,
     _over_target("examples/distributed-jobset.yaml:22:17", "workload pretrain", 8)),
    ("distributed-jobset.yaml", "jobset", 0,
     _over_target("examples/distributed-jobset.yaml:22:17",
                  "workload pretrain (JobSet replicatedJob 'workers')", 8)),
    ("distributed-ray.yaml", "rayjob", 0,
     _over_target("examples/distributed-ray.yaml:22:17",
                  "workload finetune-ray (RayJob worker group 'workers')", 4)),
    ("distributed-ray.yaml", "raycluster", 0,
     _over_target("examples/distributed-ray.yaml:22:17",
                  "workload finetune-ray (RayCluster worker group 'workers')", 4)),
    ("distributed-raycluster.yaml", "rayjob", 0, ""),
    ("distributed-raycluster.yaml", "raycluster", 0, ""),
    ("distributed-torchrun.yaml", "job", 0,
     _over_target("examples/distributed-torchrun.yaml:21:17", "workload trainer", 4)),
    ("distributed-torchrun.yaml", "jobset", 0,
     _over_target("examples/distributed-torchrun.yaml:21:17",
                  "workload trainer (JobSet replicatedJob 'workers')", 4)),
    ("eval-sweep-prestop.yaml", None, 0, ""),
    ("finetune-sigterm.yaml", None, 0, ""),
    ("serving-vllm.yaml", None, 2,
     "examples/serving-vllm.yaml:29:15: workload llama-70b: the pods kept off preemptible nodes "
     "need 24 GPUs (3 x 8 GPUs a pod) and do not all fit on the 8 standard GPUs (1 node of 8) of "
     f"{EXAMPLE_REQUEST}; raise num_gpus in the cluster request, or lower replicas or gpus\n"),
    ("serving.yaml", None, 0, ""),
]


def test_every_example_is_in_the_table() -> None:
    assert sorted({e for e, *_ in EVERY_EXAMPLE}) == sorted(
        p.name for p in (ROOT / "examples").glob("*.yaml"))


@pytest.mark.parametrize(("example", "output", "code", "err"), EVERY_EXAMPLE)
def test_every_example_against_the_example_request(monkeypatch: pytest.MonkeyPatch,
                                                   example: str, output: str | None,
                                                   code: int, err: str) -> None:
    """Exit code and stderr exactly; stdout is the plain render's, or nothing when refused."""
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    args = ["render", "-f", f"examples/{example}",
            *(["--distributed-output", output] if output else [])]
    plain = runner.invoke(main, args)
    assert plain.exit_code == 0, plain.stderr
    result = runner.invoke(main, [*args, "--cluster", EXAMPLE_REQUEST])
    assert (result.exit_code, result.stderr) == (code, plain.stderr + err)
    assert result.stdout == (plain.stdout if code == 0 else "")


@pytest.mark.parametrize(("example", "output"), [(e, o) for e, o, *_ in EVERY_EXAMPLE])
def test_every_example_fits_a_large_cluster(runner: CliRunner, example: str,
                                            output: str | None) -> None:
    Path("cluster.json").write_text(json.dumps({**CREATE, "num_gpus": 64,
                                                "num_preemptible_gpus": 64}))
    args = ["render", "-f", str(ROOT / "examples" / example),
            *(["--distributed-output", output] if output else [])]
    plain = runner.invoke(main, args)
    result = runner.invoke(main, [*args, "--cluster", "cluster.json"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, plain.stdout, plain.stderr)


def test_a_jobset_worker_on_too_few_standard_gpus_is_refused_at_max_nodes(
        runner: CliRunner) -> None:
    """A distributed worker on standard compute: its JobSet's worker Job is standard demand."""
    spec = (ROOT / "examples" / "distributed-jobset.yaml").read_text().replace(
        "    distributed:\n", "    compute: standard\n    distributed:\n")
    code, out, err = render(runner, spec)
    assert (code, out) == (2, "")
    assert err == (
        "spec.yaml:23:17: workload pretrain (JobSet replicatedJob 'workers'): the pods kept off "
        "preemptible nodes need 64 GPUs (8 x 8 GPUs a pod) and do not all fit on the 16 standard "
        "GPUs (2 nodes of 8) of cluster.json; raise num_gpus in the cluster request, or lower "
        "replicas or gpus\n")
