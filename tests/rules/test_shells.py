"""The shells of a pod template are read once, for every rule that reads scripts, and belong
to that template alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pmanifest.kube.document import Document
from pmanifest.kube.profile import get_profile
from pmanifest.kube.workloads import Workload, workloads_of
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.loader.positions import Positions
from pmanifest.shell import pod as shells

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - name: main
          image: trainer
          command: [sh, -c, "trap 'exit 0' TERM; python train.py & wait"]
          lifecycle: {preStop: {exec: {command: [sh, -c, "sleep 5"]}}}
"""


def test_every_rule_that_reads_scripts_reads_them_once_per_template(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[Workload] = []
    original = shells._read_shells

    def counted(workload: Workload) -> Iterator[shells.Shell]:
        read.append(workload)
        return original(workload)

    monkeypatch.setattr(shells, "_read_shells", counted)
    findings = lint_bytes(JOB.encode(), "job.yaml", LintOptions())
    assert {f.rule for f in findings} >= {"PM203", "PM305"}  # several rules read the shells
    assert len(read) == 1


def test_a_template_s_shells_are_its_own() -> None:
    import yaml

    profile = get_profile()
    doc = Document("a.yaml", 0, yaml.safe_load(JOB), Positions())
    (first,) = workloads_of(doc, profile)
    other = yaml.safe_load(JOB.replace("trap 'exit 0' TERM; ", ""))
    (second,) = workloads_of(Document("b.yaml", 0, other, Positions()), profile)
    assert shells.shells_of(first) is shells.shells_of(first)
    assert shells.shells_of(first)[0].facts.traps
    assert not shells.shells_of(second)[0].facts.traps
    (again,) = workloads_of(doc, profile)
    assert again == first and not again.memo  # equal templates share no memo
