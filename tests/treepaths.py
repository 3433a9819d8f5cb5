"""Test helper: every path of a loaded YAML tree, for mutation-based property tests."""

from __future__ import annotations

from typing import Any


def all_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """``prefix`` and the path of every node below it, depth first."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(all_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.extend(all_paths(value, (*prefix, i)))
    return out
