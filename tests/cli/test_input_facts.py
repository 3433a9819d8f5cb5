"""What the whole input tells before a file is linted: the GKE ComputeClasses it defines (in
any file: a class whose every priority is on-demand is never preemptible capacity) and, with
no profile given, the provider whose preemptible labels it uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pmanifest.cli.main import main

CLASSES = """\
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata: {name: on-demand}
spec:
  priorities:
    - machineFamily: a3
    - {machineFamily: a2, spot: false}
---
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata: {name: spot-first}
spec:
  priorities:
    - {machineFamily: a3, spot: true}
    - machineFamily: a3
"""

SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
      nodeSelector: {SELECTOR}
      containers: [{name: server, image: vllm/vllm-openai}]
"""


def serving(name: str, selector: str) -> str:
    return SERVING.replace("NAME", name).replace("SELECTOR", selector)


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def flagged(result: Result) -> list[str]:
    assert result.exit_code in (0, 1), result.stderr
    return sorted(f["object"]["name"] for f in json.loads(result.stdout)["findings"])


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "classes.yaml").write_text(CLASSES)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "serving.yaml").write_text("---\n".join([
        serving("on-demand", "cloud.google.com/compute-class: on-demand"),
        serving("spot-first", "cloud.google.com/compute-class: spot-first"),
        serving("unknown", "cloud.google.com/compute-class: elsewhere"),
        serving("plain", ""),
    ]))
    return tmp_path


LINT = ("lint", "--profile", "gke", "--select", "PM102", "--format", "json")


def test_a_compute_class_in_another_file_is_read(tree: Path) -> None:
    assert flagged(run(*LINT, ".")) == ["plain", "spot-first", "unknown"]
    # without the file that defines the classes, nothing tells: every one can be Spot
    assert flagged(run(*LINT, "apps")) == ["on-demand", "plain", "spot-first", "unknown"]
    # the classes named on the command line after the pods, and the pods from stdin
    text = (tree / "apps" / "serving.yaml").read_text()
    assert flagged(run(*LINT, "-", "classes.yaml", stdin=text)) == [
        "plain", "spot-first", "unknown"]


def test_parallel_workers_see_the_classes_too(tree: Path) -> None:
    for i in range(70):  # enough inputs for worker processes
        (tree / "apps" / f"more-{i:02}.yaml").write_text(
            serving(f"more-{i:02}", "cloud.google.com/compute-class: on-demand"))
    assert flagged(run(*LINT, "--jobs", "2", ".")) == ["plain", "spot-first", "unknown"]
