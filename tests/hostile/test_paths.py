"""Hostile file systems and streams: missing, unreadable, looping and misplaced inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, run_real, summary
from tests.hostile.corpus import BASE, PREEMPTIBLE_POD

# /proc/self/mem opens but fails on read with EIO, even for root (where chmod 000 does not
# stop a read): a portable-enough "unreadable file" on Linux.
UNREADABLE_TARGET = "/proc/self/mem"
needs_proc = pytest.mark.skipif(not os.path.exists(UNREADABLE_TARGET), reason="no /proc/self/mem")


def test_missing_path_is_exit_2(runner: CliRunner) -> None:
    result = invoke(runner, ["lint", "missing.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "missing.yaml: no such file or directory\n")


def test_missing_path_in_a_real_process(tmp_path: Path) -> None:
    proc = run_real(["lint", "missing.yaml"], tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2, b"", b"missing.yaml: no such file or directory\n")


@needs_proc
def test_directory_with_loops_dangling_and_unreadable_entries(
    runner: CliRunner, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "ok.yaml").write_text(BASE)
    (repo / "pod.yaml").write_text(PREEMPTIBLE_POD)
    (repo / "sub" / "loop").symlink_to("..")
    (repo / "dangling.yaml").symlink_to("nowhere.yaml")
    (repo / "mem.yaml").symlink_to(UNREADABLE_TARGET)
    os.mkfifo(repo / "fifo.yaml")  # must not block the walk, nor pass without a word (24)
    result = invoke(runner, ["lint", "--disable", "PM302", "repo"])
    assert result.exit_code == 1
    assert result.stdout.startswith("repo/pod.yaml:5:3: error PM201[grace-period-over-limit] ")
    assert result.stderr.splitlines() == [
        "repo/dangling.yaml: warning: dangling symbolic link; skipped",
        "repo/fifo.yaml: warning: not a regular file (a FIFO, a device or a socket); skipped",
        "repo/mem.yaml: warning: cannot read: Input/output error",
        "repo/sub/loop: warning: symlink loop; directory skipped",
        summary("1 error, 0 warnings, 0 info in 2 files (2 objects)", 18).rstrip("\n"),
    ]


@needs_proc
def test_unreadable_file_named_on_the_command_line_is_exit_2(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "mem.yaml").symlink_to(UNREADABLE_TARGET)
    result = invoke(runner, ["lint", "mem.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "mem.yaml: cannot read: Input/output error\n"


def test_unreadable_directory_when_not_root(runner: CliRunner, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads through chmod 000; the /proc/self/mem cases cover unreadable")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.yaml").write_text(BASE)
    locked.chmod(0)
    try:
        result = invoke(runner, ["lint", "locked"])
    finally:
        locked.chmod(0o755)
    assert result.exit_code == 0
    assert result.stderr == "locked: warning: cannot read directory: Permission denied\n"


def test_directory_where_a_file_is_expected(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    result = invoke(runner, ["lint", "--output", "k8s", "--format", "json", "k8s"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "k8s: is a directory; --output needs a file path\n"
    result = invoke(runner, ["lint", "--config", "k8s", "k8s"])
    assert result.exit_code == 2
    assert "Invalid value for '--config': File 'k8s' is a directory." in result.stderr


def test_stdin_with_binary_data(runner: CliRunner) -> None:
    result = invoke(runner, ["lint", "-"], stdin=bytes(range(256)) * 64)
    assert result.exit_code == 1
    # the first byte that is not UTF-8 is 0x80: offset 128, after the newline at offset 10
    assert result.stdout == "<stdin>:2:118: error PM001[yaml-syntax-error] file is not valid " \
                            "UTF-8 text\n"


def test_stdin_with_binary_data_in_a_real_process(tmp_path: Path) -> None:
    proc = run_real(["lint", "-", "--stdin-filename", "x.yaml"], tmp_path,
                    stdin=b"\xff\xfe\x00garbage" * 1000)
    assert proc.returncode == 1
    assert proc.stdout == b"x.yaml:1:1: error PM001[yaml-syntax-error] file is not valid UTF-8 " \
                          b"text\n"


def test_empty_stdin(runner: CliRunner) -> None:
    result = invoke(runner, ["lint", "-"], stdin=b"")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "pmanifest: no Kubernetes object found in <stdin> (1 file read, no object with "
        "apiVersion and kind in it): nothing was checked; name the manifests to lint, or pass "
        "--allow-empty where none is expected\n"))


def test_an_argument_that_is_an_option_and_a_file_is_refused(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    """Issue 24: a file named ``--config=lax.yaml``, handed over after the others without
    ``--`` (as pre-commit appends staged names), was taken as the option: the run used that
    config. Which was meant is not guessed; after ``--`` it is a file, as it should be."""
    (tmp_path / "ok.yaml").write_text(BASE)
    (tmp_path / "lax.yaml").write_text("rules: {PM201: off}\n")
    (tmp_path / "--config=lax.yaml").write_text(PREEMPTIBLE_POD)
    result = invoke(runner, ["lint", "ok.yaml", "--config=lax.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "pmanifest: '--config=lax.yaml' is an option and the name of a file here: put -- "
        "before the file names (a pre-commit hook's args: end with --)\n"))
    result = invoke(runner, ["lint", "--select", "PM201", "--", "ok.yaml", "--config=lax.yaml"])
    assert result.exit_code == 1  # the pod's PM201, which lax.yaml would have turned off
    assert result.stdout.startswith("--config=lax.yaml:5:3: error PM201")
    result = invoke(runner, ["lint", "--config", "lax.yaml", "ok.yaml"])  # no such file name
    assert result.exit_code == 0, result.stderr
