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
    (tmp_path / "plain" / "bad.yaml").write_text("a: [\n")
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
