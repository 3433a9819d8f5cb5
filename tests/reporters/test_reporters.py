"""Reporters on a fixed set of findings: snapshots of every format, SARIF checked against the
official 2.1.0 schema, workflow-command escaping and JUnit XML that parses back."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from pmanifest.catalogue import RuleMeta, catalogue
from pmanifest.kube.document import Finding, Fix, ObjectRef
from pmanifest.reporters import FORMATS, Summary, text
from pmanifest.reporters.github_format import escape_data, escape_property
from pmanifest.reporters.sarif_format import artifact_uri
from tests.reporters.sarif_schema import schema_errors

JOB = ObjectRef("Job", "train", "ml")
FINDINGS = [
    Finding("PM001", "yaml-syntax-error", "error", "broken.yaml", 4, 1,
            ObjectRef(None, None, None), "", "mapping values are not allowed here"),
    Finding("PM002", "schema-invalid", "error", "jobs/train.yaml", 8, 7,
            ObjectRef("Job", "train", None), "spec.template.spec.terminationGracePeriodSecond",
            "unknown field 'terminationGracePeriodSecond'"),
    Finding("PM201", "grace-period-over-limit", "error", "jobs/train.yaml", 9, 7, JOB,
            "spec.template.spec.terminationGracePeriodSeconds",
            "grace period 600 s exceeds the 300 s cap: 100% of it, then\nthe node is gone",
            Fix(("spec", "template", "spec", "terminationGracePeriodSeconds"), 300)),
    Finding("PM401", "preemption-counts-as-failure", "warning", "dir,x/a:b.yaml", 2, 1, JOB,
            "spec", "no podFailurePolicy: <Ignore> & \"DisruptionTarget\", 'please'\x1b[0m"),
    Finding("PM105", "compute-class-typo", "info", "<stdin>", 12, 15,
            ObjectRef("Deployment", "web", None), "spec.template.spec.nodeSelector",
            "did you mean together.ai/compute-class? (é, ü)"),
]
SUMMARY = Summary.of(FINDINGS, 4, 4)


def _meta(rule_id: str, slug: str, severity: str) -> RuleMeta:
    return RuleMeta(rule_id, slug, severity, f"summary of {slug}", f"rationale of {slug}",
                    f"fix for {slug}", "fail: 1\n", "pass: 1\n")


FIXED_CATALOGUE = {m.id: m for m in (
    _meta("PM001", "yaml-syntax-error", "error"), _meta("PM002", "schema-invalid", "error"),
    _meta("PM105", "compute-class-typo", "error"),
    _meta("PM201", "grace-period-over-limit", "error"),
    _meta("PM401", "preemption-counts-as-failure", "warning"),
)}


@pytest.fixture
def fixed_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule metadata that does not change when a colleague adds or rewords a rule."""
    monkeypatch.setattr("pmanifest.catalogue.catalogue", lambda: FIXED_CATALOGUE)


@pytest.mark.parametrize("name", FORMATS)
def test_snapshot(name: str, fixed_registry: None, snapshot: SnapshotAssertion) -> None:
    assert text(name, FINDINGS, SUMMARY) == snapshot


def test_every_format_renders_no_findings(fixed_registry: None) -> None:
    empty = Summary.of([], 1, 1)
    outputs = {name: text(name, [], empty) for name in FORMATS}
    assert outputs["text"] == outputs["github"] == ""
    assert json.loads(outputs["sarif"])["runs"][0]["results"] == []
    suite = ET.fromstring(outputs["junit"])
    assert (suite.get("tests"), suite.get("failures")) == ("1", "0")


def sarif(findings: list[Finding]) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(text("sarif", findings, SUMMARY))
    return log


def test_sarif_validates_and_lists_every_registered_rule() -> None:
    log = sarif(FINDINGS)
    assert schema_errors(log) == []
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "pmanifest"
    metas = list(catalogue().values())
    assert [(r["id"], r["name"]) for r in driver["rules"]] == [(m.id, m.slug) for m in metas]
    for rule, meta in zip(driver["rules"], metas, strict=True):
        assert rule["shortDescription"]["text"] == meta.summary
        assert rule["fullDescription"]["text"] == meta.rationale
        assert rule["help"]["text"] == meta.fix
        assert rule["defaultConfiguration"]["level"] == {
            "error": "error", "warning": "warning", "info": "note"}[meta.severity]


def test_sarif_results_point_at_rule_and_position() -> None:
    log = sarif(FINDINGS)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "error", "error", "warning", "note"]
    for finding, result in zip(FINDINGS, results, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule
        location = result["locations"][0]["physicalLocation"]
        assert location["region"] == {"startLine": finding.line, "startColumn": finding.column}
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == ["broken.yaml", "jobs/train.yaml", "jobs/train.yaml", "dir%2Cx/a%3Ab.yaml",
                    "%3Cstdin%3E"]


def test_sarif_uri_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert artifact_uri(str(tmp_path / "k8s" / "job.yaml")) == "k8s/job.yaml"
    assert artifact_uri("./k8s/job.yaml") == "k8s/job.yaml"
    assert artifact_uri(os.path.join("k8s", "my job.yaml")) == "k8s/my%20job.yaml"
    outside = str(tmp_path.parent / "elsewhere.yaml")
    assert artifact_uri(outside) == outside  # not under the root: left absolute


def test_github_escapes_data_and_properties() -> None:
    # CR, LF and other controls are written by the one escaper first (issue 24): a message
    # quoting input never breaks a line of the log, nor colours it
    assert escape_data("100%\r\nnext\x1b[31m") == "100%25\\r\\nnext\\x1b[31m"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25\\n"
    lines = text("github", FINDINGS, SUMMARY).splitlines()
    assert len(lines) == len(FINDINGS)  # a newline in a message never splits a command
    assert lines[2] == ("::error file=jobs/train.yaml,line=9,col=7,"
                        "title=PM201 grace-period-over-limit::grace period 600 s exceeds the "
                        "300 s cap: 100%25 of it, then\\nthe node is gone")
    assert lines[3].startswith("::warning file=dir%2Cx/a%3Ab.yaml,line=2,col=1,")
    assert lines[4].startswith("::notice file=<stdin>,line=12,col=15,")


def test_junit_groups_findings_by_object_and_escapes() -> None:
    suite = ET.fromstring(text("junit", FINDINGS, SUMMARY).encode("utf-8"))
    assert suite.tag == "testsuite"
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name"), len(c.findall("failure"))) for c in cases] == [
        ("broken.yaml", "(file)", 1),
        ("jobs/train.yaml", "Job/train", 1),
        ("jobs/train.yaml", "ml/Job/train", 1),
        ("dir,x/a:b.yaml", "ml/Job/train", 1),
        ("<stdin>", "Deployment/web", 1),
    ]
    assert (suite.get("tests"), suite.get("failures")) == ("5", "5")
    failure = cases[3].findall("failure")[0]
    assert failure.get("type") == "warning"
    assert failure.get("message") == (
        "PM401 preemption-counts-as-failure: no podFailurePolicy: <Ignore> & "
        "\"DisruptionTarget\", 'please'\\x1b[0m")


def test_json_shows_a_fix_only_where_a_check_gave_one() -> None:
    findings = json.loads(text("json", FINDINGS, SUMMARY))["findings"]
    assert [f.get("fix") for f in findings] == [
        None, None, {"path": "spec.template.spec.terminationGracePeriodSeconds", "value": 300},
        None, None]
    assert [sorted(f) for f in findings[:2]] == [sorted(
        ["rule", "slug", "severity", "file", "line", "column", "object", "path", "message"])] * 2
    removal = [Finding("PM999", "x", "error", "a.yaml", 1, 1, JOB, "spec.x", "m",
                       Fix(("spec", "x"), remove=True))]
    assert json.loads(text("json", removal, SUMMARY))["findings"][0]["fix"] == {
        "path": "spec.x", "remove": True}
