"""The one reader (issue 24): the config, ``pyproject.toml``, policy files, ``--templates``
entries, stdin and pmanifest's own shipped data are read as inputs are: a regular file (or a
FIFO or stdin where the command reads one), within the 64 MiB cap, opened once; what is no
file is an error naming it, never skipped without a word. Devices and FIFOs are made under
tmp_path."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, run_real

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "examples" / "finetune-sigterm.yaml").read_text()
TOO_BIG = "more than 64 MiB (the most pmanifest reads from one input)"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n"
POLICY = ("id: ACME001\nslug: named\nseverity: error\nsummary: s\nrationale: r\nfix: f\n"
          "target: object\nschema: {required: [metadata]}\n")


def _sparse(path: Path, size: int = 65 << 20, head: bytes = b"") -> None:
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)


@pytest.mark.parametrize("name", [".pmanifest.yaml", "pyproject.toml"])
def test_a_config_over_the_cap_is_refused_unread(runner: CliRunner, tmp_path: Path,
                                                 name: str) -> None:
    """Was read whole (a 300 MiB pyproject.toml, 300 MiB of memory)."""
    (tmp_path / "pod.yaml").write_text(POD)
    _sparse(tmp_path / name, head=b"[tool.pmanifest]\n" if name == "pyproject.toml" else b"")
    what = "pyproject.toml" if name == "pyproject.toml" else "config"
    result = invoke(runner, ["lint", "pod.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"{tmp_path / name}: cannot read {what}: {TOO_BIG}\n")
    result = invoke(runner, ["lint", "pod.yaml", "--config", name])
    assert (result.exit_code, result.stderr) == (2, f"{name}: cannot read {what}: {TOO_BIG}\n")


def test_a_config_that_is_a_fifo_is_refused_unopened(runner: CliRunner, tmp_path: Path) -> None:
    """Was "config file not found"; opening it would wait for a writer."""
    (tmp_path / "pod.yaml").write_text(POD)
    os.mkfifo(tmp_path / "lax.yaml")
    result = invoke(runner, ["lint", "pod.yaml", "--config", "lax.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "lax.yaml: cannot read config: a FIFO, not a file\n")


def _bad_entry(path: Path, kind: str) -> str:
    """Make ``path`` a kind of entry that is no file; the reason the refusal gives."""
    if kind == "dangling link":
        path.symlink_to("nowhere.yaml")
        return "No such file or directory"
    if kind == "link loop":
        path.symlink_to(path.name)
        return "Too many levels of symbolic links"
    if kind == "directory":
        path.mkdir()
        return "Is a directory"
    os.mkfifo(path)
    return "a FIFO, not a file"


KINDS = ["dangling link", "link loop", "directory", "FIFO"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_policy_entry_that_is_no_file_is_an_error(runner: CliRunner, tmp_path: Path,
                                                    kind: str) -> None:
    """Was skipped: a gate ran without the policy and passed."""
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "a.yaml").write_text(POLICY)
    reason = _bad_entry(tmp_path / "pol" / "b.yaml", kind)
    for args in (["lint", "pod.yaml", "--policies", "pol"], ["policy", "test", "pol"]):
        result = invoke(runner, args)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", f"pol/b.yaml: cannot read policy file: {reason}\n"), args


def test_a_policy_file_over_the_cap(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "pol").mkdir()
    _sparse(tmp_path / "pol" / "big.yaml")
    result = invoke(runner, ["lint", "pod.yaml", "--policies", "pol"])
    assert (result.exit_code, result.stderr) == (
        2, f"pol/big.yaml: cannot read policy file: {TOO_BIG}\n")


@pytest.mark.parametrize("kind", KINDS)
def test_a_templates_entry_that_is_no_file_is_an_error(runner: CliRunner, tmp_path: Path,
                                                       kind: str) -> None:
    """Was ignored: the built-in template rendered instead of the user's, exit 0."""
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "templates").mkdir()
    entry = tmp_path / "templates" / "job.yaml.j2"
    reason = _bad_entry(entry, kind)
    result = invoke(runner, ["render", "-f", "spec.yaml", "--templates", "templates"])
    shown = {"dangling link": f"cannot be read ({reason}); make it a template file or "
                              "remove it",
             "link loop": "cannot be read (a symbolic link loop); make it a template file or "
                          "remove it",
             "directory": "is a directory, not a template file; rename or remove it",
             "FIFO": f"cannot be read: {reason}; make it a template file or remove it"}[kind]
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"{entry.parent.resolve() / 'job.yaml.j2'}: --templates entry 'job.yaml.j2' "
               f"{shown}\n")


def test_a_templates_entry_render_does_not_use_is_not_read(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    """Only the templates a render uses are looked up: a FIFO of another name stays
    unopened (and the output is the built-in's)."""
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "templates").mkdir()
    os.mkfifo(tmp_path / "templates" / "deployment.yaml.j2")
    result = invoke(runner, ["render", "-f", "spec.yaml", "--templates", "templates"])
    assert result.exit_code == 0 and "kind: Job" in result.stdout


def _closed_stdin() -> None:
    os.close(0)


@pytest.mark.parametrize("args", [["lint", "-"], ["render", "-f", "-"],
                                  ["cluster", "check", "-"], ["cluster", "events", "-"]])
def test_stdin_closed_or_write_only(tmp_path: Path, args: list[str]) -> None:
    """``<&-`` and ``0>file`` were internal errors (AttributeError, EBADF)."""
    command = [sys.executable, "-m", "pmanifest", *args]
    closed = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=60,
                            preexec_fn=_closed_stdin, check=False)
    with open(tmp_path / "out", "wb") as write_only:
        written = subprocess.run(command, cwd=tmp_path, stdin=write_only, capture_output=True,
                                 timeout=60, check=False)
    what = " the spec:" if args[0] == "render" else ":"
    tail = "; check the path" if args[0] == "render" else ""
    assert (closed.returncode, closed.stdout, closed.stderr.decode()) == (
        2, b"", f"<stdin>: cannot read{what} stdin is closed{tail}\n")
    assert (written.returncode, written.stdout, written.stderr.decode()) == (
        2, b"", f"<stdin>: cannot read{what} stdin is not open for reading{tail}\n")


JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: big, namespace: ml}
spec:
  podFailurePolicy:
    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 300
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - name: trainer
          image: ghcr.io/acme/trainer:1.4
          resources: {limits: {nvidia.com/gpu: 16}}
"""


@contextlib.contextmanager
def _fifo_once(path: Path, data: bytes) -> Iterator[None]:
    """A FIFO a thread writes ``data`` into once (a second open would wait for ever)."""
    os.mkfifo(path)

    def feed() -> None:
        with contextlib.suppress(OSError), open(path, "wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # let a writer still waiting go
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=10)


def test_a_fifo_linted_with_cluster_is_opened_once(tmp_path: Path) -> None:
    """A finding of the whole run (PM510) is located by reading its file again: a FIFO was
    opened a second time and the run waited for a writer that had gone."""
    (tmp_path / "cluster.json").write_text(json.dumps(
        {"name": "llm", "region": "us-central-8", "gpu_type": "H100_SXM", "num_gpus": 16,
         "num_preemptible_gpus": 16, "project_id": "p"}))
    with _fifo_once(tmp_path / "job.yaml", JOB.encode()):
        proc = run_real(["lint", "job.yaml", "--cluster", "cluster.json", "--select", "PM510"],
                        tmp_path, limit=30)
    assert (proc.returncode, proc.stdout.decode()) == (1, (
        "job.yaml:15:48: error PM510[pod-larger-than-node] Job ml/big: a pod asks for 16 GPUs "
        "but a H100_SXM node has 8: it can never be scheduled\n"))


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the installed pmanifest (its templates and policies packages included) that
    a test may corrupt: a directory to put first on PYTHONPATH."""
    import pmanifest
    from pmanifest.io.reading import shipped

    root = tmp_path / "site"
    package = root / "pmanifest"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(pmanifest.__file__).parent, package, ignore=ignore)
    for name in ("templates", "policies"):
        target = package / name
        if not target.exists():
            shutil.copytree(shipped(f"pmanifest.{name}"), target, ignore=ignore)
    return root


CORRUPTIONS = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "NUL bytes": lambda raw: b"\0" * 64,
    "a syntax error": lambda raw: raw + b"\ndef (\n",
    "deep JSON": lambda raw: b"[" * 100_000 + b"]" * 100_000,
    "another shape": lambda raw: raw.replace(b'"data": ', b'"data": 42, "was": ', 1),
}


RENDER = [sys.executable, "-m", "pmanifest", "render", "-f", "spec.yaml"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, bytes]:
    """A copy of the installed pmanifest with its bytecode written (by rendering SPEC with it,
    once for every corruption), and that render's stdout and stderr."""
    tmp = tmp_path_factory.mktemp("pristine")
    root = _package_copy(tmp)
    (tmp / "spec.yaml").write_text(SPEC)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = subprocess.run(RENDER, cwd=tmp, capture_output=True, timeout=120, check=False,
                            env={**env, "PYTHONPATH": str(root)})
    assert before.returncode == 0, before.stderr.decode()
    return root, before.stdout, before.stderr


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("file", ["templates/compiled/job_yaml.py",
                                  "policies/snapshots/profiles.yaml.json",
                                  "policies/snapshots/rules-jobs.yaml.json"])
def test_corrupt_shipped_data_is_set_aside_like_stale(tmp_path: Path, file: str,
                                                       corruption: str,
                                                       pristine: tuple[Path, bytes, bytes]
                                                       ) -> None:
    """A corrupt precompiled template or snapshot was an internal error (SyntaxError,
    RecursionError, AttributeError): it is pmanifest's own cache of its sources, read from
    them instead, as when it is stale; the output is the same."""
    root = tmp_path / "site"
    # hard links to the pristine files, bytecode included; the corrupt one is a new file
    shutil.copytree(pristine[0], root, copy_function=os.link)
    (tmp_path / "spec.yaml").write_text(SPEC)
    target = root / "pmanifest" / file
    raw = target.read_bytes()
    target.unlink()
    target.write_bytes(CORRUPTIONS[corruption](raw))
    for stale in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        stale.unlink()  # Python reads the corrupt source
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    after = subprocess.run(RENDER, cwd=tmp_path, capture_output=True, env=env, timeout=120,
                           check=False)
    assert (after.returncode, after.stderr) == (0, pristine[2]), after.stderr.decode()
    assert after.stdout == pristine[1] and b"kind: Job" in after.stdout
