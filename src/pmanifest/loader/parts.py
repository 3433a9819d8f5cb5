"""The builder's parts: the records it builds with (a container being built, an anchor), why a
document could not be turned into data (and, past the nesting limit, where), and the position
tables that keep nothing or only some paths."""

from __future__ import annotations

from typing import Any, NamedTuple

from pmanifest.loader.positions import Path

NO_KEY = object()  # a mapping's state between a value and the next key


class Frame:
    """A mapping or sequence being built."""

    __slots__ = ("anchor", "depth", "height", "key", "merges", "path", "pending_key", "size",
                 "value")

    def __init__(self, value: dict[Any, Any] | list[Any], path: Path, anchor: str | None) -> None:
        self.value = value
        self.path = path
        self.anchor = anchor
        self.pending_key: Any = NO_KEY  # mappings: the key waiting for its value
        self.key: Any = None
        self.merges: list[dict[Any, Any]] | None = None  # what `<<` merges in, if any
        self.size = 1  # nodes in this subtree, alias expansions included
        self.depth = len(path) + 1  # path length (cells) of each child
        self.height = 1  # container levels in this subtree, aliased values included


class Anchor(NamedTuple):
    """What an alias of the anchor attaches: the value, its size and height, and for a
    scalar the text it has as a mapping key (``1.5``, ``null``, ``yes`` are keys as written)."""

    value: Any
    size: int
    height: int
    key: Any


class YamlProblem(Exception):
    """Why a document could not be turned into data, with its 1-based position."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.templated = False  # the document holds ``{{ }}``: callers may say what it means
        # the YAML scanner or parser refused the text (a syntax error), as opposed to a bound
        # (alias bomb, depth, size), a duplicate key, a bad character or a value
        self.syntax = False


def too_deep(chunk: str, last: Any, exc: Any, spare: int, offset: int,
             limit: int) -> YamlProblem:
    """Our depth limit (``limit``), where libyaml's own (deeper) one stopped its look-ahead
    first: the opening bracket that takes the document past the limit (``spare`` more levels
    than the builder's stack holds), counted from the last event received, so the report does
    not depend on the libyaml version. ``offset``: the chunk's first line in the file."""
    message = f"document is nested more than {limit} levels deep"
    start = last.end_mark.index if last is not None else 0
    depth, quote, i = 0, "", start
    while i < len(chunk) and spare > 0:
        char = chunk[i]
        if quote:
            if char == "\\" and quote == '"':
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
            if depth == spare:
                line = chunk.count("\n", 0, i)
                column = i - (chunk.rfind("\n", 0, i) + 1)
                return YamlProblem(message, line + offset + 1, column + 1)
        elif char in "]}":
            depth -= 1
        i += 1
    mark = exc.problem_mark
    if mark is None:
        return YamlProblem(message, 1, 1)
    return YamlProblem(message, mark.line + offset + 1, mark.column + 1)


class Discard(dict[Any, Any]):
    """A table that keeps nothing: the builder's sink when only the data is wanted."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class Wanted(dict[Any, Any]):
    """A table that keeps only the paths asked for."""

    def __init__(self, wanted: frozenset[Path]) -> None:
        super().__init__()
        self.wanted = wanted

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self.wanted:
            super().__setitem__(key, value)
