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


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")
def test_no_dead_code() -> None:
    """vulture finds nothing unused in src/ (rules and click commands are registered by their
    decorators; tests/dead_code_allowed.py names what frameworks read)."""
    result = subprocess.run(
        [sys.executable, "-m", "vulture", "src/pmanifest", "tests/dead_code_allowed.py",
         "--min-confidence", "60", "--ignore-decorators", "@rule,@*.command,@*.group"],
        cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dead_code_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def used() -> int:\n    return 1\n\n\n"
                                   "def never_called() -> int:\n    return used()\n")
    result = subprocess.run([sys.executable, "-m", "vulture", str(tmp_path / "m.py"),
                             "--min-confidence", "60"], capture_output=True, text=True)
    assert result.returncode != 0 and "never_called" in result.stdout
