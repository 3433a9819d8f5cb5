"""bench/sweep.py lints each repository of a directory under the profiles that fit it, skips
Helm templates and vendored copies, and prints its figures (a crash loudly) without failing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SWEEP = Path(__file__).resolve().parent.parent / "bench" / "sweep.py"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
"""  # (no accelerator: its PM102 is info)
# the same on a GPU: its PM102 is a warning, which the results table counts
GPU_DEPLOYMENT = DEPLOYMENT.replace(
    "image: nginx}", "image: nginx, resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}}")


def run_sweep(root: Path, *args: str) -> list[str]:
    result = subprocess.run([sys.executable, str(SWEEP), str(root), *args], capture_output=True,
                            text=True, timeout=300, check=False)
    assert (result.returncode, result.stderr) == (0, "")
    return [re.sub(r"\d+\.\d s", "T s", line) for line in result.stdout.splitlines()]


@pytest.mark.skipif(not SWEEP.is_file(), reason="needs the source tree")
def test_sweep_prints_figures_per_repository_and_profile(tmp_path: Path) -> None:
    repo = tmp_path / "demo-gke"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "vendor" / "other").mkdir(parents=True)
    (repo / "deploy.yaml").write_text(DEPLOYMENT)
    (repo / "package.json").write_text('{"name": "x"}')
    (repo / "chart" / "templates" / "d.yaml").write_text("kind: {{ .Values.kind }}\n")
    (repo / "vendor" / "other" / "d.yaml").write_text(DEPLOYMENT)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "bad.yaml").write_text("kind: Pod\na: [\n")  # names kind: PM001
    findings = tmp_path / "f.jsonl"
    assert run_sweep(tmp_path, "--findings", str(findings)) == [
        "demo-gke [together]: 2 files linted (1 Helm templates, 1 vendored skipped), 1 objects,"
        " 0 skipped objects, 1 findings, exit 0, T s",
        "    PM102 info    1",
        "demo-gke [gke]: 2 files linted (1 Helm templates, 1 vendored skipped), 1 objects,"
        " 0 skipped objects, 1 findings, exit 0, T s",
        "    PM102 info    1",
        "plain [together]: 1 files linted (0 Helm templates, 0 vendored skipped), 0 objects,"
        " 0 skipped objects, 1 findings, exit 1, T s",
        "    PM001 error   1",
        "TOTAL [together]: 2 repositories, 3 files, 1 objects, 0 skipped objects, 2 findings,"
        " 0 crashes, T s",
        "    PM001/e 1, PM102/i 1",
        "TOTAL [gke]: 1 repositories, 2 files, 1 objects, 0 skipped objects, 1 findings,"
        " 0 crashes, T s",
        "    PM102/i 1",
    ]
    kept = findings.read_text().splitlines()
    assert [(line.count('"repo": "demo-gke"'), line.count('"rule": "PM102"')) for line in kept] \
        == [(1, 1), (1, 1), (0, 0)]


@pytest.mark.skipif(not SWEEP.is_file(), reason="needs the source tree")
def test_sweep_prints_the_results_table_from_judgements(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    (repos / "demo").mkdir(parents=True)
    (repos / "demo" / "deploy.yaml").write_text(GPU_DEPLOYMENT)
    (repos / "demo" / "bad.yaml").write_text("kind: Pod\na: [\n")  # names kind: PM001
    (repos / "other").mkdir()
    (repos / "other" / "deploy.yaml").write_text(GPU_DEPLOYMENT)
    commits = tmp_path / "commits.tsv"
    commits.write_text("demo\tacme/demo\t0123abc\n")
    judgements = tmp_path / "j.jsonl"
    judgements.write_text(
        '{"key": "demo|deploy.yaml|8|5|PM102|Deployment/web", "verdict": "TP", "reason": "r"}\n'
        '{"key": "demo|bad.yaml|3|1|PM001|-/-", "verdict": "FP-platform", "reason": "r"}\n'
        '{"key": "other|deploy.yaml|8|5|PM102|Deployment/web", "verdict": "wrong"}\n'
        "not json\n")
    findings = tmp_path / "f.jsonl"
    result = subprocess.run(
        [sys.executable, str(SWEEP), str(repos), "--profile", "together", "--findings",
         str(findings), "--judgements", str(judgements), "--commits", str(commits)],
        capture_output=True, text=True, timeout=300, check=False)
    keys = [line.split('"key": "')[1].split('"')[0] for line in findings.read_text().splitlines()]
    assert keys == ["demo|bad.yaml|3|1|PM001|-/-", "demo|deploy.yaml|8|5|PM102|Deployment/web",
                    "other|deploy.yaml|8|5|PM102|Deployment/web"]
    assert result.stderr.splitlines() == [
        f"{judgements}:3: verdict 'wrong' is none of TP, FP, FP-platform, debatable",
        f"{judgements}:4: not a judgement (JSON with key and verdict)"]
    table = result.stdout.split("\n\n", 1)[1].splitlines()
    assert table == [
        "| repository | commit | files | objects | findings | read | TP | FP | FP-platform"
        " | debatable |",
        "|---|---|---|---|---|---|---|---|---|---|",
        "| demo | 0123abc | 2 | 1 | 2 | 2 | 1 | 0 | 1 | 0 |",
        "| other | ? | 1 | 1 | 1 | 0 | 0 | 0 | 0 | 0 |",
        "| **total** | | 3 | 2 | 3 | 2 | 1 | 0 | 1 | 0 |",
        "",
        "strict precision TP/(TP+FP+FP-platform) = 1/2 = 50.0%; findings without a judgement: 1",
    ]


@pytest.mark.skipif(not SWEEP.is_file(), reason="needs the source tree")
def test_sweep_fitting_runs_only_the_provider_a_name_says(tmp_path: Path) -> None:
    for name in ("store-aks", "plain"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "deploy.yaml").write_text(DEPLOYMENT)
    heads = [line.split(":")[0] for line in run_sweep(tmp_path, "--fitting")
             if "]:" in line and not line.startswith("TOTAL")]
    assert heads == ["plain [together]", "store-aks [aks]"]
