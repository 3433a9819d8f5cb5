"""One writer of YAML (issue 22): every YAML text pmanifest writes (rendered objects, fixes,
the admission export) goes through ``pmanifest.loader.emit``, which quotes every string kubectl
would read as something else. Nothing else in ``src/`` calls PyYAML's emitter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "pmanifest"
pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree")
WRITER = "loader/emit.py"
_EMITTERS = {"dump", "dump_all", "safe_dump", "safe_dump_all", "emit", "serialize",
             "serialize_all"}


def _emitter_calls(tree: ast.AST) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml"
            and node.func.attr in _EMITTERS]


def test_only_the_writer_calls_pyyamls_emitter() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        lines = _emitter_calls(ast.parse(path.read_text(encoding="utf-8")))
        if module == WRITER:
            assert lines, "the writer no longer calls the emitter: is this test still right?"
        else:
            found += [f"{module}:{line}" for line in lines]
    assert found == []


def test_the_check_sees_a_call_written_anywhere() -> None:
    source = "import yaml\ndef f(x):\n    return yaml.safe_dump(x)\n"
    assert _emitter_calls(ast.parse(source)) == [3]
