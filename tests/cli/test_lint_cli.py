"""Exact CLI behaviour of ``pmanifest lint``, ``rules`` and ``explain``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.lint.engine import ALWAYS

BAD_FIELD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeName: gpu-dp-001  # a standard node: only the schema finding below applies
      terminationGracePeriodSecond: 300
      containers: [{name: main, image: busybox}]
"""
SYNTAX = "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n"
NOT_KUBERNETES = "name: my-app\nvalues: [1, 2]\n"
# the runs select the rule they are about (PM002, the schema), so a new rule changes nothing
SELECT = ("--select", "PM002")
RULES = len({"PM002", *ALWAYS})

# with no profile given and no provider label in the input, the run says which it assumed
ASSUMED = "profile together, the default: no provider label found\n"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no config file from the source tree
    return CliRunner()


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_findings_exit_1_with_exact_text(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml"])
    assert result.exit_code == 1
    assert result.stdout == (
        "job.yaml:9:7: error PM002[schema-invalid] unknown key 'terminationGracePeriodSecond' in "
        "spec.template.spec; did you mean 'terminationGracePeriodSeconds'?\n"
    )
    assert result.stderr == f"1 error, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\n" \
        + ASSUMED


def test_non_kubernetes_files_alone_are_not_a_clean_run(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "values.yaml", NOT_KUBERNETES)
    result = runner.invoke(main, ["lint", *SELECT, "values.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "pmanifest: no Kubernetes object found in values.yaml (1 file read, no object with "
        "apiVersion and kind in it): nothing was checked; name the manifests to lint, or pass "
        "--allow-empty where none is expected\n"))
    result = runner.invoke(main, ["lint", *SELECT, "values.yaml", "--allow-empty"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "", f"0 errors, 0 warnings, 0 info in 1 file (0 objects, {RULES} rules)\n{ASSUMED}"
        "pmanifest: 1 YAML document in 1 file skipped: not Kubernetes objects (no apiVersion "
        "and kind)\n")


def test_a_broken_file_naming_no_object_key_is_counted_with_foreign_yaml(
        runner: CliRunner, tmp_path: Path) -> None:
    """JSON with comments (no apiVersion, no kind) beside a manifest: skipped and counted in
    the note, never PM001; a broken manifest beside them is still PM001."""
    write(tmp_path / "tsconfig.json", '{\n  // comment\n  "extends": "x"\n}\n')
    write(tmp_path / "job.yaml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "tsconfig.json", "job.yaml"])
    assert (result.exit_code, result.stderr) == (1, (
        f"1 error, 0 warnings, 0 info in 2 files (1 object, {RULES} rules)\n{ASSUMED}"
        "pmanifest: 1 YAML document in 1 file skipped: not Kubernetes objects (no apiVersion "
        "and kind)\n"))
    assert "tsconfig.json" not in result.stdout
    write(tmp_path / "pod.yaml", SYNTAX)
    result = runner.invoke(main, ["lint", *SELECT, "tsconfig.json", "pod.yaml"])
    assert result.stdout == "pod.yaml:4:1: error PM001[yaml-syntax-error] " \
        "did not find expected ',' or '}'\n"


def test_a_field_at_the_wrong_level_says_where_it_belongs(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", BAD_FIELD.replace(
        "      terminationGracePeriodSecond: 300\n"
        "      containers: [{name: main, image: busybox}]\n",
        "      containers:\n        - name: main\n          image: busybox\n"
        "          terminationGracePeriodSeconds: 120\n"))
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, (
        "job.yaml:12:11: error PM002[schema-invalid] unknown key 'terminationGracePeriodSeconds' "
        "in spec.template.spec.containers[0]; 'terminationGracePeriodSeconds' belongs on the pod "
        "spec, not here: move it there\n"),
        f"1 error, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\n{ASSUMED}")


def test_json_format_matches_the_design(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "--format", "json", "job.yaml"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["findings"] == [{
        "rule": "PM002", "slug": "schema-invalid", "severity": "error", "file": "job.yaml",
        "line": 9, "column": 7, "object": {"kind": "Job", "name": "train", "namespace": None},
        "path": "spec.template.spec.terminationGracePeriodSecond",
        "message": "unknown key 'terminationGracePeriodSecond' in spec.template.spec; did you "
                   "mean 'terminationGracePeriodSeconds'?",
    }]
    assert payload["summary"] == {"files": 1, "objects": 1, "errors": 1, "warnings": 0,
                                  "infos": 0, "skipped": 0, "profile": {
                                      "name": "together",
                                      "why": "the default: no provider label found"}}


def test_json_carries_the_fix_a_check_proposes(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", BAD_FIELD.replace(
        "      nodeName: gpu-dp-001  # a standard node: only the schema finding below applies\n"
        "      terminationGracePeriodSecond: 300\n",
        "      terminationGracePeriodSeconds: 900\n"))
    result = runner.invoke(main, ["lint", "--select", "PM201", "--format", "json", "job.yaml"])
    assert (result.exit_code, result.stderr) == (
        1, f"1 error, 0 warnings, 0 info in 1 file (1 object, {len({'PM201', *ALWAYS})} rules)\n"
        + ASSUMED)
    assert json.loads(result.stdout)["findings"] == [{
        "rule": "PM201", "slug": "grace-period-over-limit", "severity": "error",
        "file": "job.yaml", "line": 8, "column": 7,
        "object": {"kind": "Job", "name": "train", "namespace": None},
        "path": "spec.template.spec.terminationGracePeriodSeconds",
        "message": "terminationGracePeriodSeconds is 900, above the 300 s cap of preemptible "
                   "nodes (together profile): the node is removed 300 s after the notice "
                   "whatever the pod is doing; set it to 300 or less and finish the checkpoint "
                   "inside that window",
        "fix": {"path": "spec.template.spec.terminationGracePeriodSeconds", "value": 300},
    }]


def test_syntax_error_is_a_finding_and_other_files_are_still_linted(
    runner: CliRunner, tmp_path: Path
) -> None:
    write(tmp_path / "a" / "broken.yaml", SYNTAX)
    write(tmp_path / "a" / "job.yml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "a"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("a/broken.yaml:4:1: error PM001[yaml-syntax-error] ")
    assert lines[1].startswith("a/job.yml:9:7: error PM002[schema-invalid] ")


def test_stdin_with_a_file_name(runner: CliRunner) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "-", "--stdin-filename", "rendered.yaml"],
                           input=BAD_FIELD)
    assert result.exit_code == 1
    assert result.stdout.startswith("rendered.yaml:9:7: error PM002[schema-invalid]")


def test_missing_path_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "nope.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "nope.yaml: no such file or directory\n"


def test_fail_on_threshold(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / ".pmanifest.yaml", "rules:\n  PM002: warning\n")
    write(tmp_path / "job.yaml", BAD_FIELD)
    assert runner.invoke(main, ["lint", *SELECT, "job.yaml"]).exit_code == 0
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml", "--fail-on", "warning"])
    assert result.exit_code == 1
    assert "job.yaml:9:7: warning PM002[schema-invalid]" in result.stdout


def test_inline_ignore_comment_needs_the_rule_name(runner: CliRunner, tmp_path: Path) -> None:
    ignored = BAD_FIELD.replace(
        "terminationGracePeriodSecond: 300",
        'terminationGracePeriodSecond: 300  # pmanifest: ignore=schema-invalid reason="test"')
    write(tmp_path / "ok.yaml", ignored)
    assert runner.invoke(main, ["lint", *SELECT, "ok.yaml"]).exit_code == 0
    other = BAD_FIELD.replace("terminationGracePeriodSecond: 300",
                              "terminationGracePeriodSecond: 300  # pmanifest: ignore=PM201")
    write(tmp_path / "still.yaml", other)
    assert runner.invoke(main, ["lint", *SELECT, "still.yaml"]).exit_code == 1


def test_ignore_comment_on_the_line_above(runner: CliRunner, tmp_path: Path) -> None:
    text = BAD_FIELD.replace("      terminationGracePeriodSecond",
                             "      # pmanifest: ignore=PM002\n      terminationGracePeriodSecond")
    write(tmp_path / "ok.yaml", text)
    assert runner.invoke(main, ["lint", *SELECT, "ok.yaml"]).exit_code == 0


def test_ignore_annotation_on_the_pod_template(runner: CliRunner, tmp_path: Path) -> None:
    text = BAD_FIELD.replace(
        "  template:\n",
        "  template:\n    metadata:\n      annotations: {pmanifest.io/ignore: \"PM002\"}\n")
    write(tmp_path / "ok.yaml", text)
    result = runner.invoke(main, ["lint", *SELECT, "ok.yaml"])
    assert (result.exit_code, result.stdout) == (0, "")


def test_disable_flag_and_unknown_rule(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", BAD_FIELD)
    assert runner.invoke(main, ["lint", *SELECT, "job.yaml", "--disable", "schema-invalid"]
                         ).exit_code == 0
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml", "--disable", "schema-invalide"])
    assert result.exit_code == 2
    assert result.stderr == (
        "pmanifest: unknown rule 'schema-invalide' (did you mean 'schema-invalid'?)\n")


def test_config_unknown_key_names_file_and_line(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / ".pmanifest.yaml", "kubernetesVersion: '1.31'\nrule:\n  PM002: off\n")
    write(tmp_path / "job.yaml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith(
        ".pmanifest.yaml:2:1: unknown key 'rule' in the config; did you mean 'rules'?\n")


def test_config_in_pyproject_is_found_from_a_subdirectory(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.pmanifest]\nrules = { PM002 = 'off' }\n")
    write(tmp_path / "sub" / "job.yaml", BAD_FIELD)
    monkeypatch.chdir(tmp_path / "sub")
    assert runner.invoke(main, ["lint", *SELECT, "job.yaml"]).exit_code == 0


def test_config_bad_level_and_version(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "c.yaml", "rules:\n  PM002: loud\n")
    write(tmp_path / "job.yaml", BAD_FIELD)
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml", "--config", "c.yaml"])
    assert result.exit_code == 2
    assert result.stderr == (
        "c.yaml:2:10: rules.PM002 is 'loud', which is not one of off, error, warning, info; "
        "use one of: off, error, warning, info\n")
    result = runner.invoke(main, ["lint", *SELECT, "job.yaml", "--kubernetes-version", "1.12"])
    assert result.exit_code == 2
    assert result.stderr == (
        "pmanifest: unsupported Kubernetes version '1.12'; supported: 1.25 to 1.37\n")


def test_exclude_patterns_from_config(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / ".pmanifest.yaml", "exclude: ['vendor/*']\n")
    write(tmp_path / "vendor" / "job.yaml", BAD_FIELD)
    write(tmp_path / "k8s" / "job.yaml", BAD_FIELD.replace("terminationGracePeriodSecond:",
                                                           "terminationGracePeriodSeconds:"))
    result = runner.invoke(main, ["lint", *SELECT, "."])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"0 errors, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\n" \
        + ASSUMED


def test_hidden_directories_skipped_symlink_loops_reported(
    runner: CliRunner, tmp_path: Path
) -> None:
    write(tmp_path / "repo" / ".git" / "job.yaml", BAD_FIELD)
    (tmp_path / "repo" / "loop").symlink_to(tmp_path / "repo")
    os.symlink(tmp_path / "missing.yaml", tmp_path / "repo" / "dangling.yaml")
    result = runner.invoke(main, ["lint", *SELECT, "repo", "--allow-empty"])
    assert (result.exit_code, result.stdout) == (0, "")
    assert "repo/loop: warning: symlink loop; directory skipped" in result.stderr
    assert "repo/dangling.yaml: warning: dangling symbolic link; skipped" in result.stderr


def test_rules_lists_every_rule(runner: CliRunner) -> None:
    from pmanifest.rules import registry

    result = runner.invoke(main, ["rules"])
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == len(registry())
    assert result.stdout.startswith("PM001  yaml-syntax-error")


def test_explain_by_slug_and_unknown(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain", "schema-invalid"])
    assert result.exit_code == 0
    assert result.stdout.startswith("PM002 schema-invalid (error)\n")
    assert "Failing example:\n    apiVersion: batch/v1" in result.stdout
    result = runner.invoke(main, ["explain", "PM0002"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "unknown rule 'PM0002'" in result.stderr


def test_explain_documents_the_grace_and_fragment_decisions(runner: CliRunner) -> None:
    grace = " ".join(runner.invoke(main, ["explain", "PM201"]).stdout.split())  # (wrapped)
    assert "An explicit value equal to Kubernetes' default (30 s) is judged like an" in grace
    # one decision for the grace rules: no DaemonSet, said where each says what it reads
    applies = (
        "Applies to:\n  every pod template of role worker, coordinator, serving or unknown (not "
        "DaemonSets, whose pods have the role daemon): of the core workload kinds (Pod, Job, "
        "CronJob, Deployment, StatefulSet, ReplicaSet, ReplicationController, PodTemplate), of "
        "the custom resources pmanifest knows (KubeRay, JobSet, Kubeflow, LeaderWorkerSet, "
        "Volcano, Argo, Spark, and those Katib and AppWrapper embed) and found by shape "
        "(PM003)\n")
    for rule, why in (("PM201", "DaemonSets are not checked, by this rule or the other grace "
                                "rules (PM202, PM203): they run on every node by design"),
                      ("PM202", "DaemonSets are not checked either, as by the other grace rules "
                                "(PM201, PM203): a DaemonSet pod runs on every node by design"),
                      ("PM203", "DaemonSets are not checked, as by the other grace rules (PM201, "
                                "PM202): a node agent's preStop sleep")):
        text = " ".join(runner.invoke(main, ["explain", rule]).stdout.split())  # (wrapped)
        assert " ".join(applies.split()) in text, rule
        assert why in text, rule
    assert "DaemonSet" in runner.invoke(main, ["explain", "PM301"]).stdout.split("Why:")[0]
    fragment = runner.invoke(main, ["explain", "patch-fragment-skipped"]).stdout
    assert fragment.startswith("PM007 patch-fragment-skipped (info)\n")
    assert "Applies to:\n  every Kubernetes object (a patch fragment is reported instead of " \
           "linted)\n" in fragment
    suppression = runner.invoke(main, ["explain", "PM005"]).stdout
    assert "Applies to:\n  every `# pmanifest:` comment and pmanifest.io/ignore annotation\n" \
        in suppression


CHECK_CODE = ("pmanifest.rules", "pmanifest.lint.engine", "pmanifest.shell", "pmanifest.policy",
              "pmanifest.kube.workloads", "pmanifest.kube.placement")


@pytest.mark.parametrize("command", [["explain", "PM201"], ["rules"],
                                     ["rules", "--format", "json"]])
def test_asking_what_a_rule_means_imports_no_check(tmp_path: Path, command: list[str]) -> None:
    """`explain` and `rules` read the catalogue only (what a rule applies to included): a
    fresh interpreter runs them and names the pmanifest modules it imported."""
    script = ("import sys\nfrom click.testing import CliRunner\n"
              "from pmanifest.cli.main import main\n"
              f"result = CliRunner().invoke(main, {command!r})\n"
              "assert result.exit_code == 0, result.output\n"
              "print(' '.join(sorted(m for m in sys.modules if m.startswith('pmanifest'))))\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
    modules = proc.stdout.split()
    assert "pmanifest.catalogue" in modules
    assert [m for m in modules if m.startswith(CHECK_CODE)] == []
