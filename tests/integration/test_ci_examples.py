"""Every ``pmanifest`` invocation in the CI recipes (examples/ci) and in the pre-commit
hooks is parsed by the real click commands, so a typo'd or removed flag fails here, not in
a user's pipeline."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from pmanifest.cli.main import main
from tests.integration.tools import ROOT

CI = ROOT / "examples" / "ci"
pytestmark = pytest.mark.skipif(not CI.is_dir(), reason="needs the source tree's examples/")


def _strings(node: Any, key: str | None = None) -> list[tuple[str | None, str]]:
    """Every string in a parsed YAML tree, with the mapping key it sits under."""
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, str(k))]
    if isinstance(node, list):
        return [s for item in node for s in _strings(item, key)]
    return [(key, node)] if isinstance(node, str) else []


def invocations(path: Path) -> list[list[str]]:
    """Argument lists of the shell commands (``run:``, ``script:``) that start ``pmanifest``."""
    found = []
    for key, text in _strings(yaml.safe_load(path.read_text())):
        if key not in {"run", "script", "before_script", "after_script"}:
            continue
        for command in re.split(r"\n|&&|\|\||;|\|", text):
            words = shlex.split(command, comments=True)
            if words and words[0] == "pmanifest":
                found.append(words[1:])
    return found


def check_with_click(args: list[str]) -> None:
    """Parse ``pmanifest ARGS`` exactly as the CLI would, without running it."""
    ctx = click.Context(main, info_name="pmanifest")
    name, command, rest = main.resolve_command(ctx, args)
    assert command is not None and name is not None
    with command.make_context(name, rest, parent=ctx):
        pass


RECIPES = sorted(CI.glob("*.yml")) if CI.is_dir() else []
CASES = [pytest.param(args, id=f"{path.name}: pmanifest {' '.join(args)}")
         for path in RECIPES for args in invocations(path)]


def test_every_recipe_calls_pmanifest() -> None:
    assert {p.name for p in RECIPES} == {"github-actions.yml", "gitlab-ci.yml"}
    for path in RECIPES:
        commands = [args[0] for args in invocations(path)]
        assert "lint" in commands and "render" in commands, path.name


@pytest.mark.parametrize("args", CASES)
def test_recipe_invocation_is_accepted_by_the_cli(args: list[str]) -> None:
    check_with_click(args)


def test_recipes_upload_what_they_write() -> None:
    github = yaml.safe_load((CI / "github-actions.yml").read_text())
    steps = github["jobs"]["pmanifest"]["steps"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith(
        "github/codeql-action/upload-sarif@"))
    assert ["--output", upload["with"]["sarif_file"]] == _after("sarif", invocations(
        CI / "github-actions.yml"))
    gitlab = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    assert ["--output", gitlab["pmanifest"]["artifacts"]["reports"]["junit"]] == _after(
        "junit", invocations(CI / "gitlab-ci.yml"))


def _after(fmt: str, found: list[list[str]]) -> list[str]:
    lint = next(args for args in found if args[0] == "lint")
    i = lint.index(fmt)
    return lint[i + 1:i + 3]


@pytest.mark.parametrize("bad", [
    ["lint", "k8s/", "--formats", "sarif"],
    ["lint", "k8s/", "--format", "sarif2"],
    ["lnit", "k8s/"],
])
def test_a_typo_in_a_recipe_would_fail(bad: list[str]) -> None:
    with pytest.raises(click.UsageError):
        check_with_click(bad)


def test_pre_commit_hook_entries_are_real_commands() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"pmanifest-lint", "pmanifest-render-check"}
    lint = hooks["pmanifest-lint"]
    assert (lint["language"], lint["files"], lint["types"]) == ("python", r"\.(ya?ml)$",
                                                               ["yaml"])
    words = shlex.split(lint["entry"])
    assert words[0] == "pmanifest"
    check_with_click([*words[1:], "k8s/job.yaml"])  # pre-commit appends the file names
    render = shlex.split(hooks["pmanifest-render-check"]["entry"])
    assert render == ["pmanifest", "render", "--check"]
    check_with_click([*render[1:], "deploy/rendered.yaml", "-f", "deploy/spec.yaml"])
