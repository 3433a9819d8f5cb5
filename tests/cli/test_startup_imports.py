"""What a plain lint of a clean file (pre-commit's usual run) and ``--version`` load: what only
other runs need stays unloaded, so start-up stays short (bench/run.py figure 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# what the interpreter loaded before pmanifest (a site .pth file may import tempfile, as on the
# CI machine) is not pmanifest's doing: only the modules pmanifest's run adds are compared
PROBE = """\
import json, sys
before = set(sys.modules)
from pmanifest.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, sorted(set(sys.modules) - before)]), file=sys.stderr)
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: trainer
          command: [sh, -c, "trap 'exit 143' TERM; python train.py & wait"]
"""
# loaded only by the runs that use them: a did-you-mean, a pyproject.toml, a schema error to
# word, policies, --cluster or cluster check, render (tempfile, for a report written to a
# file, comes with importlib.resources: only --version goes without it)
NOT_FOR_A_PLAIN_LINT = {
    "difflib", "tomllib", "jsonschema", "pmanifest.schema.words", "pmanifest.policy",
    "pmanifest.cluster.request", "pmanifest.cluster.demand", "pmanifest.cluster.capacity",
    "pmanifest.cluster.packing",
    "pmanifest.lint.cluster", "pmanifest.render.engine", "pmanifest.render.spec",
}


def _modules(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    code, modules = json.loads(result.stderr.splitlines()[-1])
    return code, set(modules)


def test_a_plain_lint_loads_only_what_it_uses(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    code, modules = _modules(tmp_path, "lint", "job.yaml")
    assert code == 0
    assert "pmanifest.lint.engine" in modules and "pmanifest.rules.checkpoint" in modules
    assert not modules & NOT_FOR_A_PLAIN_LINT


def test_version_loads_no_rule_and_no_yaml(tmp_path: Path) -> None:
    code, modules = _modules(tmp_path, "--version")
    assert code == 0
    assert not {m for m in modules if m.startswith(("pmanifest.rules", "pmanifest.lint.engine"))}
    assert not modules & {"yaml", "tempfile", *NOT_FOR_A_PLAIN_LINT}
