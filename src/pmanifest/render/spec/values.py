"""Spec values the JSON Schema lets through but the model cannot take as they are: keys that
are not strings (YAML's ``1: x``), and integral floats (``gpus: 8.0``, an integer to JSON
Schema)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pmanifest.errors import SpecError
from pmanifest.loader.positions import Path, Positions, dotted

# Values passed on as text: `1.0` there stays the text "1.0", not the number 1.
_TEXT_FIELDS = frozenset({"env", "command", "args"})


def _containers(data: Any) -> Iterator[tuple[Path, dict[Any, Any] | list[Any]]]:
    """Every mapping and list in ``data`` with its path, in document order (no recursion: the
    loader bounds the depth, this walk does not depend on it)."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            yield path, value
            stack.extend(((*path, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            yield path, value
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))


def refuse_non_string_keys(data: dict[str, Any], positions: Positions, file: str,
                           text: str = "") -> None:
    """Keys of maps the schema leaves open (labels, env, nodeSelector, resources) must be
    strings, as Kubernetes object keys are. Only integers reach here: the loader keeps a
    float, boolean or null key as the text written (``1.5``, ``true``, ``null``), as kubectl
    does, and that text is what the user wrote; an integer's text can differ from its value
    (``0x10`` is 16), so the hint quotes it as written in ``text``."""
    for path, value in _containers(data):
        if not isinstance(value, dict):
            continue
        for key in value:
            if not isinstance(key, str):
                pos = positions.at((*path, key))
                written = _written(text, pos.line, pos.column) or str(key)
                raise SpecError(f"{dotted(path) or 'the spec'} key {written} must be a string, got "
                                f"{_TYPE_NAMES.get(type(key), type(key).__name__)}; quote it: "
                                f"\"{written}\"", file, pos.line, pos.column)


_TYPE_NAMES = {int: "integer", bool: "boolean", float: "number", type(None): "null"}
_PLAIN_KEY = re.compile(r"[^\s,:\[\]{}#]+")


def _written(text: str, line: int, column: int) -> str | None:
    """The plain scalar written at ``line``:``column`` of ``text`` (None for an alias, a tag,
    an anchor or a quoted key)."""
    lines = text.splitlines()
    found = _PLAIN_KEY.match(lines[line - 1], column - 1) if 0 < line <= len(lines) else None
    if found is None or found.group()[0] in "*&!'\"":
        return None
    return found.group()


def integral_floats_to_integers(data: dict[str, Any]) -> None:
    """``8.0`` where the schema accepted an integer becomes 8, in place (except in fields
    passed on as text)."""
    for path, value in _containers(data):
        if any(isinstance(p, str) and p in _TEXT_FIELDS for p in path):
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in list(items):
            if isinstance(item, float) and item.is_integer():
                value[key] = int(item)
