"""Declarative policies: loading, validation errors, findings and their positions, the
registry they join, config and flags, and `pmanifest policy test`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.rules import registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "policies"
Write = Callable[[str, str], Path]

POLICY = """\
id: ACME010
slug: gpu-job-priority
severity: warning
summary: GPU Jobs set a priority class.
rationale: Shared quota is enforced by priority.
fix: Set priorityClassName.
match: {kinds: [Job]}
target: podSpec
schema:
  required: [priorityClassName]
  properties:
    priorityClassName: {enum: [high, low]}
message: "{kind} {name}: {path} {error}"
tests:
  - name: missing
    manifest: |
      apiVersion: batch/v1
      kind: Job
      metadata: {name: a}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: main, image: busybox}]
    findings: ["6:5 gpu-job-priority"]
"""

MANIFEST = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: urgent
      containers: [{name: main, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  containers: [{name: main, image: busybox}]
"""


def lint_json(*args: str, stdin: str | None = None) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(main, ["lint", "--no-schema", "--format", "json", *args],
                                input=stdin)
    findings = json.loads(result.stdout)["findings"] if result.stdout else []
    return result.exit_code, findings, result.stderr


# --- pmanifest policy test ------------------------------------------------------------------

def test_policy_test_needs_a_directory() -> None:
    result = CliRunner().invoke(main, ["policy", "test"])
    assert result.exit_code == 2
    assert "Missing argument 'DIR...'" in result.stderr


def test_policy_test_passes_on_the_example_pack() -> None:
    result = CliRunner().invoke(main, ["policy", "test", str(EXAMPLES)])
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "11 passed, 0 failed"


def test_policy_test_fails_on_a_broken_test(tmp_path: Path) -> None:
    text = (EXAMPLES / "gpu-jobs.yaml").read_text().replace('["6:5 gpu-job-priority-class"]',
                                                            '["6:6 gpu-job-priority-class"]')
    (tmp_path / "gpu-jobs.yaml").write_text(text)
    result = CliRunner().invoke(main, ["policy", "test", str(tmp_path)])
    assert result.exit_code == 1
    assert (f"FAIL ACME001: GPU Job without a priority class ({tmp_path}/gpu-jobs.yaml)\n"
            "    expected: ['6:6 gpu-job-priority-class']\n"
            "    got:      ['6:5 gpu-job-priority-class']\n") in result.stdout
    assert result.stdout.endswith("3 passed, 1 failed\n")
    assert "ACME001" not in registry()  # the run's policies left the registry


def test_policy_test_exit_2_on_an_invalid_policy(write: Write) -> None:
    path = write("p/bad.yaml", POLICY.replace("severity: warning", "severity: fatal"))
    result = CliRunner().invoke(main, ["policy", "test", str(path.parent)])
    assert result.exit_code == 2
    assert result.stderr == (f"{path}:3:11: severity is 'fatal', which is not one of error, "
                             "warning, info; use one of: error, warning, info\n")


# --- findings and positions ----------------------------------------------------------------

def test_user_policies_add_findings_at_the_failing_field(write: Write) -> None:
    write("p/prio.yaml", POLICY)
    manifest = write("m.yaml", MANIFEST)
    code, findings, _ = lint_json("--policies", str(manifest.parent / "p"), "--select", "ACME010",
                                  str(manifest))
    got = [(f["rule"], f["slug"], f["severity"], f["line"], f["column"], f["path"], f["message"])
           for f in findings]
    assert got == [
        ("ACME010", "gpu-job-priority", "warning", 8, 7,
         "spec.template.spec.priorityClassName",
         "Job train: spec.template.spec.priorityClassName 'urgent' is not one of "
         "['high', 'low']"),
        ("ACME010", "gpu-job-priority", "warning", 16, 5, "spec.template.spec",
         "Job eval: spec.template.spec 'priorityClassName' is a required property"),
    ]
    assert code == 0  # warnings only
    assert "ACME010" not in registry()


def test_additional_properties_points_at_each_extra_key(write: Write) -> None:
    write("p/labels.yaml", """\
        id: ACME011
        slug: only-known-labels
        severity: error
        summary: Only known labels.
        rationale: Cost reports group by these labels.
        fix: Remove the others.
        target: object
        schema:
          properties:
            metadata:
              properties:
                labels:
                  propertyNames: {minLength: 1}
                  properties: {team: {}, app: {}}
                  patternProperties: {"^acme\\\\.io/": {}}
                  additionalProperties: false
        message: "label {field!r} is not allowed"
        """)
    manifest = write("m.yaml", """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: c
          labels:
            team: ml
            acme.io/cost: x
            owner: bob
            tier: gpu
        """)
    _, findings, _ = lint_json("--policies", str(manifest.parent / "p"), str(manifest))
    assert [(f["line"], f["column"], f["message"]) for f in findings] == [
        (8, 5, "label 'owner' is not allowed"), (9, 5, "label 'tier' is not allowed")]


def test_match_filters(write: Write) -> None:
    write("p/p.yaml", """\
        id: ACME012
        slug: ml-serving-replicas
        severity: error
        summary: s
        rationale: r
        fix: f
        match:
          roles: [serving]
          namespaces: [ml]
          labelSelector:
            matchLabels: {tier: gpu}
            matchExpressions: [{key: canary, operator: DoesNotExist}]
        target: object
        schema: {properties: {spec: {properties: {replicas: {minimum: 2}}}}}
        """)
    deployment = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d, namespace: NS, labels: LABELS}
        spec:
          replicas: 1
          selector: {matchLabels: {app: d}}
          template:
            metadata: {labels: {app: d}}
            spec: {containers: [{name: main, image: busybox}]}
        """)
    cases = {
        ("ml", "{tier: gpu}"): 1,
        ("ml", "{tier: cpu}"): 0,
        ("ml", "{tier: gpu, canary: 'yes'}"): 0,
        ("dev", "{tier: gpu}"): 0,
    }
    for (ns, labels), expected in cases.items():
        text = deployment.replace("NS", ns).replace("LABELS", labels)
        _, findings, _ = lint_json("--policies", str(write("x", "").parent / "p"), "-",
                                   stdin=text)
        assert len([f for f in findings if f["rule"] == "ACME012"]) == expected, (ns, labels)
        if expected:
            assert (findings[0]["line"], findings[0]["column"]) == (5, 3)


def test_containers_target_includes_init_containers_and_names_them(write: Write) -> None:
    pack = EXAMPLES
    manifest = write("m.yaml", """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api, namespace: serving}
        spec:
          selector: {matchLabels: {app: api}}
          template:
            metadata: {labels: {app: api}}
            spec:
              initContainers: [{name: warm, image: busybox}]
              containers: [{name: server, image: registry.acme.internal/api:1}]
        """)
    _, findings, _ = lint_json("--policies", str(pack), str(manifest))
    assert [(f["rule"], f["line"], f["message"]) for f in findings if f["rule"] == "ACME002"] \
        == [("ACME002", 9, "container 'warm' image 'busybox' is not from "
                           "registry.acme.internal/")]


# --- registry: config, rule levels, suppressions, rules/explain/SARIF ------------------------

def test_config_policies_are_relative_to_the_config_and_take_rule_levels(write: Write) -> None:
    write("repo/policies/prio.yaml", POLICY)
    config = write("repo/.pmanifest.yaml", """\
        policies: [policies]
        rules: {gpu-job-priority: error}
        """)
    manifest = write("repo/m.yaml", MANIFEST)
    code, findings, _ = lint_json("--config", str(config), str(manifest))
    assert [(f["rule"], f["severity"]) for f in findings if f["rule"] == "ACME010"] == [
        ("ACME010", "error"), ("ACME010", "error")]
    assert code == 1


def test_suppressions_and_sarif_see_user_policies(write: Write) -> None:
    write("p/prio.yaml", POLICY)
    text = MANIFEST.replace("metadata: {name: train}",
                            "metadata: {name: train, annotations: "
                            "{pmanifest.io/ignore: gpu-job-priority}}")
    text = text.replace("      containers: [{name: main, image: busybox}]\n---\napiVersion: v1",
                        "      containers: [{name: main, image: busybox}]\n---\napiVersion: v1")
    text = text.replace("    spec:\n      restartPolicy: Never\n      containers",
                        "    spec:  # pmanifest: ignore=ACME010\n      restartPolicy: Never\n"
                        "      containers")
    manifest = write("m.yaml", text)
    _, findings, _ = lint_json("--policies", str(manifest.parent / "p"), str(manifest))
    assert [f for f in findings if f["rule"] == "ACME010"] == []
    result = CliRunner().invoke(main, ["lint", "--no-schema", "--format", "sarif", "--policies",
                                       str(manifest.parent / "p"), "-"], input=MANIFEST)
    rules = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert {"id": "ACME010", "name": "gpu-job-priority"}.items() <= rules[0].items()


def test_rules_and_explain_list_user_policies() -> None:
    listed = CliRunner().invoke(main, ["rules", "--policies", str(EXAMPLES)])
    assert listed.exit_code == 0
    assert "ACME002  serving-image-registry" in listed.stdout
    explained = CliRunner().invoke(main, ["explain", "serving-image-registry", "--policies",
                                          str(EXAMPLES)])
    assert explained.exit_code == 0
    assert explained.stdout.startswith("ACME002 serving-image-registry (error)\n")
    assert "Failing example:\n    apiVersion: apps/v1" in explained.stdout


# --- validation errors: exit 2, naming the policy file and line -------------------------------

BAD = [
    ("unknown key", POLICY.replace("fix: Set", "fixx: x\nfix: Set"),
     "6:1: unknown key 'fixx' in the policy; did you mean 'fix'?"),
    ("PM id in a user policy", POLICY.replace("ACME010", "PM999"),
     "1:5: policy id 'PM999': ids starting with PM are reserved"),
    ("malformed id", POLICY.replace("ACME010", "acme-10"), "1:5: policy id 'acme-10' is malformed"),
    ("invalid JSON Schema", POLICY.replace("required: [priorityClassName]",
                                           "required: priorityClassName"),
     "10:13: schema is not a valid JSON Schema (draft 2020-12): 'priorityClassName' is not of "
     "type 'array'"),
    ("duplicate of a built-in slug", POLICY.replace("slug: gpu-job-priority",
                                                    "slug: grace-period-over-limit"),
     "2:7: policy slug 'grace-period-over-limit' is already defined by "
     "policies/rules-checkpoint.yaml:PM201; give it another slug"),
    ("unknown message name", POLICY.replace("{kind} {name}", "{kind.__class__}"),
     "13:10: message template '{kind.__class__}: {path} {error}' names {kind.__class__}"),
    ("unknown profile placeholder", POLICY.replace("[high, low]", "['{profile.cap}']"),
     "12:32: unknown placeholder {profile.cap}"),
    ("missing required key", POLICY.replace("target: podSpec\n", ""),
     "1:1: the policy is missing 'target'; add it"),
    ("unknown match key", POLICY.replace("match: {kinds: [Job]}", "match: {kind: [Job]}"),
     "7:9: unknown key 'kind' in match; did you mean 'kinds'?"),
    ("bad test expectation", POLICY.replace('["6:5 gpu-job-priority"]', '["six five"]'),
     "25:16: tests[0].findings[0] 'six five' does not match"),
]


@pytest.mark.parametrize(("text", "expected"), [pytest.param(t, e, id=n) for n, t, e in BAD])
def test_invalid_policy_files_are_exit_2_naming_file_and_line(
        write: Write, text: str, expected: str) -> None:
    path = write("p/policy.yaml", text)
    code, findings, stderr = lint_json("--policies", str(path.parent), "-", stdin=MANIFEST)
    assert (code, findings) == (2, [])
    assert stderr.startswith(f"{path}:{expected}"), stderr


def test_duplicate_ids_across_files_and_several_policies_per_file(write: Write) -> None:
    write("p/a.yaml", POLICY + "---\n" + POLICY.replace("ACME010", "ACME013")
          .replace("gpu-job-priority", "gpu-job-priority-two"))
    path = write("p/b.yaml", POLICY.replace("gpu-job-priority", "other-slug"))
    code, _, stderr = lint_json("--policies", str(path.parent), "-", stdin=MANIFEST)
    assert code == 2
    assert stderr == (f"{path}:1:5: policy id 'ACME010' is already defined by "
                      f"{path.parent}/a.yaml:1; give it another id\n")


def test_missing_or_empty_policy_directory(tmp_path: Path) -> None:
    code, _, stderr = lint_json("--policies", str(tmp_path / "nope"), "-", stdin=MANIFEST)
    assert (code, stderr) == (2, f"{tmp_path / 'nope'}: policy directory not found; give a "
                                 "directory of *.yaml policy files\n")
    code, _, stderr = lint_json("--policies", str(tmp_path), "-", stdin=MANIFEST)
    assert (code, stderr) == (2, f"{tmp_path}: no policy files (*.yaml, *.yml) in this "
                                 "directory\n")


# --- the compiled yes/no pre-check agrees with jsonschema -----------------------------------

def test_fast_check_agrees_with_jsonschema_on_every_test_manifest() -> None:
    from jsonschema import Draft202012Validator

    from pmanifest.kube.document import Document
    from pmanifest.kube.profile import get_profile
    from pmanifest.kube.workloads import workloads_of
    from pmanifest.loader.documents import Loaded, load_documents
    from pmanifest.policy import load_policy_dirs
    from pmanifest.rules import ObjectContext

    policies = load_policy_dirs([str(EXAMPLES)])
    checked = 0
    for policy in policies:
        for test in policy.tests:
            profile = get_profile(test.profile or "together")
            fast, schema = policy.compiled(profile)
            assert fast is not None, policy.meta.id  # every shipped schema is compiled
            for item in load_documents(test.manifest):
                assert isinstance(item, Loaded)
                doc = Document("t.yaml", 0, item.data, item.positions)
                ctx = ObjectContext(doc, workloads_of(doc, profile), profile)
                for _, instance, _ in policy.targets(ctx):
                    assert fast(instance) == Draft202012Validator(schema).is_valid(instance)
                    checked += 1
    assert checked >= 10
