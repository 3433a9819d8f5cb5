"""ruff and mypy --strict run as part of the suite, so CI enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")
def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff")
    assert ruff, "ruff is a test dependency"
    result = subprocess.run([ruff, "check", "src", "tests", "bench"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")
def test_mypy_strict_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "src/pmanifest"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
