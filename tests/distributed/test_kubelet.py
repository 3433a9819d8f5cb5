"""The kubelet's $(VAR) expansion of command and args, as the distributed test applies it, and
the rendered scripts surviving it unchanged (a fixed script must not contain ``$$`` or a
``$(NAME)`` of a variable the container defines: the kubelet would rewrite it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.render.engine import render_text

from .kubelet import expand

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


@pytest.mark.parametrize(("text", "expected"), [
    ("--rdzv-id=$(ID)", "--rdzv-id=job-1"),
    ("$(UNDEFINED) stays", "$(UNDEFINED) stays"),
    ("$$(ID) is escaped", "$(ID) is escaped"),
    ('[ "$$" = 1 ]', '[ "$" = 1 ]'),  # what a kubelet does to a shell's "$$"
    ("$((n + 3)) and $HOME and ${x}", "$((n + 3)) and $HOME and ${x}"),
    ("trailing $", "trailing $"),
    ("open $(ID", "open $(ID"),
])
def test_expand(text: str, expected: str) -> None:
    assert expand(text, {"ID": "job-1"}) == expected


def _containers(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [c for c in node.get("containers", []) if isinstance(c, dict)]
        return found + [c for value in node.values() for c in _containers(value)]
    if isinstance(node, list):
        return [c for value in node for c in _containers(value)]
    return []


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_rendered_scripts_survive_the_kubelet(example: Path) -> None:
    text = render_text(example.read_text(), example.name)
    for obj in yaml.safe_load_all(text):
        for container in _containers(obj):
            env = {v["name"]: v.get("value", "x") for v in container.get("env", [])}
            for arg in container.get("command", []):
                if "\n" in str(arg):  # a script (the supervisor): passed to sh as written
                    assert expand(str(arg), env) == arg, container["name"]
