"""Output paths never replace what the user has: devices and FIFOs are written to, not
replaced; links are followed; an output that is one of the run's inputs is refused before
anything is written. Devices and FIFOs are made under tmp_path (never /dev)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "finetune-sigterm.yaml"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def _spec(tmp_path: Path) -> Path:
    return Path(shutil.copy(SPEC, tmp_path / "spec.yaml"))


def test_lint_output_onto_its_own_input_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "job.yaml", "--format", "junit", "--output", "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "job.yaml: --output is one of the inputs: writing there would destroy it; choose "
        "another path\n"))
    assert (tmp_path / "job.yaml").read_text() == CONFIGMAP


def test_lint_output_onto_a_file_found_in_a_linted_directory_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(CONFIGMAP)
    (tmp_path / "k8s" / "b.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "k8s", "--format", "json", "--output", "k8s/b.yaml",
                             "--format", "text"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "k8s/b.yaml: --output is one of the inputs: writing there would destroy it; choose "
        "another path\n"))
    assert (tmp_path / "k8s" / "b.yaml").read_text() == CONFIGMAP


def test_lint_output_through_another_name_of_an_input_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    os.link(tmp_path / "job.yaml", tmp_path / "hard.sarif")
    result = invoke(runner, ["lint", "job.yaml", "--format", "sarif", "--output", "hard.sarif"])
    assert (result.exit_code, result.stderr) == (2, (
        "hard.sarif: --output is one of the inputs (job.yaml): writing there would destroy "
        "it; choose another path\n"))
    assert (tmp_path / "job.yaml").read_text() == CONFIGMAP


def test_lint_output_onto_the_config_file_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / ".pmanifest.yaml").write_text("failOn: error\n")
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "job.yaml", "--format", "json", "--output",
                             ".pmanifest.yaml"])
    assert (result.exit_code, result.stderr) == (2, (
        ".pmanifest.yaml: --output is one of the inputs: writing there would destroy it; "
        "choose another path\n"))
    assert (tmp_path / ".pmanifest.yaml").read_text() == "failOn: error\n"


def test_render_output_onto_the_spec_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    spec = _spec(tmp_path)
    before = spec.read_bytes()
    result = invoke(runner, ["render", "-f", "spec.yaml", "-o", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "spec.yaml: -o is one of the inputs: writing there would destroy it; choose another "
        "path\n"))
    assert spec.read_bytes() == before


def test_render_output_onto_a_link_to_the_spec_is_refused(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    spec = _spec(tmp_path)
    (tmp_path / "out.yaml").symlink_to(spec)
    result = invoke(runner, ["render", "-f", "spec.yaml", "-o", "out.yaml"])
    assert (result.exit_code, result.stderr) == (2, (
        "out.yaml: -o is one of the inputs (spec.yaml): writing there would destroy it; "
        "choose another path\n"))


def test_a_character_device_is_written_to_not_replaced(tmp_path: Path,
                                                       runner: CliRunner) -> None:
    """A copy of /dev/null (character device 1:3) made under tmp_path, as root."""
    _spec(tmp_path)
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = invoke(runner, ["render", "-f", "spec.yaml", "-o", str(null)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert stat.S_ISCHR(null.stat().st_mode)
    assert null.stat().st_rdev == os.makedev(1, 3)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_fifo_is_written_to_not_replaced(tmp_path: Path, runner: CliRunner) -> None:
    _spec(tmp_path)
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    fifo = tmp_path / "reports.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", str(fifo)])
    reader.join(10)
    assert (result.exit_code, result.stderr) == (0, "")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].startswith(b'{\n  "findings": []')


def test_a_link_to_a_report_is_kept_and_its_target_written(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "lint.json").write_text("old")
    (tmp_path / "latest.json").symlink_to("reports/lint.json")
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", "latest.json"])
    assert result.exit_code == 0
    assert (tmp_path / "latest.json").is_symlink()
    assert (tmp_path / "reports" / "lint.json").read_text().startswith('{\n  "findings": []')


def test_a_socket_is_refused_before_any_work(tmp_path: Path, runner: CliRunner) -> None:
    _spec(tmp_path)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        result = invoke(runner, ["render", "-f", "spec.yaml", "-o", "sock"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "sock: is not a regular file, a character device or a FIFO; -o needs a file path\n"))


@pytest.mark.parametrize("flag", ["-o", "--output"])
def test_a_directory_is_refused(tmp_path: Path, runner: CliRunner, flag: str) -> None:
    _spec(tmp_path)
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "out").mkdir()
    args = (["render", "-f", "spec.yaml", "-o", "out"] if flag == "-o"
            else ["lint", "k.yaml", "--format", "json", "--output", "out"])
    result = invoke(runner, args)
    assert (result.exit_code, result.stderr) == (2, f"out: is a directory; {flag} needs a "
                                                    "file path\n")
