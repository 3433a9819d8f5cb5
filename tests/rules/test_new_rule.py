"""``python -m pmanifest.rules.new`` writes the three files of a new rule (STYLE.md, "Writing a
rule"): files the catalogue, the registry and the case runner read as they are, and a start
that fails its own cases until the check is written."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pmanifest.rules import TOOLS, registry
from pmanifest.rules.new import main
from tests.rules.running import catalogue_entries


def _tree(tmp_path: Path) -> Path:
    for folder in ("src/pmanifest/rules", "policies", "tests/rules/cases"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "policies" / "rules-jobs.yaml").write_text("# Job rules\n- id: PM401\n")
    return tmp_path


def test_a_new_rule_gets_its_check_entry_and_cases(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path)
    assert main(["PM498", "job-without-deadline", "--root", str(root)]) == 0
    module = root / "src/pmanifest/rules/job_without_deadline.py"
    catalogue = root / "policies/rules-job_without_deadline.yaml"
    cases = root / "tests/rules/cases/PM498.yaml"
    assert capsys.readouterr().out.splitlines() == [f"wrote {module}", f"wrote {catalogue}",
                                                    f"wrote {cases}"]
    tree = ast.parse(module.read_text())
    [check] = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert check.name == "job_without_deadline"
    assert ast.unparse(check.decorator_list[0]) == "rule('PM498')"
    [meta] = catalogue_entries(catalogue.read_text(), "policies/rules-x.yaml")
    assert (meta.id, meta.slug, meta.severity) == ("PM498", "job-without-deadline", "warning")
    assert meta.example_fail.startswith("apiVersion: batch/v1") and meta.example_pass
    data = yaml.safe_load(cases.read_text())
    assert data["rule"] == "PM498"
    assert [c["findings"] for c in data["cases"]] == [["1:1 job-without-deadline"], []]


def test_a_family_module_and_catalogue_are_extended_not_replaced(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = (root / "policies" / "rules-jobs.yaml").read_text()
    assert main(["PM498", "job-without-deadline", "--family", "jobs", "--root",
                 str(root)]) == 0
    assert main(["PM497", "job-without-owner", "--family", "jobs", "--root", str(root)]) == 0
    text = (root / "policies" / "rules-jobs.yaml").read_text()
    assert text.startswith(before) and text.count("- id: PM49") == 2
    functions = [n.name for n in ast.parse((root / "src/pmanifest/rules/jobs.py").read_text())
                 .body if isinstance(n, ast.FunctionDef)]
    assert functions == ["job_without_deadline", "job_without_owner"]


@pytest.mark.parametrize(("args", "message"), [
    (["PM201", "something-new"], "PM201 is taken: choose another"),
    (["PM498", "grace-period-over-limit"], "grace-period-over-limit is taken: choose another"),
    (["PX1", "x"], "PX1: a rule id is PM and three digits, e.g. PM407"),
    (["PM498", "Not_A_Slug"], "Not_A_Slug: a slug is lowercase words joined by '-', e.g. "
                              "grace-period-over-limit"),
])
def test_what_cannot_be_a_new_rule_is_refused(tmp_path: Path, args: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path)
    assert main([*args, "--root", str(root)]) == 2
    assert capsys.readouterr().err == f"pmanifest.rules.new: {message}\n"
    assert sorted(p.name for p in (root / "tests/rules/cases").iterdir()) == []


def test_the_tool_is_not_a_check_and_runs_as_documented(tmp_path: Path) -> None:
    assert "new" in TOOLS and all(r.meta.id != "PM498" for r in registry().values())
    proc = subprocess.run([sys.executable, "-m", "pmanifest.rules.new", "PM498", "a-b",
                           "--root", str(_tree(tmp_path))], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.count("wrote ") == 3, proc.stderr
