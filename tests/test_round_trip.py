"""Render -> lint round trip: what pmanifest generates, pmanifest finds nothing wrong with.

Every finding of every severity counts, so a rule and the renderer cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.render.engine import render_text

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("version", ["1.29", "1.31", "1.37"])
def test_rendered_examples_lint_clean(example: Path, version: str) -> None:
    from pmanifest.render.engine import RenderOptions

    rendered = render_text(example.read_text(), str(example), RenderOptions(version))
    findings = lint_bytes(rendered.encode(), "rendered.yaml", LintOptions(version))
    assert [f"{f.line}:{f.column} {f.rule} {f.message}" for f in findings] == []


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 4
