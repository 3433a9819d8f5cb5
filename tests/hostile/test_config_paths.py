"""A repository's config names only files of that repository (issue 24): ``policies:`` could
point anywhere (``../..``, ``/etc``, a link), and what those files held reached the log in
error messages. Paths outside are given on the command line, by whoever runs pmanifest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples" / "policies" / "gpu-jobs.yaml"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
SECRET = "id: SECRET-VALUE-FROM-OUTSIDE\n"  # not a policy: its error would quote it
SPEC = ROOT / "examples" / "finetune-sigterm.yaml"


@pytest.fixture
def repo(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree (tmp_path/repo, the current directory: its config is found as a run
    there finds it) with a manifest; tmp_path/outside beside it holds a broken policy file,
    a template directory and a baseline's place."""
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "deploy" / "ok.yaml").write_text(CONFIGMAP)
    outside = tmp_path / "outside"
    (outside / "templates").mkdir(parents=True)
    (outside / "secret.yaml").write_text(SECRET)
    monkeypatch.chdir(repo)
    return repo


def _lint(runner: CliRunner, repo: Path, config: str, *args: str) -> tuple[int, str, str]:
    (repo / ".pmanifest.yaml").write_text(config)
    result = invoke(runner, ["lint", *args, "deploy/ok.yaml"])
    return result.exit_code, result.stdout, result.stderr


OUTSIDE = ("is outside the repository ({root}){through}: a config names only files of its "
           "own repository; give it on the command line ({flag}) instead\n")


@pytest.mark.parametrize(("config", "where", "through"), [
    ("policies: [../outside]\n", "1:12", ""),
    ("policies: [deploy, ../outside]\n", "1:20", ""),
    ("policies: [{outside}]\n", "1:12", ""),
    ("policies: [linked]\n", "1:12", ""),  # a link in the repository to a directory outside
    ("policies: [mixed]\n", "1:12", " (through {mixed})"),  # a link to a file outside
])
def test_a_config_s_policies_outside_its_repository_are_refused_unread(
        runner: CliRunner, repo: Path, config: str, where: str, through: str) -> None:
    outside = repo.parent / "outside"
    (repo / "linked").symlink_to(outside)
    (repo / "mixed").mkdir()
    shutil.copy(POLICY, repo / "mixed" / "a.yaml")
    (repo / "mixed" / "b.yaml").symlink_to(outside / "secret.yaml")
    text = config.format(outside=outside)
    code, stdout, stderr = _lint(runner, repo, text)
    value = text.split("[", 1)[1].split("]")[0].split(", ")[-1]
    assert (code, stdout, stderr) == (2, "", f"{repo / '.pmanifest.yaml'}:{where}: policies: "
                                      f"{value!r} " + OUTSIDE.format(
                                          root=repo.resolve(), flag="--policies",
                                          through=through.format(mixed=repo / "mixed" / "b.yaml"
                                                                 )))
    assert "SECRET" not in stderr


@pytest.mark.parametrize(("key", "flag"), [("templates", "--templates"),
                                           ("baseline", "--baseline")])
def test_a_config_s_templates_and_baseline_outside_are_refused(
        runner: CliRunner, repo: Path, key: str, flag: str) -> None:
    value = "../outside/templates" if key == "templates" else "../outside/baseline.json"
    code, stdout, stderr = _lint(runner, repo, f"{key}: {value}\n")
    assert (code, stdout) == (2, "")
    assert stderr.endswith(f"{key}: {value!r} " + OUTSIDE.format(
        root=repo.resolve(), flag=flag, through=""))
    assert not (repo.parent / "outside" / "baseline.json").exists()


def test_render_refuses_a_config_s_templates_outside(runner: CliRunner, repo: Path) -> None:
    (repo / ".pmanifest.yaml").write_text("templates: /etc\n")
    shutil.copy(SPEC, repo / "spec.yaml")
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "templates: '/etc' is outside the repository" in result.stderr


def test_the_same_paths_given_on_the_command_line_are_read(runner: CliRunner,
                                                           repo: Path) -> None:
    """The positive around it: --policies outside the repository is the runner's choice."""
    outside = repo.parent / "outside"
    (outside / "secret.yaml").unlink()
    shutil.copy(POLICY, outside / "gpu.yaml")
    code, _, stderr = _lint(runner, repo, "failOn: error\n", "--policies", str(outside))
    assert code == 0, stderr
    assert "(1 object, " in stderr


def test_paths_inside_the_repository_are_read_from_a_config_below_its_root(
        runner: CliRunner, repo: Path) -> None:
    """A config in a subdirectory may name ``../policies`` (the same work tree), through a
    link that stays inside it too."""
    (repo / "policies").mkdir()
    shutil.copy(POLICY, repo / "policies" / "gpu.yaml")
    (repo / "deploy" / "shared").symlink_to(repo / "policies")
    (repo / "deploy" / ".pmanifest.yaml").write_text("policies: [../policies]\n")
    result = invoke(runner, ["lint", "--config", str(repo / "deploy" / ".pmanifest.yaml"),
                             str(repo / "deploy" / "ok.yaml")])
    assert result.exit_code == 0, result.stderr
    (repo / "deploy" / ".pmanifest.yaml").write_text("policies: [shared]\n")
    result = invoke(runner, ["lint", "--config", str(repo / "deploy" / ".pmanifest.yaml"),
                             str(repo / "deploy" / "ok.yaml")])
    assert result.exit_code == 0, result.stderr


def test_without_git_the_config_s_directory_is_the_repository(runner: CliRunner,
                                                               tmp_path: Path) -> None:
    (tmp_path / "top" / "policies").mkdir(parents=True)
    shutil.copy(POLICY, tmp_path / "top" / "policies" / "gpu.yaml")
    (tmp_path / "top" / "ok.yaml").write_text(CONFIGMAP)
    (tmp_path / "top" / ".pmanifest.yaml").write_text("policies: [policies]\n")
    result = invoke(runner, ["lint", str(tmp_path / "top" / "ok.yaml")])
    assert result.exit_code == 0, result.stderr
    (tmp_path / "top" / ".pmanifest.yaml").write_text("policies: ['..']\n")
    (tmp_path / "top" / ".pmanifest.yaml").rename(tmp_path / "top" / "policies" / "c.yml")
    result = invoke(runner, ["lint", "--config", str(tmp_path / "top" / "policies" / "c.yml"),
                             str(tmp_path / "top" / "ok.yaml")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "policies: '..' is outside the repository" in result.stderr
