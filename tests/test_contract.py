"""The preemption contract ties render and lint together: the exit code a rendered container
really ends with on SIGTERM is the one its Job's podFailurePolicy ignores, is
``contract.SIGTERM_EXIT``, and is what PM401/PM403 accept. Changing the number in one place
only fails here (the container runs for real under /bin/sh)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from pmanifest.contract import SIGTERM_EXIT
from pmanifest.lint import LintOptions, lint_bytes
from pmanifest.render import render_text

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
    assert [f.rule for f in findings if f.rule.startswith("PM4")] == []
    # without the exit-code rule (and no retries to spare), PM403 names the same code
    job["spec"]["podFailurePolicy"]["rules"] = [
        r for r in job["spec"]["podFailurePolicy"]["rules"] if "onExitCodes" not in r]
    job["spec"]["backoffLimit"] = 0
    findings = lint_bytes(yaml.safe_dump(job).encode(), "job.yaml", LintOptions())
    messages = [f.message for f in findings if f.rule == "PM403"]
    assert len(messages) == 1
    assert f"no podFailurePolicy rule ignores exit code {SIGTERM_EXIT}" in messages[0]
