"""The preemption contract ties render and lint together: the exit code a rendered container
really ends with on SIGTERM is the one its Job's podFailurePolicy ignores, is
``contract.SIGTERM_EXIT``, and is what PM401/PM403 accept. Changing the number in one place
only fails here (the container runs for real under /bin/sh)."""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from pmanifest.catalogue import catalogue
from pmanifest.kube import contract
from pmanifest.kube import kinds as workload_kinds
from pmanifest.kube.contract import SIGTERM_EXIT
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.render.engine import render_text

ROOT = Path(__file__).resolve().parent.parent
MAIN = "import os, sys, time; open(sys.argv[1], 'w').write('up'); time.sleep(60)"


def _job(tmp_path: Path) -> dict[str, Any]:
    spec = yaml.safe_load((ROOT / "examples" / "finetune-sigterm.yaml").read_text())
    workload = spec["workloads"][0]
    workload["command"] = [sys.executable, "-c", MAIN]
    workload["args"] = [str(tmp_path / "started")]
    workload["checkpoint"]["command"] = ["true"]
    text = render_text(yaml.safe_dump(spec, sort_keys=False), "spec.yaml")
    job: dict[str, Any] = next(o for o in yaml.safe_load_all(text) if o["kind"] == "Job")
    return job


def _ignored_exit_codes(job: dict[str, Any]) -> set[int]:
    codes: set[int] = set()
    for rule in job["spec"]["podFailurePolicy"]["rules"]:
        on = rule.get("onExitCodes")
        if rule["action"] == "Ignore" and on and on["operator"] == "In":
            codes.update(on["values"])
    return codes


def test_a_preempted_rendered_container_exits_with_the_code_its_job_ignores(
        tmp_path: Path) -> None:
    job = _job(tmp_path)
    container = job["spec"]["template"]["spec"]["containers"][0]
    argv = [*container["command"], *container.get("args", [])]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=dict(os.environ))
    deadline = time.monotonic() + 10
    while not (tmp_path / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "main did not start"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    assert code == SIGTERM_EXIT
    assert _ignored_exit_codes(job) == {code}


def test_lint_accepts_what_render_writes_and_knows_the_same_code(tmp_path: Path) -> None:
    job = _job(tmp_path)
    findings = lint_bytes(yaml.safe_dump(job).encode(), "job.yaml", LintOptions())
    job_rules = {m.id for m in catalogue().values() if "rules-jobs" in m.source}
    assert job_rules and [f.rule for f in findings if f.rule in job_rules] == []
    # without the exit-code rule (and no retries to spare), PM403 names the same code
    job["spec"]["podFailurePolicy"]["rules"] = [
        r for r in job["spec"]["podFailurePolicy"]["rules"] if "onExitCodes" not in r]
    job["spec"]["backoffLimit"] = 0
    findings = lint_bytes(yaml.safe_dump(job).encode(), "job.yaml", LintOptions())
    messages = [f.message for f in findings if f.rule == "PM403"]
    assert len(messages) == 1
    assert f"no podFailurePolicy rule ignores exit code {SIGTERM_EXIT}" in messages[0]


# names of the contract that code must import from contract.py rather than spell again: a
# second spelling would drift from the first without failing anything
SPELLED_ONCE = {
    "ROLE_LABEL": contract.ROLE_LABEL,
    "DISRUPTION_TARGET": contract.DISRUPTION_TARGET,
    "SUPERVISOR_NAME": contract.SUPERVISOR_NAME,
}
SOURCE = ROOT / "src" / "pmanifest"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (prose, not values)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    values = {v: k for k, v in SPELLED_ONCE.items()}
    where = path.relative_to(ROOT)
    return [f"{where}:{node.lineno}: {node.value!r} is contract.{values[node.value]}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and id(node) not in prose
            and isinstance(node.value, str) and node.value in values]


def test_the_contract_is_spelled_once_in_the_code() -> None:
    found = [line for path in sorted(SOURCE.rglob("*.py")) if path.name != "contract.py"
             for line in _spelled(path)]
    assert found == []


def test_templates_take_the_contract_from_the_render_context() -> None:
    found = []
    for path in sorted((ROOT / "templates").glob("*.j2")):
        code = re.sub(r"\{#.*?#\}", "", path.read_text(encoding="utf-8"), flags=re.S)
        found += [f"{path.name}: {name}" for name, value in SPELLED_ONCE.items()
                  if value in code]
    assert found == []


def test_the_kinds_table_names_the_contract_roles() -> None:
    assert (workload_kinds.WORKER, workload_kinds.COORDINATOR, workload_kinds.SERVING) == \
        contract.ROLES
