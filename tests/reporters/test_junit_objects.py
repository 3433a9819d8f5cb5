"""JUnit lists every linted object: passing testcases for clean ones, failures for the rest."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

CLEAN = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ml}
data: {a: b}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  ports: [{port: 80}]
"""
BAD = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: broken}
data: {a: [1]}
"""


def test_every_object_is_a_testcase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(CLEAN)
    (tmp_path / "k8s" / "b.yaml").write_text(BAD)
    (tmp_path / "k8s" / "c.yaml").write_text("kind: Pod\na: [\n")  # a broken manifest
    (tmp_path / "k8s" / "values.yaml").write_text("replicas: 3\n")  # not Kubernetes: no case
    result = CliRunner().invoke(main, ["lint", "k8s", "--format", "junit"])
    assert result.exit_code == 1, result.stderr
    suite = ET.fromstring(result.stdout.split("\n", 1)[1])
    cases = [(c.get("classname"), c.get("name"), len(c.findall("failure")))
             for c in suite.findall("testcase")]
    assert cases == [
        ("k8s/a.yaml", "ml/ConfigMap/settings", 0),
        ("k8s/a.yaml", "Service/api", 0),
        ("k8s/b.yaml", "ConfigMap/broken", 1),
        ("k8s/c.yaml", "(file)", 1),
    ]
    assert (suite.get("tests"), suite.get("failures")) == ("4", "2")


def test_labels_are_kept_only_for_junit(tmp_path: Path) -> None:
    from pmanifest.lint.engine import LintOptions, lint_file

    assert lint_file(CLEAN.encode(), "a.yaml", LintOptions()).labels == ()
    recorded = lint_file(CLEAN.encode(), "a.yaml", LintOptions(record_objects=True))
    assert recorded.labels == ("ml/ConfigMap/settings", "Service/api")
