"""Several reports from one lint pass: ``--format``/``--output`` pairs, atomic files, the
SARIF and GitHub reports pointing at the real line of a linted file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.lint.engine import ALWAYS
from tests.integration.manifests import BAD_FIELD, LONG_GRACE
from tests.reporters.sarif_schema import schema_errors

# the runs select the rules of the planted mistakes, so a new rule changes none of the counts
SELECT = ("--select", "PM002", "--select", "PM201")
RULES = len({"PM002", "PM201", *ALWAYS})


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no config file from the source tree; SARIF root = tmp_path
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "train.yaml").write_text(BAD_FIELD)
    (tmp_path / "k8s" / "finetune.yaml").write_text(LONG_GRACE)
    return CliRunner()


def test_sarif_file_and_text_on_stdout_from_one_pass(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "k8s", "--format", "sarif", "--output",
                                  "results.sarif", "--format", "text"])
    assert result.exit_code == 1
    assert "k8s/train.yaml:8:7: error PM002[schema-invalid]" in result.stdout
    assert "k8s/finetune.yaml:9:7: error PM201[grace-period-over-limit]" in result.stdout
    # the summary, once, and the profile the run inferred
    assert result.stderr.endswith(f"in 2 files (2 objects, {RULES} rules)\nprofile together, "
                                  "inferred from together.ai/compute-class in 1 object\n")
    assert result.stderr.count("\n") == 2
    log = json.loads((tmp_path / "results.sarif").read_text())
    assert schema_errors(log) == []
    located = {
        (r["ruleId"], loc["artifactLocation"]["uri"], loc["region"]["startLine"],
         loc["region"]["startColumn"])
        for r in log["runs"][0]["results"]
        for loc in (r["locations"][0]["physicalLocation"],)
    }
    assert ("PM002", "k8s/train.yaml", 8, 7) in located
    assert ("PM201", "k8s/finetune.yaml", 9, 7) in located
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_absolute_paths_become_repository_relative_uris(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    result = runner.invoke(main, ["lint", *SELECT, str(tmp_path / "k8s" / "train.yaml"),
                                  "--format", "sarif"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(result.stdout)["runs"][0]["results"]}
    assert uris == {"k8s/train.yaml"}


def test_github_annotations_at_the_line(runner: CliRunner) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "k8s/train.yaml", "--format", "github"])
    assert result.exit_code == 1
    assert ("::error file=k8s/train.yaml,line=8,col=7,title=PM002 schema-invalid::"
            "unknown key 'terminationGracePeriodSecond' in spec.template.spec; did you mean "
            "'terminationGracePeriodSeconds'?\n") in result.stdout
    # every run ends with the summary on stderr, whatever the format: a CI log shows what ran
    assert result.stderr == f"1 error, 0 warnings, 0 info in 1 file (1 object, {RULES} rules)\n" \
        "profile together, the default: no provider label found\n"


def test_three_files_and_dash_for_stdout(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    result = runner.invoke(main, [
        "lint", *SELECT, "k8s", "--format", "junit", "--output", "out/report.xml",
        "--format", "json", "--output", "-", "--format", "github", "--output", "gh.txt",
    ])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["summary"]["files"] == 2
    assert (tmp_path / "out" / "report.xml").read_text().startswith("<?xml")
    assert "::error file=k8s/finetune.yaml,line=9,col=7," in (tmp_path / "gh.txt").read_text()
    mode = (tmp_path / "gh.txt").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's 0600


def test_outputs_only_to_files_print_nothing(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "k8s", "--format", "json", "--output", "r.json"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", f"2 errors, 0 warnings, 0 info in 2 files (2 objects, {RULES} rules)\n"
        "profile together, inferred from together.ai/compute-class in 1 object\n")
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["errors"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "json", "--format", "text"],
     "pmanifest: formats json, text would all go to stdout; give each but one an --output "
     "FILE\n"),
    (["--format", "json", "--output", "a.json", "--output", "b.json"],
     "pmanifest: --output b.json: no --format to pair with (give one --format per --output, "
     "in order)\n"),
    (["--format", "json", "--output", "a.json", "--format", "sarif", "--output", "./a.json"],
     "pmanifest: --output ./a.json is given twice (as --output a.json): the first output would "
     "be lost; give each its own file\n"),
    (["--format", "sarif", "--output", "missing/r.sarif"],
     "missing/r.sarif: directory missing does not exist\n"),
    (["--format", "sarif", "--output", "k8s"],
     "k8s: is a directory; --output needs a file path\n"),
])
def test_output_usage_errors_exit_2_and_write_nothing(
    runner: CliRunner, tmp_path: Path, args: list[str], message: str
) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    result = runner.invoke(main, ["lint", *SELECT, "k8s", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_unknown_format_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["lint", *SELECT, "k8s", "--format", "sarf"])
    assert result.exit_code == 2
    assert "'sarf' is not one of 'text', 'json', 'sarif', 'github', 'junit'" in result.stderr


def test_a_failed_write_leaves_old_reports_and_no_temp_files(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.json").write_text("old a\n")
    (tmp_path / "b.sarif").write_text("old b\n")
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if str(dst).endswith("b.sarif"):
            raise OSError(28, "No space left on device", src)
        real_replace(src, dst)

    monkeypatch.setattr("pmanifest.io.writing.os.replace", failing_replace)
    result = runner.invoke(main, ["lint", *SELECT, "k8s", "--format", "sarif", "--output",
                                  "b.sarif", "--format", "json", "--output", "a.json"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "b.sarif: cannot write report: No space left on device\n"
    assert (tmp_path / "b.sarif").read_text() == "old b\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
