"""One reader (issue 24): nothing in ``src/`` outside ``pmanifest.io`` opens a file. Every
``open(``, ``.read_text``, ``.read_bytes``, ``.open(``, ``os.open`` and ``os.fdopen`` of the
package is found by its syntax tree, and each must be on the allow-list below, with the reason
it is not a file the user gave."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "pmanifest"
pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree")

# (module relative to src/pmanifest, function holding the call, what is called) -> why
ALLOWED: dict[tuple[str, str, str], str] = {
    ("render/sandbox.py", "_memory_limit", "open"):
        "/proc/self/statm: the process's own size, for the templates' memory budget",
    ("generate.py", "stale", "open"):
        "the generator compares pmanifest's own generated files in the source tree",
}
_READERS = {"read_text", "read_bytes", "open", "fdopen", "openpty"}


def _calls(tree: ast.AST) -> list[tuple[str, str, int]]:
    """(function holding it, what is called, line) of every call that opens a file."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) \
                else function
            if isinstance(child, ast.Call):
                func = child.func
                if isinstance(func, ast.Name) and func.id == "open":
                    found.append((function, "open", child.lineno))
                elif isinstance(func, ast.Attribute) and func.attr in _READERS:
                    owner = func.value.id if isinstance(func.value, ast.Name) else "?"
                    name = f"{owner}.{func.attr}" if owner in ("os", "io", "codecs") \
                        else func.attr
                    found.append((function, name, child.lineno))
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_nothing_outside_io_opens_a_file() -> None:
    unexplained = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("io/"):
            continue
        for function, called, line in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            key = (module, function, called)
            seen.add(key)
            if key not in ALLOWED:
                unexplained.append(f"{module}:{line} {called}() in {function}")
    assert not unexplained, ("files opened outside pmanifest.io (read them through "
                             "pmanifest.io.reading, or allow the call here with a reason): "
                             + "; ".join(unexplained))
    assert not set(ALLOWED) - seen, f"allowed calls that are gone: {set(ALLOWED) - seen}"


def test_the_scan_finds_each_way_of_opening_a_file() -> None:
    source = ("import os\nfrom pathlib import Path\n"
              "def a(p):\n    return open(p).read()\n"
              "def b(p):\n    return Path(p).read_text()\n"
              "def c(p):\n    return Path(p).read_bytes()\n"
              "def d(p):\n    return os.open(p, os.O_RDONLY)\n"
              "def e(p):\n    with Path(p).open() as f:\n        return f.read()\n")
    assert [(f, c) for f, c, _ in _calls(ast.parse(source))] == [
        ("a", "open"), ("b", "read_text"), ("c", "read_bytes"), ("d", "os.open"),
        ("e", "open")]
