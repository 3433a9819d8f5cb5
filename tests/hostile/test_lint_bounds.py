"""Issue 15, round two, the lint engine's part: linear work on large inputs (items 6-8), odd
kinds and integers (13, 22), the config's own schema (24), PodTemplate (25). Every case runs
the real CLI with exact output; the time bound of ``invoke`` only catches a hang (the figures
are printed by ``bench/hostile_lint.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.hostile.conftest import invoke, summary
from tests.hostile.lint_inputs import job_list, long_comment, selector_keys

ROOT = Path(__file__).resolve().parents[2]
PM303 = ("error PM303[trap-lost-by-exec] `exec ./train` replaces the shell, discarding the TERM "
         "trap (line {trap}): run it in the background and `wait` for it instead")
PM201 = ("error PM201[grace-period-over-limit] terminationGracePeriodSeconds is 900, above the "
         "300 s cap of preemptible nodes (together profile): the node is removed 300 s after "
         "the notice whatever the pod is doing; set it to 300 or less and finish the "
         "checkpoint inside that window\n")


def test_a_list_of_jobs_with_a_shell_finding_each_is_linear(tmp_path: Path,
                                                            runner: CliRunner) -> None:
    """650 Jobs in one `kind: List` (438 KB, located path by path): 58 s before, one extra
    parse for all the findings now."""
    (tmp_path / "list.yaml").write_text(job_list(650))
    result = invoke(runner, ["lint", "list.yaml"])
    expected = "".join(f"list.yaml:{25 + 22 * i}:19: " + PM303.format(trap=24 + 22 * i) + "\n"
                       for i in range(650))  # each Job is 22 lines
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, expected, summary("650 errors, 0 warnings, 0 info in 1 file (650 objects)"))


def test_ten_thousand_selector_keys_skip_the_edit_distance(tmp_path: Path,
                                                           runner: CliRunner) -> None:
    """PM105 compares every nodeSelector key with the label: keys whose length is outside
    the edit budget are skipped before any quadratic work (23 s before)."""
    (tmp_path / "keys.yaml").write_text(selector_keys(10_000))
    result = invoke(runner, ["lint", "keys.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file (1 object)"))


def test_a_long_comment_line_is_read_in_one_pass(tmp_path: Path, runner: CliRunner) -> None:
    """A 100 KB comment that looks like a suppression: 72 s before, linear now; it names no
    known rule, so the finding stays."""
    (tmp_path / "comment.yaml").write_text(long_comment(100_000))
    result = invoke(runner, ["lint", "comment.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "comment.yaml:6:3: " + PM201,
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)"))


def test_a_long_unknown_name_is_cut_in_the_message(tmp_path: Path, runner: CliRunner) -> None:
    """PM005 on the same comment: its message echoed all 100 KB of the name."""
    (tmp_path / "comment.yaml").write_text(long_comment(100_000))
    result = invoke(runner, ["lint", "comment.yaml", "--select", "PM005", "--select", "PM201"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, (
        "comment.yaml:5:23: warning PM005[suppression-suppresses-nothing] `# pmanifest: "
        "ignore` names '" + "PM201 " * 9 + "PM2'... (99,997 characters), which is no rule, so "
        "it suppresses nothing; `pmanifest rules` lists the ids and slugs\n"
        "comment.yaml:6:3: " + PM201),
        summary("1 error, 1 warning, 0 info in 1 file (1 object)", 4))


def test_inline_suppressions_still_read_as_before() -> None:
    from pmanifest.lint.suppress import comment_names

    assert comment_names("  # pmanifest: ignore=PM201,prestop-sleep") == "PM201,prestop-sleep"
    assert comment_names("x: 1  #pmanifest:ignore=PM201 reason=\"drain\"") == "PM201"
    assert comment_names("# pmanifest: ignore=PM201 reason=a reason=b") == "PM201"
    assert comment_names("# pmanifest: ignore=PM201 trailing words!") is None
    assert comment_names("pmanifest: ignore=PM201") is None  # not a comment
    assert comment_names("# pmanifest: ignore=") is None


def test_a_kind_of_hundreds_of_characters_is_simply_not_schema_checked(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "k.yaml").write_text(f"apiVersion: v1\nkind: {'K' * 400}\nmetadata: {{name: x}}\n")
    result = invoke(runner, ["lint", "k.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file (1 object)"))


def test_integers_past_their_format_are_schema_errors(tmp_path: Path,
                                                      runner: CliRunner) -> None:
    (tmp_path / "d.yaml").write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 3000000000
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 10000000000000000000000
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: together.ai/compute-class, operator: NotIn, values: [preemptible]}
      containers: [{name: api, image: nginx}]
""")
    result = invoke(runner, ["lint", "d.yaml", "--select", "PM002"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, (
        "d.yaml:5:3: error PM002[schema-invalid] spec.replicas is 3000000000, which does not "
        "fit in int32 (-2147483648 to 2147483647); use a smaller value\n"
        "d.yaml:10:7: error PM002[schema-invalid] "
        "spec.template.spec.terminationGracePeriodSeconds is 10000000000000000000000, which "
        "does not fit in int64 (-9223372036854775808 to 9223372036854775807); use a smaller "
        "value\n"), summary("2 errors, 0 warnings, 0 info in 1 file (1 object)", 3))


def test_render_refuses_integers_too_large_for_kubernetes_at_the_spec_line(
        tmp_path: Path, runner: CliRunner) -> None:
    spec = yaml.safe_load((ROOT / "examples" / "serving.yaml").read_text())
    spec["workloads"][0]["replicas"] = 3_000_000_000
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    line = next(i for i, text in enumerate((tmp_path / "spec.yaml").read_text().splitlines(), 1)
                if "3000000000" in text)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"spec.yaml:{line}:13: workloads[0].replicas must be at most "
                             "2147483647, got 3000000000; change the value\n")


def test_an_unquoted_version_in_the_config_says_quote_it(tmp_path: Path,
                                                         runner: CliRunner) -> None:
    (tmp_path / ".pmanifest.yaml").write_text("kubernetesVersion: 1.30\n")
    (tmp_path / "k.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = invoke(runner, ["lint", "k.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"{Path.cwd() / '.pmanifest.yaml'}:1:20: kubernetesVersion must be a string, got "
        "number; quote it to make it a string\n"))


def test_a_pyproject_tool_section_that_is_not_a_table_is_an_error(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool]\npmanifest = "strict"\n')
    (tmp_path / "k.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = invoke(runner, ["lint", "k.yaml", "--config", "pyproject.toml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("pyproject.toml: [tool.pmanifest] must be a table of pmanifest "
                             "settings, not string 'strict'\n")


def test_a_pod_template_is_linted(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "t.yaml").write_text("""\
apiVersion: v1
kind: PodTemplate
metadata: {name: trainer}
template:
  spec:
    nodeSelector: {together.ai/compute-class: preemptible}
    terminationGracePeriodSeconds: 900
    containers: [{name: main, image: busybox}]
""")
    result = invoke(runner, ["lint", "t.yaml", "--select", "PM201"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "t.yaml:7:5: " + PM201, summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


@pytest.mark.slow  # a benchmark, as tests/test_bench*.py
def test_the_bench_script_runs(tmp_path: Path) -> None:
    """bench/hostile_lint.py prints a figure per input (quick mode)."""
    import subprocess
    import sys

    assert shutil.which(sys.executable)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "hostile_lint.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == [
        "list of 650 Jobs", "10,000 selector keys", "100 KB comment line"]
