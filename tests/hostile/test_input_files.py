"""Inputs that are not files, or never end (issue 15, item 9), and directories reached through
symbolic links (item 21). Devices, FIFOs and sockets are made under tmp_path, never in /dev."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.io.reading import MAX_INPUT_BYTES
from tests.hostile.conftest import invoke, run_real, summary
from tests.hostile.corpus import PREEMPTIBLE_POD

DISABLED = 18  # the rules of the suite less PM302, plus PM001 and PM007 (applied always)

TOO_BIG = "more than 64 MiB (the most pmanifest reads from one input)"
SPEC = (Path(__file__).resolve().parents[2] / "examples" / "finetune-sigterm.yaml").read_text()
GRACE_900 = (
    "error PM201[grace-period-over-limit] terminationGracePeriodSeconds is 900, above the 300 s "
    "cap of preemptible nodes (together profile): the node is removed 300 s after the notice "
    "whatever the pod is doing; set it to 300 or less and finish the checkpoint inside that "
    "window\n")


def _endless_device(path: Path) -> str:
    """A character device like /dev/zero (1, 5), made here; where mknod is not allowed (not
    root), a socket: the other kind of file that is neither regular nor a FIFO. Returns the
    words the refusal uses for it."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        return "a character device"
    except PermissionError:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
        return "a socket"


@contextlib.contextmanager
def _endless_fifo(path: Path) -> Iterator[None]:
    """A FIFO that a thread fills with zeros until the reader goes away."""
    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_WRONLY)
            with contextlib.suppress(OSError), os.fdopen(fd, "wb") as handle:
                while not stop.is_set():
                    handle.write(b"\0" * 65536)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield
    finally:
        stop.set()
        with contextlib.suppress(OSError):  # unblock a writer still waiting for a reader
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=10)


def test_the_cap_is_64_mib() -> None:
    assert MAX_INPUT_BYTES == 64 * 1024 * 1024


def test_lint_refuses_a_device_named_on_the_command_line(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    kind = _endless_device(tmp_path / "zero.yaml")
    result = invoke(runner, ["lint", "zero.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"zero.yaml: cannot read: {kind}, not a file\n")


def test_render_refuses_a_device_as_spec_and_as_check(runner: CliRunner, tmp_path: Path) -> None:
    kind = _endless_device(tmp_path / "zero.yaml")
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = invoke(runner, ["render", "-f", "zero.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"zero.yaml: cannot read the spec: {kind}, not a file; check the path\n")
    result = invoke(runner, ["render", "-f", "spec.yaml", "--check", "zero.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"zero.yaml: cannot read the rendered file: {kind}, not a file\n")


def test_a_device_in_a_real_process_is_refused_at_once(tmp_path: Path) -> None:
    kind = _endless_device(tmp_path / "zero.yaml")
    proc = run_real(["lint", "zero.yaml"], tmp_path, limit=20)
    assert (proc.returncode, proc.stdout, proc.stderr.decode()) == (
        2, b"", f"zero.yaml: cannot read: {kind}, not a file\n")


def test_an_endless_fifo_is_read_up_to_the_cap(runner: CliRunner, tmp_path: Path) -> None:
    with _endless_fifo(tmp_path / "fifo.yaml"):
        result = invoke(runner, ["lint", "fifo.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"fifo.yaml: cannot read: {TOO_BIG}\n")


def test_render_reads_an_endless_fifo_up_to_the_cap(runner: CliRunner, tmp_path: Path) -> None:
    with _endless_fifo(tmp_path / "fifo.yaml"):
        result = invoke(runner, ["render", "-f", "fifo.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"fifo.yaml: cannot read the spec: {TOO_BIG}; check the path\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    with _endless_fifo(tmp_path / "rendered.yaml"):
        result = invoke(runner, ["render", "-f", "spec.yaml", "--check", "rendered.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"rendered.yaml: cannot read the rendered file: {TOO_BIG}\n")


def test_a_fifo_that_ends_is_linted(runner: CliRunner, tmp_path: Path) -> None:
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as handle:
            handle.write(PREEMPTIBLE_POD.encode())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = invoke(runner, ["lint", "--disable", "PM302", "pod.yaml"])
    writer.join(timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, f"pod.yaml:5:3: {GRACE_900}",
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", DISABLED))


def test_stdin_is_read_up_to_the_cap(runner: CliRunner) -> None:
    result = invoke(runner, ["lint", "-"], stdin=b"\0" * (MAX_INPUT_BYTES + 1))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"<stdin>: cannot read: {TOO_BIG}\n")
    result = invoke(runner, ["render", "-f", "-"], stdin=b"a" * (MAX_INPUT_BYTES + 1))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"<stdin>: cannot read the spec: {TOO_BIG}; check the path\n")


def test_a_regular_file_over_the_cap_is_refused_without_reading_it(
        runner: CliRunner, tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:  # sparse: no disk space, no time
        handle.truncate(MAX_INPUT_BYTES + 1)
    (tmp_path / "dir").mkdir()
    os.link(big, tmp_path / "dir" / "big.yaml")
    (tmp_path / "dir" / "pod.yaml").write_text(PREEMPTIBLE_POD)
    result = invoke(runner, ["lint", "big.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"big.yaml: cannot read: {TOO_BIG}\n")
    # found in a directory, it is skipped with a warning like any unreadable file
    result = invoke(runner, ["lint", "--disable", "PM302", "dir"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, f"dir/pod.yaml:5:3: {GRACE_900}",
        f"dir/big.yaml: warning: cannot read: {TOO_BIG}\n"
        + summary("1 error, 0 warnings, 0 info in 1 file (1 object)", DISABLED))


def test_a_link_in_a_directory_to_a_device_is_not_called_dangling(
        runner: CliRunner, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _endless_device(tmp_path / "zero")
    (repo / "zero.yaml").symlink_to(tmp_path / "zero")
    (repo / "gone.yaml").symlink_to(tmp_path / "gone")
    result = invoke(runner, ["lint", "repo", "--allow-empty"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", (
        "repo/gone.yaml: warning: dangling symbolic link; skipped\n"
        "repo/zero.yaml: warning: symbolic link to something that is not a file; skipped\n"
        + summary("0 errors, 0 warnings, 0 info in 0 files (0 objects)")))


# -- item 21: directories reached through symbolic links -----------------------------------------

def test_a_directory_reached_first_through_a_link_is_linted_under_its_real_name(
        runner: CliRunner, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "z-real").mkdir(parents=True)
    (repo / "z-real" / "pod.yaml").write_text(PREEMPTIBLE_POD)
    (repo / "a-link").symlink_to("z-real")  # sorts first
    (repo / "b").mkdir()
    (repo / "b" / "up").symlink_to("..")
    result = invoke(runner, ["lint", "--disable", "PM302", "repo"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, f"repo/z-real/pod.yaml:5:3: {GRACE_900}",
        "repo/a-link: warning: symbolic link to repo/z-real, which is linted under that name; "
        "skipped\n"
        "repo/b/up: warning: symlink loop; directory skipped\n"
        + summary("1 error, 0 warnings, 0 info in 1 file (1 object)", DISABLED))


def test_a_link_out_of_the_tree_is_walked_and_excluded_by_its_real_path(
        runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "shared" / "vendor").mkdir(parents=True)
    (tmp_path / "shared" / "vendor" / "pod.yaml").write_text(PREEMPTIBLE_POD)
    (tmp_path / "shared" / "own.yaml").write_text(PREEMPTIBLE_POD)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "shared").symlink_to(tmp_path / "shared")
    result = invoke(runner, ["lint", "--disable", "PM302", "repo"])
    assert (result.exit_code, result.stdout) == (
        1, f"repo/shared/own.yaml:5:3: {GRACE_900}repo/shared/vendor/pod.yaml:5:3: {GRACE_900}")
    (tmp_path / ".pmanifest.yaml").write_text('exclude: ["shared/vendor/*"]\n')
    result = invoke(runner, ["lint", "--disable", "PM302", "repo"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, f"repo/shared/own.yaml:5:3: {GRACE_900}",
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", DISABLED))


def test_a_tree_deeper_than_the_recursion_limit_is_walked(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "deep"
    path.mkdir()
    for _ in range(1100):  # 2,200 characters: within PATH_MAX (os.makedirs would recurse)
        path = path / "d"
        path.mkdir()
    (path / "pod.yaml").write_text(PREEMPTIBLE_POD)
    try:
        result = invoke(runner, ["lint", "--disable", "PM302", "deep"])
    finally:  # shutil.rmtree (pytest's clean-up) recurses: remove the tree from the bottom
        (path / "pod.yaml").unlink()
        while path != tmp_path:
            path.rmdir()
            path = path.parent
    assert result.exit_code == 1
    assert result.stdout.endswith(f"/d/pod.yaml:5:3: {GRACE_900}")


CLUSTER_INPUTS = {  # a command that reads a cluster request or event file named "c.json"
    "lint --cluster": ["lint", "k.yaml", "--cluster", "c.json"],
    "render --cluster": ["render", "-f", "spec.yaml", "--cluster", "c.json"],
    "cluster check": ["cluster", "check", "c.json"],
    "cluster events": ["cluster", "events", "c.json"],
}


def _cluster_inputs(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(PREEMPTIBLE_POD)
    (tmp_path / "spec.yaml").write_text(SPEC)


@pytest.mark.parametrize("command", CLUSTER_INPUTS)
def test_cluster_files_refuse_a_device(runner: CliRunner, tmp_path: Path, command: str) -> None:
    """These read the whole file: /dev/zero grew to 11-14 GB before they were bounded."""
    _cluster_inputs(tmp_path)
    kind = _endless_device(tmp_path / "c.json")
    result = invoke(runner, CLUSTER_INPUTS[command])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"c.json: cannot read: {kind}, not a file\n")


@pytest.mark.parametrize("command", CLUSTER_INPUTS)
def test_cluster_files_read_an_endless_fifo_up_to_the_cap(runner: CliRunner, tmp_path: Path,
                                                          command: str) -> None:
    _cluster_inputs(tmp_path)
    with _endless_fifo(tmp_path / "c.json"):
        result = invoke(runner, CLUSTER_INPUTS[command])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"c.json: cannot read: {TOO_BIG}\n")


@pytest.mark.parametrize("command", [["cluster", "check", "-"], ["cluster", "events", "-"]])
def test_cluster_stdin_is_read_up_to_the_cap(tmp_path: Path, command: list[str]) -> None:
    """stdin from an endless device (``< /dev/zero``), in a real process."""
    kind = _endless_device(tmp_path / "zero")
    if kind != "a character device":  # not root: no device to read from; a FIFO instead
        (tmp_path / "zero").unlink()
    with contextlib.ExitStack() as stack:
        if kind != "a character device":
            stack.enter_context(_endless_fifo(tmp_path / "zero"))
        stdin = stack.enter_context((tmp_path / "zero").open("rb"))
        proc = subprocess.run([sys.executable, "-m", "pmanifest", *command], cwd=tmp_path,
                              stdin=stdin, capture_output=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr.decode()) == (
        2, b"", f"<stdin>: cannot read: {TOO_BIG}\n")
