"""The documentation holds together: every relative link of README.md, docs/*.md and the
READMEs of examples/ points at a file of the repository, and an anchor at a heading of its
page (as GitHub names headings); every placeholder path a page names (tests/test_readme.py's
PLACEHOLDERS, which the sandbox that runs the pages' commands makes) is declared a placeholder
on that page, near where it first appears; every page is linked from the front page; and the
front page stays under 200 lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_readme import EXTRA_READMES, PAGES, PLACEHOLDERS, README, ROOT, page_name

LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
READ = [*PAGES, *(ROOT / name for name in EXTRA_READMES)]  # every page a user reads
NEAR = 15  # lines between a placeholder's first appearance and its declaration, at most


def prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    kept, fenced = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append((number, line))
    return kept


def anchors(text: str) -> set[str]:
    """The ids GitHub gives the headings of a page: lower case, punctuation dropped, spaces
    as hyphens, ``-1``, ``-2`` ... for repeats."""
    found: set[str] = set()
    for _, line in prose(text):
        heading = re.match(r"^#{1,6} +(.*?) *#*$", line)
        if heading is None:
            continue
        words = LINK.sub(r"\1", heading.group(1)).replace("`", "").lower()
        slug = re.sub(r"[^\w\- ]", "", words).replace(" ", "-")
        unique, n = slug, 0
        while unique in found:
            n += 1
            unique = f"{slug}-{n}"
        found.add(unique)
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link outside code (a link text may be code)."""
    found = []
    for number, line in prose(text):
        code = [span.span() for span in re.finditer(r"`[^`]*`", line)]
        found += [(number, match.group(2)) for match in LINK.finditer(line)
                  if not any(start < match.start() < end for start, end in code)]
    return found


def test_the_parsers_read_links_and_headings_as_github_does() -> None:
    text = ("# Lint\n## Fixing: `--fix`\n## Check: `cluster check FILE... | -`\n## Lint\n"
            "```sh\n# not a heading [x](y)\n```\nsee [a](b.md#c), [`x`](../y/) and `[no](z)`\n"
            "![image](i.png) [a [nested] text](n.md)\n")
    assert anchors(text) == {"lint", "fixing---fix", "check-cluster-check-file---", "lint-1"}
    assert links(text) == [(8, "b.md#c"), (8, "../y/"), (9, "n.md")]


@pytest.mark.parametrize("page", READ, ids=page_name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for number, target in links(page.read_text()):
        if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:: not checked here
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = f"{page_name(page)}:{number}: {target}"
        if not file.is_relative_to(ROOT) or not file.exists():
            broken.append(f"{where}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file.read_text())):
            broken.append(f"{where}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert broken == []


def test_every_page_is_linked_from_the_front_page() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve()
              for _, target in links(README.read_text()) if not target.startswith("#")}
    assert set(PAGES[1:]) <= linked


@pytest.mark.parametrize("page", READ, ids=page_name)
def test_every_placeholder_is_declared_where_it_appears(page: Path) -> None:
    lines = page.read_text().split("\n")
    paragraphs: list[tuple[int, str]] = []  # (first line, text) of the prose paragraphs
    for number, line in prose(page.read_text()):
        if line.strip() and paragraphs and paragraphs[-1][0] + \
                paragraphs[-1][1].count("\n") + 1 == number:
            paragraphs[-1] = (paragraphs[-1][0], paragraphs[-1][1] + "\n" + line)
        elif line.strip():
            paragraphs.append((number, line))
    undeclared = []
    for token in PLACEHOLDERS:
        first = next((n for n, line in enumerate(lines, 1) if token in line), None)
        if first is None:
            continue
        declared = [start for start, text in paragraphs
                    if "placeholder" in text and re.search(r"`[^`]*" + re.escape(token), text)]
        if not any(abs(start - first) <= NEAR for start in declared):
            undeclared.append(f"{page_name(page)}:{first}: {token}")
    assert undeclared == []


def test_the_front_page_fits_on_a_screen_or_two() -> None:
    assert len(README.read_text().splitlines()) < 200
