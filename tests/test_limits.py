"""The bounds on input are in one module (``pmanifest.io.limits``), and docs/reference.md's
"Hostile input" section lists every one of them as that module says (issue 24)."""

from __future__ import annotations

import ast
from pathlib import Path

from pmanifest.io import limits

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_lists_every_limit() -> None:
    table = "| bounded | at most |\n| --- | --- |\n" + "".join(
        f"| {what} | {bound} |\n" for what, bound in limits.LIMITS)
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert table in reference, \
        "docs/reference.md's table of limits differs from pmanifest.io.limits"


def test_no_module_defines_its_own_bound_on_input() -> None:
    """The constants that bound input (sizes, depths, budgets) are defined in io/limits.py
    only; other modules import them (by name, or as an alias)."""
    bounds = {name for name in vars(limits) if name.isupper() and not name.startswith("_")}
    values = {getattr(limits, name) for name in bounds if isinstance(getattr(limits, name),
                                                                   int | float)}
    redefined = []
    for path in sorted((ROOT / "src" / "pmanifest").rglob("*.py")):
        if path.name == "limits.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if any(n in bounds for n in names):
                    redefined.append(f"{path.name}: {names}")
    assert redefined == []
    assert {limits.MAX_INPUT_BYTES, limits.MAX_DEPTH, limits.MAX_INTEGER_DIGITS} <= values
