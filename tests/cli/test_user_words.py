"""Words for users: no user-facing text speaks of the documents pmanifest was built from
(internally "seeds"), and prose is wrapped to the terminal (80 columns in a pipe).

Every source of user-facing strings is read: every string literal of the package (messages,
help texts, docstrings that click shows), the rule catalogue and profiles (``policies/``), the
templates (rendered output), the examples, the README and docs/; and, as printed, every command's
``--help``, ``rules`` and ``explain`` of every rule."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pmanifest.catalogue import catalogue
from pmanifest.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(r"\bseeds?\b|preemptible-compute\.txt|cluster-concepts\.txt", re.I)


def _string_literals(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _user_files() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").glob("*.md"))
    for folder, pattern in (("policies", "*.yaml"), ("templates", "*.j2"), ("templates", "*.sh"),
                            ("examples", "**/*")):
        yield from (p for p in sorted((ROOT / folder).glob(pattern)) if p.is_file())


def test_no_string_of_the_package_names_the_source_documents() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}: {INTERNAL.search(text).group()!r}"  # type: ignore[union-attr]
             for path in sorted((ROOT / "src" / "pmanifest").rglob("*.py"))
             for line, text in _string_literals(path) if INTERNAL.search(text)]
    assert found == []


def test_no_user_file_names_the_source_documents() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
             for path in _user_files()
             for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                      .splitlines(), 1) if INTERNAL.search(line)]
    assert found == []


def _commands(group: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(group, click.Group):
        for name, command in sorted(group.commands.items()):
            yield from _commands(command, (*path, name))


def test_no_help_text_names_the_source_documents() -> None:
    runner = CliRunner()
    said = []
    for path in _commands(main):
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, path
        said += [f"{' '.join(path)}: {line}" for line in result.output.splitlines()
                 if INTERNAL.search(line)]
    assert said == []
    assert len(list(_commands(main))) > 10  # every command was read, subcommands included


def _prose(output: str) -> list[str]:
    """The lines of ``explain`` before its examples (which are manifests, printed as they are)."""
    return output.split("Failing example:")[0].splitlines()


@pytest.mark.parametrize(("columns", "width"), [(None, 80), ("60", 60), ("300", 100)])
def test_explain_wraps_to_the_terminal(monkeypatch: pytest.MonkeyPatch, columns: str | None,
                                       width: int) -> None:
    if columns is None:  # CliRunner's stdout is no terminal: a pipe's 80 columns
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    runner = CliRunner()
    longest = 0
    for rule_id in catalogue():
        result = runner.invoke(main, ["explain", rule_id])
        assert result.exit_code == 0, rule_id
        assert not INTERNAL.search(result.output), rule_id
        lines = _prose(result.output)
        longest = max(longest, *(len(line) for line in lines))
        assert all(len(line) <= width for line in lines), (rule_id, max(lines, key=len))
    assert longest > width - 10  # the long paragraphs are filled, not cut short


def test_explain_keeps_every_word() -> None:
    meta = catalogue()["PM103"]
    output = CliRunner().invoke(main, ["explain", "PM103"], env={"COLUMNS": "50"}).output
    for title, said in (("Why", meta.rationale), ("Fix", meta.fix)):
        section = output.split(f"{title}:\n")[1].split("\n\n")[0]
        assert section.split() == said.split()
        assert all(line.startswith("  ") and len(line) <= 50 for line in section.splitlines())
