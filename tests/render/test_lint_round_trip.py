"""What render produces, lint accepts: every example's output has no finding at all."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pmanifest.cli.main import main


def test_rendered_example_lints_clean(example: Path) -> None:
    rendered = CliRunner().invoke(main, ["render", "-f", str(example)])
    assert rendered.exit_code == 0
    linted = CliRunner().invoke(main, ["lint", "--fail-on", "info", "-"], input=rendered.stdout)
    assert (linted.exit_code, linted.stdout) == (0, "")
    assert linted.stderr.startswith("0 errors, 0 warnings, 0 info in 1 file (")  # the summary


def test_supervisor_handler_is_a_second_trigger_only_when_it_checkpoints() -> None:
    """The supervisor's TERM handler runs the checkpoint command in mode command; in mode
    prestop it only stops the main, so a preStop hook is the one trigger (PM301 stays quiet).
    The same pod with the mode edited to command checkpoints twice."""
    example = Path(__file__).resolve().parents[2] / "examples" / "eval-sweep-prestop.yaml"
    rendered = CliRunner().invoke(main, ["render", "-f", str(example)])
    assert rendered.exit_code == 0
    assert rendered.stdout.count("- pmanifest-supervisor\n        - prestop\n") == 1
    edited = rendered.stdout.replace("- pmanifest-supervisor\n        - prestop\n",
                                     "- pmanifest-supervisor\n        - command\n")
    linted = CliRunner().invoke(main, ["lint", "--select", "PM301", "-"], input=edited)
    assert linted.exit_code == 1
    assert "PM301[double-checkpoint-trigger]" in linted.stdout
    assert linted.stdout.count("\n") == 1
