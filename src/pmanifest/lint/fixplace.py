"""Where a fix goes in the text: the smallest edits that make the value at a path what the fix
says, leaving every other byte as it is (``lint --fix``).

A fix names the value a path must have (``Fix(path, value)``). What changes is found by
comparing the value written there with the new one, part by part: a changed scalar is
replaced in its span (its quotes kept when it stays a string); a mapping gets the keys it
lacks, each on a line of its own at the indentation of its other keys (a block mapping) or
after its last entry (a flow mapping); a list gets the items it lacks, at their index, as a
line of its own (block) or between its items (flow). New text follows the document's own
style: the step its mappings indent by, whether its lists are indented under their key; lists
of scalars are written in flow style (``values: [preemptible]``), lists of mappings as block
items. Nothing is ever reformatted.

What cannot be placed exactly is refused (``Unplaceable``, with the reason): a path written
only through an alias or a merge key (``<<``), a node with an anchor (its aliases would
change too), a block scalar, a value whose kind changes, a list changed otherwise than by
inserting items. ``lint.fixes`` checks every edit by parsing the result again.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, NamedTuple

from pmanifest.loader.emit import flow_scalar
from pmanifest.loader.positions import Path, dotted
from pmanifest.loader.spans import ALIAS, MAPPING, SCALAR, SEQUENCE, Span

MISSING = object()  # the fix's key is not in the object yet


class Edit(NamedTuple):
    """Replace ``text[start:end]`` with ``new`` (``start == end``: an insertion)."""

    start: int
    end: int
    new: str


class Unplaceable(Exception):
    """A fix that cannot be written exactly, and why (words that follow "skipped: ")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Layout:
    """A document's spans with what placing text needs: children by parent, and its style."""

    def __init__(self, text: str, table: dict[Path, Span], aliased: set[str]) -> None:
        self.text = text
        self.table = table
        self.aliased = aliased  # anchors an alias repeats: what is under them is shared
        self.children: dict[Path, list[tuple[Path, Span]]] = {}
        for path, span in table.items():
            if path:
                self.children.setdefault(path[:-1], []).append((path, span))
        for found in self.children.values():
            found.sort(key=lambda item: item[1].start)
        self.step, self.list_indent = self._style()
        quoted = Counter(span.style for span in table.values() if span.style in ("'", '"'))
        self.quote = "'" if quoted["'"] > quoted['"'] else '"'  # what new strings are quoted by

    def column(self, offset: int) -> int:
        return offset - (self.text.rfind("\n", 0, offset) + 1)

    def first_key(self, path: Path) -> int | None:
        """Where the first key (or dash) of the collection at ``path`` is written."""
        keys = [span.key for _, span in self.children.get(path, []) if span.key is not None]
        return min(keys) if keys else None

    def _style(self) -> tuple[int, int]:
        """(the step block mappings indent by, how far a block list's dash is indented under
        its key): the most common in the document, else 2 and 2."""
        steps: Counter[int] = Counter()
        lists: Counter[int] = Counter()
        for path, span in self.table.items():
            if span.flow or span.kind not in (MAPPING, SEQUENCE) or span.key is None:
                continue
            parent = self.table.get(path[:-1])
            first = self.first_key(path)
            if parent is None or parent.kind != MAPPING or parent.flow or first is None:
                continue
            indent = self.column(first) - self.column(span.key)
            if span.kind == MAPPING and indent > 0:
                steps[indent] += 1
            elif span.kind == SEQUENCE and indent >= 0:
                lists[indent] += 1
        step = steps.most_common(1)[0][0] if steps else 2
        return step, lists.most_common(1)[0][0] if lists else step


def place(layout: Layout, path: Path, old: Any, new: Any) -> list[Edit]:
    """The edits that make the value at ``path`` (now ``old``, or MISSING) ``new``."""
    _not_shared(layout, path)
    if old is MISSING:
        return [_insert_key(layout, path[:-1], path[-1], new)]
    span = _written(layout, path)
    if same(old, new):
        return []
    if span.anchor is not None:
        raise Unplaceable(f"{dotted(path)} has an anchor (&{span.anchor}): its aliases would "
                          "change too")
    if isinstance(old, dict) and isinstance(new, dict) and span.kind == MAPPING:
        return _mapping(layout, path, old, new)
    if isinstance(old, list) and isinstance(new, list) and span.kind == SEQUENCE:
        return _sequence(layout, path, old, new)
    if span.kind == SCALAR and not isinstance(new, dict | list):
        if not span.flow:
            raise Unplaceable(f"{dotted(path)} is a block scalar ({span.style})")
        return [Edit(span.start, span.end, _replacement(new, span.style, layout.quote))]
    raise Unplaceable(f"{dotted(path)} would change from {_kind(old)} to {_kind(new)}")


def _not_shared(layout: Layout, path: Path) -> None:
    """Refuse a path under a node an alias repeats: an edit there changes the alias too."""
    for n in range(len(path) + 1):
        span = layout.table.get(path[:n])
        if span is not None and span.anchor is not None and span.anchor in layout.aliased:
            raise Unplaceable(f"{dotted(path)} is inside &{span.anchor}, which an alias "
                              f"(*{span.anchor}) repeats: a change there would change that too")


def _written(layout: Layout, path: Path) -> Span:
    """The span of ``path``, which must be written in this place (not through an alias)."""
    span = layout.table.get(path)
    parent = layout.table.get(path[:-1]) if path else None
    if span is None and parent is not None and parent.merges:
        raise Unplaceable(f"{dotted(path)} comes from a merge key (<<): the mapping it merges "
                          "is shared; change it there, or set the key here by hand")
    if span is None:
        raise Unplaceable(f"{dotted(path) or 'the object'} is written through an alias, not "
                          "in this place")
    if span.kind == ALIAS:
        raise Unplaceable(f"{dotted(path)} is an alias (*{layout.text[span.start + 1:span.end]}"
                          "): a change there would change what it points to")
    return span


def _mapping(layout: Layout, path: Path, old: dict[Any, Any], new: dict[Any, Any]
             ) -> list[Edit]:
    edits = []
    for key, value in new.items():
        if key in old:
            edits += place(layout, (*path, key), old[key], value)
        else:
            edits.append(_insert_key(layout, path, key, value))
    gone = [key for key in old if key not in new]
    if gone:
        raise Unplaceable(f"{dotted((*path, gone[0]))} would be removed")
    return edits


def _sequence(layout: Layout, path: Path, old: list[Any], new: list[Any]) -> list[Edit]:
    if len(new) == len(old):
        return [edit for i, (a, b) in enumerate(zip(old, new, strict=True))
                for edit in place(layout, (*path, i), a, b)]
    head = 0
    while head < len(old) and same(old[head], new[head]):
        head += 1
    tail = 0
    while tail < len(old) - head and same(old[len(old) - 1 - tail], new[len(new) - 1 - tail]):
        tail += 1
    if head + tail != len(old) or len(new) < len(old):
        raise Unplaceable(f"{dotted(path)} would change otherwise than by new items")
    return [_insert_items(layout, path, head, new[head:len(new) - tail])]


# --- insertions --------------------------------------------------------------------------

def _insert_key(layout: Layout, path: Path, key: Any, value: Any) -> Edit:
    span = layout.table.get(path)
    if span is None or span.kind != MAPPING:
        raise Unplaceable(f"{dotted(path) or 'the object'} is not a mapping written here")
    if span.anchor is not None:
        raise Unplaceable(f"{dotted(path)} has an anchor (&{span.anchor}): its aliases would "
                          "change too")
    entries = layout.children.get(path, [])
    if span.flow:
        entry = f"{_scalar(key, layout.quote)}: {_flow(value, layout.quote)}"
        if not entries:
            opening = layout.text.index("{", span.start) + 1
            return Edit(opening, opening, entry)
        end = max(child.end for _, child in entries)
        return Edit(end, end, ", " + entry)
    first = layout.first_key(path)
    column = layout.column(first if first is not None else span.start)
    lines = _entry(key, value, column, layout)
    return _after_lines(layout, span.end, lines)


def _insert_items(layout: Layout, path: Path, index: int, items: list[Any]) -> Edit:
    span = layout.table[path]
    entries = layout.children.get(path, [])
    if span.flow:
        return _insert_flow_items(layout, span, entries, index, items)
    dashes = [child.key for _, child in entries]
    if not entries or dashes[0] is None:
        raise Unplaceable(f"{dotted(path)}: its items cannot be told apart")
    column = layout.column(dashes[0])
    if all(child.flow and child.kind != SCALAR for _, child in entries):  # `- {key: ...}`
        lines = [" " * column + "- " + _flow(item, layout.quote) for item in items]
    else:
        lines = [line for item in items for line in _item(item, column, layout)]
    if index < len(entries):
        dash = dashes[index]
        assert dash is not None
        start = layout.text.rfind("\n", 0, dash) + 1
        if layout.text[start:dash].strip():  # another node before it on its line (`- - x`)
            raise Unplaceable(f"{dotted((*path, index))} does not start its line")
        return Edit(start, start, "".join(line + "\n" for line in lines))
    return _after_lines(layout, span.end, lines)


def _insert_flow_items(layout: Layout, span: Span, entries: list[tuple[Path, Span]],
                       index: int, items: list[Any]) -> Edit:
    written = ", ".join(_flow(item, layout.quote) for item in items)
    if not entries:
        opening = layout.text.index("[", span.start) + 1
        return Edit(opening, opening, written)
    if index < len(entries):
        at = entries[index][1].start
        return Edit(at, at, written + ", ")
    end = entries[-1][1].end
    return Edit(end, end, ", " + written)


def _after_lines(layout: Layout, end: int, lines: list[str]) -> Edit:
    """Insert ``lines`` after the line where a block node's content ends."""
    text = layout.text
    if end > 0 and text[end - 1] == "\n":  # a block scalar ends at the start of a line
        return Edit(end, end, "".join(line + "\n" for line in lines))
    newline = text.find("\n", end)
    if newline == -1:  # the last line of a file without a final newline
        return Edit(len(text), len(text), "".join("\n" + line for line in lines))
    return Edit(newline + 1, newline + 1, "".join(line + "\n" for line in lines))


# --- new text in the document's style ----------------------------------------------------------

def _entry(key: Any, value: Any, column: int, layout: Layout) -> list[str]:
    """``key: value`` as block lines at ``column``."""
    head = " " * column + _scalar(key, layout.quote) + ":"
    if isinstance(value, dict) and value:
        return [head, *(line for k, v in value.items()
                        for line in _entry(k, v, column + layout.step, layout))]
    if isinstance(value, list) and any(isinstance(item, dict | list) for item in value):
        return [head, *(line for item in value
                        for line in _item(item, column + layout.list_indent, layout))]
    return [f"{head} {_flow(value, layout.quote)}"]


def _item(value: Any, column: int, layout: Layout) -> list[str]:
    """``- value`` as block lines, the dash at ``column``."""
    if isinstance(value, dict) and value:
        lines = [line for k, v in value.items() for line in _entry(k, v, column + 2, layout)]
        return [" " * column + "- " + lines[0][column + 2:], *lines[1:]]
    return [" " * column + "- " + _flow(value, layout.quote)]


def _flow(value: Any, quote: str) -> str:
    """A value in flow style on one line (scalars as YAML writes them: quoted when needed)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k, quote)}: {_flow(v, quote)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item, quote) for item in value) + "]"
    return _scalar(value, quote)


def _scalar(value: Any, quote: str) -> str:
    """A scalar as a flow-context YAML scalar that reads back as ``value``; a string that
    needs quotes gets the document's (``quote``)."""
    dumped = flow_scalar(value)
    if isinstance(value, str) and dumped.startswith("'") and quote == '"':
        return json.dumps(value, ensure_ascii=False)
    return dumped


def _replacement(value: Any, style: str | None, quote: str) -> str:
    """A scalar replacing one written with ``style``: a string keeps its quotes."""
    if isinstance(value, str) and style == '"':
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and style == "'":
        return "'" + value.replace("'", "''") + "'"
    return _scalar(value, quote)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    return "a list" if isinstance(value, list) else "a scalar"


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``True`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)




def remove(layout: Layout, path: Path) -> list[Edit]:
    """The edit that removes the mapping entry at ``path`` (its lines, in a block mapping; the
    entry and one comma, in a flow mapping)."""
    span = layout.table.get(path)
    parent = layout.table.get(path[:-1])
    if span is None or parent is None or parent.kind != MAPPING or span.key is None:
        raise Unplaceable(f"{dotted(path)} is not a key written in this place")
    entries = layout.children.get(path[:-1], [])
    if len(entries) < 2 or parent.merges:
        raise Unplaceable(f"{dotted(path[:-1])} would be left without its own keys")
    at = next(i for i, (child, _) in enumerate(entries) if child == path)
    text = layout.text
    if parent.flow:
        if at + 1 < len(entries):
            following = entries[at + 1][1].key
            assert following is not None
            return [Edit(span.key, following, "")]
        return [Edit(entries[at - 1][1].end, span.end, "")]
    start = text.rfind("\n", 0, span.key) + 1
    if text[start:span.key].strip():
        raise Unplaceable(f"{dotted(path)} does not start its line")
    end = text.find("\n", span.end)
    return [Edit(start, len(text) if end == -1 else end + 1, "")]
