"""What render produces, lint accepts: every example's output has no finding at all."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pmanifest.cli import main


def test_rendered_example_lints_clean(example: Path) -> None:
    rendered = CliRunner().invoke(main, ["render", "-f", str(example)])
    assert rendered.exit_code == 0
    linted = CliRunner().invoke(main, ["lint", "--fail-on", "info", "-"], input=rendered.stdout)
    assert (linted.exit_code, linted.stdout) == (0, "")
    assert linted.stderr.startswith("0 errors, 0 warnings, 0 info in 1 file (")  # the summary
