"""Shell completion comes from click: the installed ``pmanifest`` prints the script for
bash, zsh and fish, and completes commands and choices (docs/integrations.md, "Shell
completion")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.tools import clean_env, run, tool


@pytest.mark.parametrize(("shell", "marker"), [
    ("bash", "complete -o nosort -F _pmanifest_completion pmanifest"),
    ("zsh", "#compdef pmanifest"),
    ("fish", "complete --no-files --command pmanifest"),
])
def test_completion_script_is_printed(tmp_path: Path, shell: str, marker: str) -> None:
    env = clean_env(tmp_path, _PMANIFEST_COMPLETE=f"{shell}_source")
    result = run([tool("pmanifest")], tmp_path, env)
    assert (result.returncode, result.stderr) == (0, "")
    assert marker in result.stdout


def complete(tmp_path: Path, words: str) -> list[str]:
    env = clean_env(tmp_path, _PMANIFEST_COMPLETE="bash_complete", COMP_WORDS=words,
                    COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1)))
    result = run([tool("pmanifest")], tmp_path, env)
    assert result.returncode == 0, result.stderr
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


def test_completes_commands_and_format_choices(tmp_path: Path) -> None:
    assert "lint" in complete(tmp_path, "pmanifest li")
    assert complete(tmp_path, "pmanifest lint --format s") == ["sarif"]
    assert complete(tmp_path, "pmanifest lint --format ") == [
        "text", "json", "sarif", "github", "junit"]
