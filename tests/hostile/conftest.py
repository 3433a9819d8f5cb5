"""Shared helpers for the hostile-input suite: run the real CLI and check the invariants every
hostile input must keep (an exit code we chose, no traceback, bounded time)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pmanifest.cli.main import main
from tests.stderr import render_stderr

# generous: the machine is shared; a hang or a quadratic blow-up is orders of magnitude slower
TIME_LIMIT_S = 20.0
# The rules these expectations were written for: lint runs here select them, so a rule added
# later never changes an expected output of this suite (it brings its own case file).
RULES = ("PM001", "PM002", "PM101", "PM102", "PM103", "PM104", "PM105", "PM201", "PM202",
         "PM203", "PM301", "PM302", "PM303", "PM304", "PM305", "PM306", "PM401", "PM402")


def summary(counts: str, rules: int | None = None) -> str:
    """The summary line of a run: ``counts`` ("1 error, ... (2 objects)") with the number of
    rules it applied, by default RULES and what every run applies (PM001, PM007)."""
    from pmanifest.lint.engine import ALWAYS

    applied = len(set(RULES) | set(ALWAYS)) if rules is None else rules
    return f"{counts[:-1]}, {applied} rules)\n"


def selected(args: Sequence[str]) -> list[str]:
    """``args`` with ``--select`` of RULES added to a lint command that selects nothing, and
    the profile these expectations were written for to one that names none (what a run
    infers without one is tests/cli/test_input_facts.py's subject)."""
    args = list(args)
    end = args.index("--") if "--" in args else len(args)  # options go before the file names
    options, names = args[:end], args[end:]
    if options[:1] == ["lint"] and "--select" not in options:
        options += [option for rule in RULES for option in ("--select", rule)]
    if options[:1] == ["lint"] and "--profile" not in options and "--config" not in options:
        options += ["--profile", "together"]
    return options + names


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # relative names in findings; no config file from the tree
    return CliRunner()


def invoke(runner: CliRunner, args: Sequence[str], stdin: bytes | None = None,
           limit: float = TIME_LIMIT_S) -> Result:
    """Run ``pmanifest ARGS`` in-process; the outcome must be a deliberate exit, not a crash."""
    start = time.monotonic()
    result = runner.invoke(main, selected(args), input=stdin)
    elapsed = time.monotonic() - start
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code != 3, result.stderr  # 3 is "internal error": a bug
    assert "Traceback" not in result.stdout + result.stderr
    assert elapsed < limit, f"took {elapsed:.1f} s"
    return _Selected(result) if list(args[:1]) == ["render"] else result


class _Selected:
    """A render's result with only the lint warnings of RULES on stderr (tests/stderr.py)."""

    def __init__(self, result: Result) -> None:
        self._result = result
        self.stderr = render_stderr(result.stderr, RULES)

    def __getattr__(self, name: str) -> object:
        return getattr(self._result, name)


def run_real(args: Sequence[str], cwd: Path, stdin: bytes | None = None,
             limit: float = 60.0) -> subprocess.CompletedProcess[bytes]:
    """``python -m pmanifest ARGS`` in a real process, as a terminal or CI job would run it."""
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "pmanifest", *selected(args)], cwd=cwd,
                          input=stdin,
                          capture_output=True, timeout=limit, env=env, check=False)
    assert b"Traceback" not in proc.stdout + proc.stderr, proc.stderr.decode(errors="replace")
    assert proc.returncode in (0, 1, 2), proc.stderr.decode(errors="replace")
    if list(args[:1]) == ["render"]:
        kept = render_stderr(proc.stderr.decode(errors="surrogateescape"), RULES)
        proc.stderr = kept.encode(errors="surrogateescape")
    return proc
