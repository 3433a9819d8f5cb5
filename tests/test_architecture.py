"""The structure STYLE.md promises, checked: modules under the line limit, functions under the
complexity limit, no import cycle, imports only downwards through the layers, and reporters
that never import check code. The tables are read from STYLE.md itself."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "pmanifest"
STYLE = ROOT / "STYLE.md"
pytestmark = pytest.mark.skipif(not STYLE.is_file(), reason="needs the source tree")


def _table(heading: str) -> list[list[str]]:
    """The rows of the first Markdown table after ``heading`` (cells stripped)."""
    lines = STYLE.read_text(encoding="utf-8").split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]  # without the header and its rule


def _limits() -> dict[str, int]:
    return {row[0]: int(row[1]) for row in _table("## Limits")}


def _layers() -> dict[str, int]:
    """Top-level module or package name -> layer number."""
    out: dict[str, int] = {}
    for row in _table("## Layers"):
        for name in re.findall(r"`([a-z_]+)`", row[1]):
            out[name] = int(row[0])
    return out


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@functools.cache
def _parsed(text: str) -> ast.Module:
    """The syntax tree of a module's text, parsed once for every check that reads it (the checks
    only walk it)."""
    return ast.parse(text)


def _tree(path: Path) -> ast.Module:
    return _parsed(path.read_text(encoding="utf-8"))


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules a module imports, anywhere in it (functions included); relative
    imports (``from . import x``, ``from ..lint import y``) resolved against ``name``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package, name)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found.update(target for target in names if target in modules)
    return found


def _absolute(node: ast.ImportFrom, package: str, name: str) -> str:
    """The absolute module an ``import from`` names."""
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    assert node.level <= len(parts), f"{name}: relative import beyond the package"
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports; made once for the checks that read it."""
    modules = _modules()
    return {name: _imports(name, path, modules) - {name} for name, path in modules.items()}


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_relative_imports_count_as_imports(tmp_path: Path) -> None:
    """A relative import is an import like any other: a cycle or an upward import written
    with dots is found too."""
    rules = tmp_path / "rules" / "__init__.py"
    grace = tmp_path / "rules" / "grace.py"
    rules.parent.mkdir()
    rules.write_text("from . import grace\nfrom .. import lint\n")
    grace.write_text("from ..lint import LintOptions\nfrom .grace import x\n"
                     "def f():\n    from .. import catalogue\n")
    modules = {m: tmp_path for m in ("pmanifest", "pmanifest.lint", "pmanifest.catalogue",
                                     "pmanifest.rules", "pmanifest.rules.grace")}
    # (as `from pmanifest import lint` does, `from .. import lint` names the package too)
    assert _imports("pmanifest.rules", rules, modules) == {
        "pmanifest.rules", "pmanifest.rules.grace", "pmanifest", "pmanifest.lint"}
    assert _imports("pmanifest.rules.grace", grace, modules) == {
        "pmanifest.lint", "pmanifest.rules.grace", "pmanifest", "pmanifest.catalogue"}
    grace.write_text("from ... import x\n")
    with pytest.raises(AssertionError, match="relative import beyond the package"):
        _imports("pmanifest.rules.grace", grace, modules)


def test_modules_are_short() -> None:
    limit = _limits()["lines per module"]
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > limit}
    assert not long, f"modules over {limit} lines: {long}"


def test_functions_are_simple() -> None:
    from radon.complexity import cc_visit

    limit = _limits()["cyclomatic complexity per function (`radon cc`)"]
    complex_ = {f"{name}.{block.name}": block.complexity
                for name, path in _modules().items()
                for block in cc_visit(path.read_text(encoding="utf-8"))
                if block.complexity > limit}
    assert not complex_, f"functions above complexity {limit}: {complex_}"


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (isinstance(target, ast.Name) and target.id == "dataclass") or \
                (isinstance(target, ast.Attribute) and target.attr == "dataclass"):
            return True
    return False


def test_every_dataclass_has_a_docstring() -> None:
    # dataclasses writes a missing docstring from inspect.signature: ~0.3 ms a class at import,
    # which the start-up of a plain lint pays for every class on its path
    bare = [f"{name}.{node.name}" for name, path in _modules().items()
            for node in ast.walk(_tree(path))
            if isinstance(node, ast.ClassDef) and _is_dataclass(node)
            and ast.get_docstring(node) is None]
    assert not bare, f"dataclasses without a docstring: {bare}"


def test_there_is_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target):], target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_every_module_has_a_layer_and_imports_only_downwards() -> None:
    layers = _layers()
    graph = _graph()
    missing = sorted({_top(m) for m in graph if m != "pmanifest"} - set(layers))
    assert not missing, f"modules STYLE.md does not place in a layer: {missing}"
    upwards = sorted(f"{m} (layer {layers[_top(m)]}) imports {t} (layer {layers[_top(t)]})"
                     for m, targets in graph.items() if m != "pmanifest"
                     for t in targets if t != "pmanifest"
                     and layers[_top(t)] > layers[_top(m)])
    assert not upwards, "imports that go up a layer:\n" + "\n".join(upwards)


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module the modules of package ``start`` import, directly or not."""
    seen: set[str] = set()
    todo = [m for m in graph if m == start or m.startswith(start + ".")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen


def test_reporters_import_no_check_code() -> None:
    forbidden = ("pmanifest.rules", "pmanifest.policy", "pmanifest.lint")
    bad = sorted(m for m in _reach(_graph(), "pmanifest.reporters") if m.startswith(forbidden))
    assert not bad, f"reporters reach check code: {bad}"


def test_render_never_reaches_the_lint_engine() -> None:
    """Render warnings compose two features; the composition lives in cli, not in render."""
    forbidden = ("pmanifest.lint", "pmanifest.rules", "pmanifest.policy", "pmanifest.reporters",
                 "pmanifest.cli")
    bad = sorted(m for m in _reach(_graph(), "pmanifest.render") if m.startswith(forbidden))
    assert not bad, f"render reaches {bad}"


def test_a_handful_of_top_level_modules_and_packages_that_say_what_they_own() -> None:
    top_modules = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top_modules) <= 6, f"top-level modules: {top_modules}"
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc and "import" in doc.lower(), f"{init}: say what the package owns and may import"


def _private_imports(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, package, name)
            found += [f"{name} imports {source}.{alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")
                      and source in modules and source != name]
    return found


def test_no_private_name_is_imported_from_another_module(tmp_path: Path) -> None:
    modules = _modules()
    found = [hit for name, path in modules.items()
             for hit in _private_imports(name, path, modules)]
    assert not found, "private names imported across modules:\n" + "\n".join(found)
    # the check itself can fail
    probe = tmp_path / "probe.py"
    probe.write_text("from pmanifest.kube.workloads import _private\n")
    assert _private_imports("pmanifest.probe", probe, modules) == [
        "pmanifest.probe imports pmanifest.kube.workloads._private"]
