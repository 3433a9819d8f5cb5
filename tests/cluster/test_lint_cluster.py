"""``pmanifest lint --cluster``: capacity findings over the whole run, at their workloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

CLUSTER = {"name": "llm", "region": "us-central-8", "gpu_type": "H100_SXM",
           "cluster_type": "KUBERNETES", "num_gpus": 16, "num_preemptible_gpus": 16,
           "project_id": "proj-research-01"}

SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: serving}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {{key: together.ai/compute-class, operator: NotIn, values: [preemptible]}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
  parallelism: {parallelism}
  completions: 16
  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions: [{{type: DisruptionTarget, status: "True"}}]
      - action: Ignore
        onExitCodes: {{operator: In, values: [143]}}
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 300
      nodeSelector: {{together.ai/compute-class: preemptible}}
      containers:
        - name: trainer
          image: ghcr.io/acme/trainer:1.4
          command: [python, train.py]
          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER, indent=2))
    return CliRunner()


SELECTED = ("PM510", "PM511", "PM512", "PM513", "PM514")
# the summary line counts the rules applied: these, and what every lint applies (PM001, PM007);
# then the profile the run inferred
CLEAN = f"0 errors, 0 warnings, 0 info in 1 file (1 object, {len(SELECTED) + 2} rules)\n" \
    "profile together, inferred from together.ai/compute-class in 1 object\n"


def lint(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    select = [a for rule in SELECTED for a in ("--select", rule)]
    result = runner.invoke(main, ["lint", *select, *args])
    return result.exit_code, result.stdout, result.stderr


def write(name: str, text: str) -> None:
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    Path(name).write_text(text)


def test_findings_across_files_in_input_order(runner: CliRunner) -> None:
    write("k8s/a-serving.yaml", SERVING.format(name="chat", replicas=2, gpus=8))
    write("k8s/b-train.yaml", JOB.format(name="sft", parallelism=3, gpus=8))
    code, out, err = lint(runner, "k8s", "--cluster", "cluster.json")
    assert code == 1
    assert out == (
        "k8s/a-serving.yaml:5:13: error PM512[rollout-cannot-surge] Deployment serving/chat: a "
        "rolling update adds 1 pod of 8 GPUs (maxSurge) before it removes any (maxUnavailable "
        "0), and they do not fit beside the other standard pods on the 16 standard GPUs (2 nodes "
        "of 8) of cluster.json: the rollout cannot progress\n"
        "k8s/b-train.yaml:5:16: warning PM513[preemptible-demand-over-target] Job ml/sft: the "
        "pods pinned to preemptible nodes need 24 GPUs (3 x 8 GPUs a pod) at once, and "
        "cluster.json has a preemptible target of 16 GPUs (2 nodes of 8): some stay Pending\n")
    assert err == "1 error, 1 warning, 0 info in 2 files (2 objects, 7 rules)\n" \
        "profile together, inferred from together.ai/compute-class in 2 objects\n"


def test_without_cluster_there_is_no_capacity_finding(runner: CliRunner) -> None:
    write("k8s/a.yaml", SERVING.format(name="chat", replicas=9, gpus=16))
    assert lint(runner, "k8s") == (0, "", CLEAN)


def test_demand_adds_up_over_the_files(runner: CliRunner) -> None:
    write("k8s/a.yaml", SERVING.format(name="chat", replicas=1, gpus=8).replace(
        "replicas: 1", "replicas: 1\n  strategy: {type: Recreate}"))
    write("k8s/b.yaml", SERVING.format(name="embed", replicas=1, gpus=8).replace(
        "replicas: 1", "replicas: 1\n  strategy: {type: Recreate}"))
    write("k8s/c.yaml", SERVING.format(name="rerank", replicas=1, gpus=1).replace(
        "replicas: 1", "replicas: 1\n  strategy: {type: Recreate}"))
    code, out, _ = lint(runner, "k8s", "--cluster", "cluster.json", "--format", "json")
    (finding,) = json.loads(out)["findings"]
    assert (code, finding["file"], finding["line"], finding["column"], finding["path"]) == (
        1, "k8s/c.yaml", 5, 13, "spec.replicas")
    assert finding["object"] == {"kind": "Deployment", "name": "rerank", "namespace": "serving"}


def test_parallel_run_gives_the_same_output(runner: CliRunner) -> None:
    for i in range(70):
        write(f"k8s/job-{i:02}.yaml", JOB.format(name=f"j{i}", parallelism=1, gpus=1))
    write("k8s/zz-big.yaml", JOB.format(name="big", parallelism=1, gpus=16))
    one = lint(runner, "k8s", "--cluster", "cluster.json", "-j", "1")
    four = lint(runner, "k8s", "--cluster", "cluster.json", "-j", "4")
    assert one == four
    assert one[1].splitlines() == [
        "k8s/job-16.yaml:5:16: warning PM513[preemptible-demand-over-target] Job ml/j16: the "
        "pods pinned to preemptible nodes need 70 GPUs (70 workloads) at once, and cluster.json "
        "has a preemptible target of 16 GPUs (2 nodes of 8): some stay Pending",
        "k8s/zz-big.yaml:22:48: error PM510[pod-larger-than-node] Job ml/big: a pod asks for 16 "
        "GPUs but a H100_SXM node has 8: it can never be scheduled"]


def test_an_inline_suppression_on_the_counted_line(runner: CliRunner) -> None:
    text = JOB.format(name="sft", parallelism=3, gpus=8).replace(
        "parallelism: 3", "parallelism: 3  # pmanifest: ignore=PM513 reason=\"burst sweep\"")
    write("train.yaml", text)
    assert lint(runner, "train.yaml", "--cluster", "cluster.json") == (0, "", CLEAN)


def test_cluster_file_problems_are_exit_2(runner: CliRunner) -> None:
    write("a.yaml", SERVING.format(name="chat", replicas=1, gpus=1))
    code, out, err = lint(runner, "a.yaml", "--cluster", "nope.json")
    assert (code, out, err) == (2, "", "nope.json: cannot read: No such file or directory\n")
    code, out, err = lint(runner, "a.yaml", "--cluster", "cluster.json", "--format", "json",
                          "--output", "cluster.json")
    assert (code, out) == (2, "")
    assert err == ("cluster.json: --output is one of the inputs: writing there would destroy "
                   "it; choose another path\n")
    result = runner.invoke(main, ["lint", "-", "--cluster", "-"], input="")
    assert (result.exit_code, result.stderr) == (
        2, "pmanifest: --cluster - and another input cannot both read stdin\n")


def test_capacity_findings_keep_the_input_order_of_files(runner: CliRunner) -> None:
    write("k8s/a.yaml", JOB.format(name="big", parallelism=1, gpus=16))
    write("k8s/b.yaml", "kind: [\n")  # a syntax error: a finding before the whole-input pass
    code, out, _ = lint(runner, "k8s", "--cluster", "cluster.json")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()] == ["k8s/a.yaml", "k8s/b.yaml"]


def test_stdin_and_list_items_are_located(runner: CliRunner) -> None:
    """Findings are located after the run: stdin is read from what it held, a List item at
    its own place."""
    job = JOB.format(name="big", parallelism=1, gpus=16)
    listing = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        ("  - " if i == 0 else "    ") + line + "\n" for i, line in enumerate(job.splitlines()))
    result = runner.invoke(main, ["lint", "--select", "PM510", "-", "--stdin-filename",
                                  "list.yaml", "--cluster", "cluster.json"], input=listing)
    assert result.exit_code == 1
    assert result.stdout == ("list.yaml:25:52: error PM510[pod-larger-than-node] Job ml/big: a "
                             "pod asks for 16 GPUs but a H100_SXM node has 8: it can never be "
                             "scheduled\n")


def test_numbers_of_any_size(runner: CliRunner) -> None:
    write("a.yaml", SERVING.format(name="chat", replicas=1_000_000_000, gpus=4))
    code, out, _ = lint(runner, "a.yaml", "--cluster", "cluster.json")
    assert (code, out.split(" ")[:2]) == (1, ["a.yaml:5:13:", "error"])
    Path("huge.json").write_text(json.dumps({**CLUSTER, "num_gpus": 2**70}))
    assert lint(runner, "a.yaml", "--cluster", "huge.json") == (0, "", CLEAN)
