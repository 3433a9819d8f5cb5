from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pmanifest.cli import main

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


def test_every_example_renders() -> None:
    assert EXAMPLES
    for example in EXAMPLES:
        result = CliRunner().invoke(main, ["render", "-f", str(example)])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("---\n")
        assert result.stderr == ""
