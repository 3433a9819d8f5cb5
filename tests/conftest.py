"""The suite's two speeds: ``pytest -m "not slow"`` is what a developer runs while working
(under two minutes on a quiet 2-CPU machine); CI runs everything. Slow are the tests that run
real processes for long (pre-commit and the CI recipes installing pmanifest, the benchmarks,
real shells as PID 1 and real torchrun, the documentation's every command, hypothesis' deep runs,
bounded-time-and-memory checks on large inputs, CEL over every case under every profile) —
by where they live, here, so a new test in one of these places is slow without a word, and by
``@pytest.mark.slow`` anywhere else. A run that deselects ``slow`` also runs a quarter of each
hypothesis test's examples (tests/hypothesis_profiles.py); the whole suite runs them all."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

import tests.hypothesis_profiles  # noqa: F401  (registers the profiles)

HERE = Path(__file__).resolve().parent
# The tools the test extras install (ruff, shellcheck, pre-commit, kubectl, pmanifest itself)
# sit beside the Python that runs the suite: found there whether or not its virtual
# environment is activated (`.venv/bin/python -m pytest`).
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                      os.environ.get("PATH", os.defpath)])
SLOW = (
    # pre-commit, the CI recipes and kubectl, each installing or running tools (the rest of
    # integration/ is fast: CI recipe and hook command lines parsed, several outputs of one
    # pass, shell completion)
    "integration/test_precommit.py",
    "integration/test_recipes.py",
    "integration/test_kubectl.py",
    "integration/test_kustomize_build.py",
    "integration/test_scalars.py",
    "distributed",  # real torchrun
    "preemption",  # rendered containers as PID 1 under three shells, races repeated
    "admission/test_differential.py",  # CEL on every case and example under every profile
    "admission/test_export.py",  # every policy through two CEL implementations and kubectl
    "hostile/test_resources.py",  # time and memory of large inputs in real processes
    "hostile/test_process.py",  # real processes: signals, full and closed stdout, --jobs
    "test_bench.py",
    "test_bench_hostile.py",
    "test_readme.py",  # every command of the README and docs/ in a sandbox
    "test_lint_fuzz.py",  # hypothesis, many examples
    "test_code_quality.py",  # ruff, mypy --strict and vulture over the whole tree
)


def pytest_configure(config: pytest.Config) -> None:
    """The fast subset runs hypothesis' ``fast`` profile; any other run ``whole``, unless
    ``--hypothesis-profile`` names one."""
    if config.getoption("--hypothesis-profile", None):
        return
    fast = "not slow" in " ".join(str(config.getoption("markexpr") or "").split())
    settings.load_profile("fast" if fast else "whole")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        relative = Path(str(item.fspath)).resolve().relative_to(HERE).as_posix()
        if any(relative == slow or relative.startswith(slow.rstrip("/") + "/")
               for slow in SLOW):
            item.add_marker(pytest.mark.slow)
