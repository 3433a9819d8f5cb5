"""Which files lint reads: ``--exclude GLOB`` beside the config's ``exclude:``, and directory
walks that skip what git ignores (``.gitignore`` at every level, ``.git/info/exclude``) unless
``--no-gitignore``. Exact exit codes and output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from tests.cli.test_gate import EMPTY_TAIL, GOOD, GRACE_FINDING, LONG_GRACE, SELECT, summary


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository (the real git) with a bad manifest in each place a walk may skip."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    for name in ("k8s/job.yaml", "build/out.yaml", "k8s/generated/a.yaml", "k8s/keep/b.yaml",
                 "k8s/local.yaml", "charts/x/tests/t.yaml"):
        write(tmp_path / name, LONG_GRACE)
    write(tmp_path / ".gitignore", "build/\n/k8s/generated/\n*.local.yaml\n")
    write(tmp_path / "k8s" / ".gitignore", "local.yaml\nkeep/\n!keep/\n")
    write(tmp_path / ".git" / "info" / "exclude", "charts/*/tests/\n")
    return tmp_path


def lint(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["lint", *SELECT, *args])
    files = sorted({line.split(":")[0] for line in result.stdout.splitlines()})
    return result.exit_code, files


def git_ignored(repo: Path) -> list[str]:
    """What git itself says it ignores among the manifests."""
    listed = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard"],
                            cwd=repo, capture_output=True, text=True, check=True).stdout
    return sorted(line for line in listed.splitlines() if line.endswith(".yaml"))


def test_walks_skip_what_git_ignores(repo: Path) -> None:
    assert git_ignored(repo) == ["build/out.yaml", "charts/x/tests/t.yaml",
                                 "k8s/generated/a.yaml", "k8s/local.yaml"]
    assert lint(".") == (1, ["./k8s/job.yaml", "./k8s/keep/b.yaml"])
    assert lint("k8s") == (1, ["k8s/job.yaml", "k8s/keep/b.yaml"])


def test_a_walk_started_below_the_root_still_reads_the_root_ignore_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "k8s")
    assert lint(".") == (1, ["./job.yaml", "./keep/b.yaml"])


def test_no_gitignore_walks_everything(repo: Path) -> None:
    assert lint(".", "--no-gitignore") == (1, [
        "./build/out.yaml", "./charts/x/tests/t.yaml", "./k8s/generated/a.yaml",
        "./k8s/job.yaml", "./k8s/keep/b.yaml", "./k8s/local.yaml"])


def test_a_file_named_on_the_command_line_is_linted_whatever_git_ignores(repo: Path) -> None:
    assert lint("build/out.yaml", "k8s/local.yaml") == (1, ["build/out.yaml", "k8s/local.yaml"])


def test_outside_a_repository_no_ignore_file_counts(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".gitignore", "build/\n")
    write(tmp_path / "build" / "out.yaml", LONG_GRACE)
    assert lint(".") == (1, ["./build/out.yaml"])


def test_exclude_on_the_command_line(repo: Path) -> None:
    assert lint(".", "--exclude", "./k8s/keep/*") == (1, ["./k8s/job.yaml"])
    assert lint(".", "--exclude", "k8s/keep/*", "--exclude", "*/job.yaml",
                "--allow-empty") == (0, [])
    # named files too (pre-commit names every staged file), unless --no-force-exclude
    assert lint("k8s/job.yaml", "k8s/keep/b.yaml", "--exclude", "k8s/keep/*") == (
        1, ["k8s/job.yaml"])
    assert lint("k8s/keep/b.yaml", "--exclude", "k8s/keep/*", "--no-force-exclude") == (
        1, ["k8s/keep/b.yaml"])


def test_exclude_adds_to_the_configs_and_is_relative_to_the_current_directory(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo / ".pmanifest.yaml", "exclude: ['k8s/keep/*']\n")
    monkeypatch.chdir(repo / "k8s")
    assert lint(".") == (1, ["./job.yaml"])  # the config's pattern, relative to the config
    # --exclude's pattern, relative to here
    assert lint(".", "--exclude", "job.yaml", "--allow-empty") == (0, [])
    result = CliRunner().invoke(main, ["lint", *SELECT, "job.yaml", "--exclude", "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "pmanifest: no Kubernetes object found in job.yaml (1 named path excluded by the "
        "config's exclude: or --exclude)" + EMPTY_TAIL))


def test_the_summary_counts_what_was_read(repo: Path) -> None:
    write(repo / "k8s" / "job.yaml", GOOD)
    result = CliRunner().invoke(main, ["lint", *SELECT, "k8s", "--exclude", "k8s/keep/*"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object"))
    result = CliRunner().invoke(main, ["lint", *SELECT, "k8s"])
    assert (result.exit_code, result.stdout) == (1, f"k8s/keep/b.yaml:12:7: {GRACE_FINDING}\n")
