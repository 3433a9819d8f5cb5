"""The setup recipes work from a fresh repository as written: the README's install line and
pre-commit snippet, and every step of examples/ci/*.yml.

pmanifest is on no package index, so every recipe installs it from its git repository at one
pinned rev (``pip install "pmanifest @ git+URL@REV"``, pre-commit's ``repo:``/``rev:``). The
tests here check that the recipes agree on URL and rev, that the rev is the release tag of the
version in pyproject.toml (or a full commit SHA), and then run them: the only substitution is
the repository URL, pointed at a local clone of this checkout (no network for pmanifest itself;
its dependencies come from the package index). The clone stands for the released repository:
when the checkout under test is not tagged yet (a CI clone of main), its HEAD is tagged there.
A recipe step that is not a shell command (``uses:`` actions: checkout, setup-python, the
SARIF upload) is done by the test itself: the sandbox is the checkout, this interpreter is the
Python, and the file the upload would send must exist and be SARIF.

PMANIFEST_RECIPE_REV=<commit> runs the recipes at another rev of the clone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.manifests import BAD_FIELD
from tests.integration.tools import ROOT, clean_env, run, tool

REPO_URL = "https://github.com/OWNER/pmanifest"  # what the recipes name; a clone replaces it
PIN = re.compile(r"pmanifest @ git\+(?P<url>[^@\s\"']+)@(?P<rev>[^\s\"']+)")
README = ROOT / "README.md"
CI = ROOT / "examples" / "ci"
INSTALL_TIMEOUT = 900

pytestmark = pytest.mark.skipif(not (ROOT / ".git").exists() or not CI.is_dir(),
                                reason="needs a git checkout of pmanifest")


def pins() -> dict[str, tuple[str, str]]:
    """(url, rev) pinned by each recipe."""
    found: dict[str, tuple[str, str]] = {}
    for path in (README, *sorted(CI.glob("*.yml"))):
        for match in PIN.finditer(path.read_text()):
            found.setdefault(f"{path.name}: pip install", (match["url"], match["rev"]))
    hook = _precommit_snippet()["repos"][0]
    found["README.md: .pre-commit-config.yaml"] = (hook["repo"], str(hook["rev"]))
    return found


def _precommit_snippet() -> dict[str, Any]:
    text = README.read_text()
    block = re.search(r"```yaml\n# \.pre-commit-config\.yaml\n(.*?)```", text, re.S)
    assert block is not None, "README.md shows no .pre-commit-config.yaml"
    loaded: dict[str, Any] = yaml.safe_load(block.group(1))
    return loaded


def pinned_rev() -> str:
    return next(iter(pins().values()))[1]


def test_every_recipe_pins_the_same_repository_and_rev() -> None:
    found = pins()
    assert set(found) == {"README.md: pip install", "github-actions.yml: pip install",
                          "gitlab-ci.yml: pip install", "README.md: .pre-commit-config.yaml"}
    assert set(found.values()) == {(REPO_URL, pinned_rev())}, found


def test_every_recipe_says_the_url_is_a_placeholder() -> None:
    """The real URL is not known to the recipes: next to (at most 6 lines above) the first pin
    of each, the reader is told to replace OWNER, and in the pre-commit snippet's repo line."""
    assert REPO_URL.split("/")[3] == "OWNER"
    for path in (README, *sorted(CI.glob("*.yml"))):
        lines = path.read_text().splitlines()
        first = next(i for i, line in enumerate(lines) if PIN.search(line))
        near = " ".join(lines[max(0, first - 6):first]).replace("`", "")
        assert "OWNER is a placeholder" in near and "replace" in near, path.name
    repo_line = next(line for line in README.read_text().splitlines()
                     if line.strip().startswith(f"- repo: {REPO_URL}"))
    assert "# OWNER: replace with where the repository is hosted" in repo_line


def test_the_pinned_rev_is_this_release() -> None:
    rev = pinned_rev()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert rev == f"v{version}" or re.fullmatch(r"[0-9a-f]{40}", rev), (
        f"the recipes pin rev {rev!r}: pin the release tag v{version} of pyproject.toml's "
        "version, or a full commit SHA")


# --- running them ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clone of this checkout (what a user's URL serves) and the rev to install."""
    base = tmp_path_factory.mktemp("origin")
    repo = base / "pmanifest"
    env = clean_env(base)
    assert run(["git", "clone", "-q", str(ROOT), str(repo)], base, env).returncode == 0
    rev = os.environ.get("PMANIFEST_RECIPE_REV") or pinned_rev()
    found = run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo, env)
    if found.returncode != 0 and rev == pinned_rev() and rev.startswith("v"):
        # not released yet: the clone is the release, its HEAD is what the tag will name
        assert run(["git", "tag", rev], repo, env).returncode == 0
        found = run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo, env)
    assert found.returncode == 0, f"rev {rev!r} is not in the repository"
    return repo, rev


def _pointed(text: str, repo: Path, rev: str) -> str:
    """The recipe with the repository URL pointed at the clone, and the rev it installs."""
    text = PIN.sub(f"pmanifest @ git+file://localhost{repo}@{rev}", text)
    return text.replace(REPO_URL, str(repo))


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh repository with what the recipes name: k8s/, deploy/spec.yaml and the
    committed deploy/rendered.yaml."""
    project = tmp_path / "project"
    (project / "k8s").mkdir(parents=True)
    (project / "deploy").mkdir()
    env = clean_env(tmp_path, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("VIRTUAL_ENV", None)
    shutil.copyfile(ROOT / "examples" / "serving.yaml", project / "deploy" / "spec.yaml")
    rendered = run([tool("pmanifest"), "render", "-f", "deploy/spec.yaml"], project, env)
    assert rendered.returncode == 0, rendered.stderr
    (project / "deploy" / "rendered.yaml").write_text(rendered.stdout)
    (project / "k8s" / "serving.yaml").write_text(rendered.stdout)
    run(["git", "init", "-q"], project, env)
    run(["git", "add", "."], project, env)
    return project, env


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A step as GitHub runs `run:` (bash --noprofile --norc -eo pipefail) and GitLab its
    script (one shell, stop at the first failure)."""
    return run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd, env,
               timeout=INSTALL_TIMEOUT)


@pytest.mark.slow
def test_the_github_actions_recipe_runs_as_written(clone: tuple[Path, str],
                                                    tmp_path: Path) -> None:
    repo, rev = clone
    project, env = _project(tmp_path)
    workflow = yaml.safe_load(_pointed((CI / "github-actions.yml").read_text(), repo, rev))
    github_path = tmp_path / "github_path"
    github_path.touch()
    env["GITHUB_PATH"] = str(github_path)
    steps = workflow["jobs"]["pmanifest"]["steps"]
    for step in steps:
        if "run" not in step:
            continue  # checkout, setup-python, upload-sarif: see the module docstring
        # the runner puts the lines a step appended to $GITHUB_PATH first on PATH
        added = [line for line in github_path.read_text().splitlines() if line]
        step_env = {**env, "PATH": os.pathsep.join([*added[::-1], env["PATH"]])}
        done = _bash(step["run"], project, step_env)
        assert done.returncode == 0, f"{step.get('name')}: {done.stdout}{done.stderr}"
    upload = next(s for s in steps if str(s.get("uses", "")).startswith(
        "github/codeql-action/upload-sarif@"))
    sarif = json.loads((project / upload["with"]["sarif_file"]).read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"] == []
    # the gate fails on a mistake, with an annotation at its line
    (project / "k8s" / "train.yaml").write_text(BAD_FIELD)
    lint = next(s for s in steps if s.get("name") == "Lint manifests")
    done = _bash(lint["run"], project, {**env, "PATH": os.pathsep.join(
        [*github_path.read_text().split(), env["PATH"]])})
    assert done.returncode == 1
    assert "::error file=k8s/train.yaml,line=8,col=7,title=PM002 schema-invalid::" in done.stdout


@pytest.mark.slow
def test_the_gitlab_recipe_runs_as_written(clone: tuple[Path, str], tmp_path: Path) -> None:
    repo, rev = clone
    project, env = _project(tmp_path)
    job = yaml.safe_load(_pointed((CI / "gitlab-ci.yml").read_text(), repo, rev))["pmanifest"]
    assert job["image"].startswith("python:3.1")  # 3.11 or newer
    done = _bash("\n".join(job["script"]), project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = project / job["artifacts"]["reports"]["junit"]
    assert report.read_text().startswith("<?xml")


@pytest.mark.slow
def test_the_readme_precommit_snippet_works_as_written(clone: tuple[Path, str],
                                                        tmp_path: Path) -> None:
    repo, rev = clone
    project, env = _project(tmp_path)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    config = _precommit_snippet()
    config["repos"][0].update(repo=str(repo), rev=rev)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "values.yaml").write_text("replicas: 3\n")  # other YAML: skipped by the hook
    run(["git", "add", "."], project, env)
    command = [tool("pre-commit"), "run", "--all-files"]
    done = run(command, project, env, timeout=INSTALL_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Passed") == 2
    (project / "k8s" / "train.yaml").write_text(BAD_FIELD)
    run(["git", "add", "."], project, env)
    done = run(command, project, env, timeout=INSTALL_TIMEOUT)
    assert done.returncode == 1
    assert "k8s/train.yaml:8:7: error PM002[schema-invalid]" in done.stdout
