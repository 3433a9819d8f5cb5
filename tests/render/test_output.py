"""``render -o FILE`` writes atomically; ``render --check`` tells drift from no drift."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
SPEC = str(EXAMPLES / "serving.yaml")


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def rendered(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(main, ["render", "-f", SPEC, *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_output_file_equals_stdout_and_keeps_the_mode(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("old\n")
    target.chmod(0o640)
    result = runner.invoke(main, ["render", "-f", SPEC, "-O", str(target)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert target.read_text() == rendered(runner)
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]  # no temp file left


def test_output_format_from_suffix_and_flag(runner: CliRunner, tmp_path: Path) -> None:
    runner.invoke(main, ["render", "-f", SPEC, "-O", str(tmp_path / "out.json")])
    assert (tmp_path / "out.json").read_text() == rendered(runner, "-o", "json")
    runner.invoke(main, ["render", "-f", SPEC, "--output-file", str(tmp_path / "o.txt"),
                         "-o", "json"])
    assert (tmp_path / "o.txt").read_text() == rendered(runner, "-o", "json")
    runner.invoke(main, ["render", "-f", SPEC, "-O", str(tmp_path / "o.json"), "-o", "yaml"])
    assert (tmp_path / "o.json").read_text() == rendered(runner)


@pytest.mark.parametrize("value", ["JSON", "yml", "Yaml", "out.yaml", "-"])
def test_render_o_takes_yaml_or_json_only(runner: CliRunner, tmp_path: Path, value: str) -> None:
    """-o is the format, as kubectl's; a file goes to -O, so `-o JSON` never writes a file
    named JSON."""
    result = runner.invoke(main, ["render", "-f", SPEC, "-o", value])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Usage: main render [OPTIONS]\nTry 'main render --help' for help.\n\n"
        f"Error: Invalid value for '-o' / '--output': {value!r} is not an output format: use "
        "yaml or json (a file goes to -O/--output-file FILE)\n")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_leaves_the_original(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.yaml"
    target.write_bytes(b"original bytes\n")

    def fail(fd: int) -> None:
        raise KeyboardInterrupt  # an interruption in the middle of the write

    monkeypatch.setattr("pmanifest.io.writing.os.fsync", fail)
    result = runner.invoke(main, ["render", "-f", SPEC, "-O", str(target)])
    assert isinstance(result.exception, KeyboardInterrupt) or result.exit_code != 0
    assert target.read_bytes() == b"original bytes\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_failed_render_writes_nothing(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    target.write_bytes(b"keep\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: pmanifest/v1\nworkloads: []\nbogus: 1\n")
    result = runner.invoke(main, ["render", "-f", str(bad), "-O", str(target)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert target.read_bytes() == b"keep\n"


def test_unwritable_output_is_refused_before_rendering(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["render", "-f", SPEC, "-O", str(tmp_path / "no" / "x.yaml")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"{tmp_path}/no/x.yaml: directory {tmp_path}/no does not exist\n"
    result = runner.invoke(main, ["render", "-f", SPEC, "-O", "x.yaml", "--check", "x.yaml"])
    assert (result.exit_code, result.stderr) == (
        2, "pmanifest: --check compares with a file; it cannot be combined with -O FILE\n")


def test_check_no_drift_drift_and_missing(runner: CliRunner, tmp_path: Path) -> None:
    committed = tmp_path / "rendered.yaml"
    committed.write_text(rendered(runner))
    result = runner.invoke(main, ["render", "-f", SPEC, "--check", str(committed)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")

    committed.write_text(committed.read_text().replace("replicas: 3", "replicas: 5"))
    result = runner.invoke(main, ["render", "-f", SPEC, "--check", str(committed)])
    assert result.exit_code == 1
    header = f"--- {committed} (committed)\n+++ {committed} (rendered now)\n"
    assert result.stdout.startswith(header)
    assert "\n-  replicas: 5\n+  replicas: 3\n" in result.stdout

    result = runner.invoke(main, ["render", "-f", SPEC, "--check", str(tmp_path / "nope.yaml")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith("nope.yaml: cannot read the rendered file: No such file or "
                                  "directory\n")


def test_check_in_json(runner: CliRunner, tmp_path: Path) -> None:
    committed = tmp_path / "rendered.json"
    committed.write_text(rendered(runner, "-o", "json"))
    result = runner.invoke(main, ["render", "-f", SPEC, "--check", str(committed),
                                  "-o", "json"])
    assert result.exit_code == 0
    assert os.path.exists(committed)
