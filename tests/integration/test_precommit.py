"""The real ``pre-commit`` runs this checkout's ``.pre-commit-hooks.yaml``.

``pre-commit try-repo`` installs the hook environment with pip (pmanifest and its
dependencies from PyPI) into a private PRE_COMMIT_HOME, once for this module, so the first
test takes a minute or two. The hooks repository is a clone of the checkout's HEAD (what a
user's ``rev:`` would pin) with the working tree's hooks file committed on top.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.manifests import BAD_FIELD, GOOD, LONG_GRACE, NOT_KUBERNETES
from tests.integration.tools import ROOT, clean_env, run, tool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout of pmanifest"),
]
INSTALL_TIMEOUT = 900  # pip installs the hook environment from PyPI on the first run


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hooks")
    env = clean_env(base)
    repo = base / "pmanifest"
    assert run(["git", "clone", "-q", str(ROOT), str(repo)], base, env).returncode == 0
    shutil.copyfile(ROOT / ".pre-commit-hooks.yaml", repo / ".pre-commit-hooks.yaml")
    if run(["git", "status", "--porcelain"], repo, env).stdout.strip():
        run(["git", "add", ".pre-commit-hooks.yaml"], repo, env)
        assert run(["git", "commit", "-q", "-m", "hooks"], repo, env).returncode == 0
    return repo


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository with one bad, one good and one non-Kubernetes YAML file."""
    path = tmp_path_factory.mktemp("project")
    env = clean_env(path)
    run(["git", "init", "-q"], path, env)
    run(["git", "config", "user.name", "pmanifest tests"], path, env)
    run(["git", "config", "user.email", "tests@example.invalid"], path, env)
    (path / "k8s").mkdir()
    (path / "k8s" / "train.yaml").write_text(BAD_FIELD)
    (path / "k8s" / "finetune.yml").write_text(LONG_GRACE)
    (path / "k8s" / "web.yaml").write_text(GOOD)
    (path / "values.yaml").write_text(NOT_KUBERNETES)
    run(["git", "add", "."], path, env)
    return path


def try_repo(hooks_repo: Path, project: Path, pre_commit_home: Path,
             *files: str) -> tuple[int, str]:
    env = clean_env(project, PRE_COMMIT_HOME=str(pre_commit_home))
    result = run([tool("pre-commit"), "try-repo", str(hooks_repo), "pmanifest-lint",
                  "--files", *files], project, env, timeout=INSTALL_TIMEOUT)
    return result.returncode, result.stdout + result.stderr


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def test_hook_blocks_a_bad_manifest_with_the_finding_printed(
    hooks_repo: Path, project: Path, pre_commit_home: Path
) -> None:
    code, output = try_repo(hooks_repo, project, pre_commit_home,
                            "k8s/train.yaml", "k8s/finetune.yml", "values.yaml")
    assert code == 1, output
    assert "pmanifest lint" in output and "Failed" in output
    assert "k8s/train.yaml:8:7: error PM002[schema-invalid] unknown key " \
           "'terminationGracePeriodSecond' in spec.template.spec" in output
    assert "k8s/finetune.yml:9:7: error PM201[grace-period-over-limit]" in output


def test_hook_passes_a_good_manifest_and_skips_other_yaml(
    hooks_repo: Path, project: Path, pre_commit_home: Path
) -> None:
    code, output = try_repo(hooks_repo, project, pre_commit_home, "k8s/web.yaml",
                            "values.yaml")
    assert code == 0, output
    assert "Passed" in output


def test_hook_passes_a_commit_of_other_yaml_only(
    hooks_repo: Path, project: Path, pre_commit_home: Path
) -> None:
    """A commit that stages only values or CI files checks no object: the hook passes
    (--allow-empty in its entry), where a plain `pmanifest lint values.yaml` exits 2."""
    code, output = try_repo(hooks_repo, project, pre_commit_home, "values.yaml")
    assert code == 0, output
    assert "Passed" in output


def test_hook_skips_staged_files_the_config_excludes(
    hooks_repo: Path, project: Path, pre_commit_home: Path
) -> None:
    (project / ".pmanifest.yaml").write_text("exclude: ['k8s/train.yaml']\n")
    try:
        code, output = try_repo(hooks_repo, project, pre_commit_home,
                                "k8s/train.yaml", "k8s/web.yaml")
    finally:
        (project / ".pmanifest.yaml").unlink()
    assert code == 0, output
    assert "train.yaml" not in output


def test_hook_is_skipped_for_files_that_are_not_yaml(
    hooks_repo: Path, project: Path, pre_commit_home: Path
) -> None:
    (project / "README.md").write_text("# not yaml: apiVersion: v1\n")
    code, output = try_repo(hooks_repo, project, pre_commit_home, "README.md")
    assert code == 0, output
    assert "(no files to check)Skipped" in output


def test_render_check_hook_tells_drift_from_no_drift(
    hooks_repo: Path, tmp_path: Path, pre_commit_home: Path
) -> None:
    """The way users configure it: a .pre-commit-config.yaml pinning the hooks repo's rev,
    with the rendered file and the spec in ``args``."""
    env = clean_env(tmp_path, PRE_COMMIT_HOME=str(pre_commit_home))
    rev = run(["git", "rev-parse", "HEAD"], hooks_repo, env).stdout.strip()
    run(["git", "init", "-q"], tmp_path, env)
    (tmp_path / "deploy").mkdir()
    spec = (ROOT / "examples" / "serving.yaml").read_text()
    (tmp_path / "deploy" / "spec.yaml").write_text(spec)
    rendered = run([tool("pmanifest"), "render", "-f", "deploy/spec.yaml"], tmp_path, env)
    assert rendered.returncode == 0, rendered.stderr
    (tmp_path / "deploy" / "rendered.yaml").write_text(rendered.stdout)
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: pmanifest-render-check\n"
        "        args: [deploy/rendered.yaml, -f, deploy/spec.yaml]\n")
    run(["git", "add", "."], tmp_path, env)
    command = [tool("pre-commit"), "run", "pmanifest-render-check", "--all-files"]
    result = run(command, tmp_path, env, timeout=INSTALL_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout

    drifted = rendered.stdout.replace("replicas: 3", "replicas: 7")
    (tmp_path / "deploy" / "rendered.yaml").write_text(drifted)
    run(["git", "add", "."], tmp_path, env)
    result = run(command, tmp_path, env, timeout=INSTALL_TIMEOUT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "-  replicas: 7\n+  replicas: 3" in result.stdout


def test_a_karpenter_repository_passes_its_own_hooks(
    hooks_repo: Path, tmp_path: Path, pre_commit_home: Path
) -> None:
    """One config file: render (here and in the render-check hook) makes what the lint hook
    passes, Karpenter's label and 120 s cap instead of the default profile's."""
    env = clean_env(tmp_path, PRE_COMMIT_HOME=str(pre_commit_home))
    rev = run(["git", "rev-parse", "HEAD"], hooks_repo, env).stdout.strip()
    run(["git", "init", "-q"], tmp_path, env)
    (tmp_path / ".pmanifest.yaml").write_text('profile: karpenter\nkubernetesVersion: "1.33"\n')
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "spec.yaml").write_text(
        (ROOT / "examples" / "finetune-sigterm.yaml").read_text()
        .replace("      gracePeriodSeconds: 300\n", ""))  # the profile's cap, whatever it is
    rendered = run([tool("pmanifest"), "render", "-f", "spec.yaml", "-O", "rendered.yaml"],
                   tmp_path / "deploy", env)
    assert (rendered.returncode, rendered.stderr) == (0, "")
    text = (tmp_path / "deploy" / "rendered.yaml").read_text()
    assert "karpenter.sh/capacity-type: spot" in text
    assert "terminationGracePeriodSeconds: 120" in text
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: pmanifest-lint\n        args: [--fail-on, info]\n"
        "      - id: pmanifest-render-check\n"
        "        args: [deploy/rendered.yaml, -f, deploy/spec.yaml]\n")
    run(["git", "add", "."], tmp_path, env)
    result = run([tool("pre-commit"), "run", "--all-files"], tmp_path, env,
                 timeout=INSTALL_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("Passed") == 2


def _repository(path: Path, files: dict[str, str]) -> Path:
    """A git repository at ``path`` with ``files`` staged."""
    path.mkdir()
    env = clean_env(path)
    run(["git", "init", "-q"], path, env)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    assert run(["git", "add", "--", *files], path, env).returncode == 0
    return path


LAX = "rules: {PM002: off, PM201: off}\n"  # a config that passes everything the tests plant


def test_a_staged_file_named_like_an_option_is_linted_as_a_file(
    hooks_repo: Path, tmp_path: Path, pre_commit_home: Path
) -> None:
    """Issue 24: pre-commit appended the staged names to the entry without ``--``, so a staged
    ``--config=lax.yaml`` swapped the config for one that passes everything: the bad manifest
    was committed (exit 0). The hook's args are ``[--]`` now: it is one more file."""
    project = _repository(tmp_path / "project", {
        "k8s/train.yaml": BAD_FIELD, "lax.yaml": LAX, "--config=lax.yaml": NOT_KUBERNETES})
    env = clean_env(project, PRE_COMMIT_HOME=str(pre_commit_home))
    result = run([tool("pre-commit"), "try-repo", str(hooks_repo), "pmanifest-lint",
                  "--all-files"], project, env, timeout=INSTALL_TIMEOUT)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "k8s/train.yaml:8:7: error PM002[schema-invalid]" in output


def test_args_of_your_own_without_the_separator_refuse_such_a_file(
    hooks_repo: Path, tmp_path: Path, pre_commit_home: Path
) -> None:
    """A project's own args replace the hook's ``[--]``: the file named like an option is then
    refused (exit 2, one line), never taken as the option."""
    project = _repository(tmp_path / "project", {
        "k8s/train.yaml": BAD_FIELD, "lax.yaml": LAX, "--config=lax.yaml": NOT_KUBERNETES})
    env = clean_env(project, PRE_COMMIT_HOME=str(pre_commit_home))
    rev = run(["git", "rev-parse", "HEAD"], hooks_repo, env).stdout.strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: pmanifest-lint\n        args: [--fail-on, warning]\n")
    run(["git", "add", ".pre-commit-config.yaml"], project, env)
    result = run([tool("pre-commit"), "run", "--all-files"], project, env,
                 timeout=INSTALL_TIMEOUT)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # pre-commit's code for a hook that failed
    assert ("pmanifest: '--config=lax.yaml' is an option and the name of a file here: put -- "
            "before the file names (a pre-commit hook's args: end with --)") in output
    (project / ".pre-commit-config.yaml").write_text(
        (project / ".pre-commit-config.yaml").read_text().replace("warning]", "warning, --]"))
    run(["git", "add", ".pre-commit-config.yaml"], project, env)
    result = run([tool("pre-commit"), "run", "--all-files"], project, env,
                 timeout=INSTALL_TIMEOUT)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "k8s/train.yaml:8:7: error PM002[schema-invalid]" in output


def test_all_staged_files_go_to_one_process(
    hooks_repo: Path, tmp_path: Path, pre_commit_home: Path
) -> None:
    """``require_serial``: without it pre-commit splits the files among as many processes as
    there are CPUs, and each printed its own summary of part of the commit."""
    files = {f"k8s/app{i}.yaml": GOOD.replace("name: web", f"name: web{i}") for i in range(8)}
    project = _repository(tmp_path / "project", files)
    env = clean_env(project, PRE_COMMIT_HOME=str(pre_commit_home))
    result = run([tool("pre-commit"), "try-repo", str(hooks_repo), "pmanifest-lint",
                  "--all-files", "--verbose"], project, env, timeout=INSTALL_TIMEOUT)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count(" rules)") == 1, output
    assert "in 8 files" in output, output
