"""Where every node of a document is written, for edits that change nothing else (``lint
--fix``): the loader's positions as spans of the text, with how each node is written.

``spans(text)`` parses the text (the same libyaml parser as the loader) and gives, for each
path written in the text, a ``Span``: the offsets of its first and last characters in
``text``, its kind (scalar, mapping, sequence, alias), its style (flow or block, quoted or
plain, literal or folded), its anchor, the offset of its key (a mapping entry) or of its
``-`` (a block sequence item), and whether a mapping merges others (``<<``). Paths reached
only through an alias or a merge key are not in the table: they are written somewhere else,
and an edit there would change every place that uses them. Documents are separated as the
loader separates them (``document_chunks``), each with its offset in the text.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode

from pmanifest.io.limits import TooLong
from pmanifest.loader.documents import split_documents
from pmanifest.loader.events import (
    FAST_LOADER,
    STR,
    as_key,
    is_merge_key,
    plain_scalar,
    resolve_plain,
)
from pmanifest.loader.positions import Path

SCALAR, MAPPING, SEQUENCE, ALIAS = "scalar", "mapping", "sequence", "alias"


class Span(NamedTuple):
    """One node as written: see the module's docstring. ``end`` of a block collection is the
    end of its last descendant (not the comments and blank lines after it)."""

    kind: str
    start: int  # its first character (its anchor or tag, when it has one)
    end: int  # just after its last character
    flow: bool  # a flow collection ({...}, [...]), or a scalar that is not a block scalar
    style: str | None  # a scalar's: None (plain), "'", '"', "|", ">"
    anchor: str | None
    key: int | None  # where its key starts (mapping values), or its "-" (block sequence items)
    merges: bool = False  # a mapping with a << merge key


class Chunk(NamedTuple):
    """One document of a stream: its offset in the text and its own text."""

    offset: int
    text: str


def document_chunks(text: str) -> list[Chunk]:
    """The documents of ``text`` as the loader splits them, each with its offset."""
    chunks = []
    at = 0
    for _, chunk in split_documents(text):
        offset = text.index(chunk, at) if chunk else at
        chunks.append(Chunk(offset, chunk))
        at = offset + len(chunk)
    return chunks


class _Open:
    """A collection being read: its path, where it starts, what it holds so far."""

    __slots__ = ("anchor", "count", "end", "flow", "key", "kind", "merges", "path", "pending",
                 "start")

    def __init__(self, kind: str, path: Path | None, start: int, flow: bool,
                 anchor: str | None, key: int | None) -> None:
        self.kind, self.path, self.start, self.flow = kind, path, start, flow
        self.anchor, self.key = anchor, key
        self.count = 0  # items of a sequence
        self.pending: tuple[Any, int] | None = None  # a mapping's key waiting for its value
        self.merges = False
        self.end = start


def spans(text: str, offset: int = 0) -> dict[Path, Span]:
    """Every path written in ``text`` (one YAML document) with its span; offsets are in the
    whole stream (``offset``: where ``text`` starts in it). yaml.YAMLError if it does not
    parse."""
    table: dict[Path, Span] = {}
    stack: list[_Open] = []
    parser = FAST_LOADER(text)
    try:
        for event in iter(parser.get_event, None):
            _event(event, stack, table, offset, text)
    finally:
        parser.dispose()
    return table


def _event(event: Any, stack: list[_Open], table: dict[Path, Span], offset: int,
           text: str) -> None:
    kind = type(event)
    if kind in (MappingEndEvent, SequenceEndEvent):
        _close(event, stack, table, offset)
    elif kind in (ScalarEvent, MappingStartEvent, SequenceStartEvent, AliasEvent):
        _node(event, stack, table, offset, text)


def _close(event: Any, stack: list[_Open], table: dict[Path, Span], offset: int) -> None:
    done = stack.pop()
    end = event.end_mark.index if done.flow else done.end
    if done.path is not None:  # (None: what a merge key merges, no path of its own)
        table[done.path] = Span(done.kind, done.start + offset, end + offset, done.flow, None,
                                done.anchor, done.key, done.merges)
    if stack:
        stack[-1].end = max(stack[-1].end, end)


def _node(event: Any, stack: list[_Open], table: dict[Path, Span], offset: int,
          text: str) -> None:
    kind = type(event)
    start, end = event.start_mark.index, event.end_mark.index
    parent = stack[-1] if stack else None
    if parent is not None and parent.kind == MAPPING and parent.pending is None:
        if kind in (MappingStartEvent, SequenceStartEvent):  # the loader refuses these too
            raise yaml.YAMLError("mapping keys must be scalars")
        parent.pending = (_key(event), start)
        return
    path, key = _place(parent, text, start, offset)
    if parent is not None:
        parent.end = max(parent.end, end)
        parent.pending = None
    if path is None:  # the value of a merge key, or inside it: written for another path
        assert parent is not None
        parent.merges = parent.merges or parent.path is not None
    if kind in (MappingStartEvent, SequenceStartEvent):  # (key: in the stream's offsets)
        stack.append(_Open(MAPPING if kind is MappingStartEvent else SEQUENCE, path, start,
                           bool(event.flow_style), event.anchor, key))
        stack[-1].end = end
    elif path is not None:
        table[path] = _leaf(event, start + offset, end + offset, key)


def _leaf(event: Any, start: int, end: int, key: int | None) -> Span:
    """The span of a scalar or an alias."""
    if type(event) is AliasEvent:
        return Span(ALIAS, start, end, True, None, None, key)
    return Span(SCALAR, start, end, event.style not in ("|", ">"), event.style or None,
                event.anchor, key)


def _place(parent: _Open | None, text: str, start: int,
           offset: int) -> tuple[Path | None, int | None]:
    """The path of the node about to be read and where its key or dash is, in the stream
    (None: the value of a merge key, which has no path of its own)."""
    if parent is None:
        return (), None
    if parent.path is None:
        return None, None
    if parent.kind == SEQUENCE:
        path = (*parent.path, parent.count)
        parent.count += 1
        dash = None if parent.flow else _dash(text, start)
        return path, None if dash is None else dash + offset
    assert parent.pending is not None
    key, key_start = parent.pending
    if key is _MERGE_KEY:
        return None, None
    return (*parent.path, key), key_start + offset


def _dash(text: str, start: int) -> int | None:
    """The ``-`` before a block sequence item starting at ``start`` (None: not found)."""
    i = start - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i if i >= 0 and text[i] == "-" else None


_MERGE_KEY = object()
_CONSTRUCTOR = SafeConstructor()


def _key(event: Any) -> Any:
    """A mapping key as the loader reads it (the text of ``1.5``, ``yes``, ``null``)."""
    if type(event) is not ScalarEvent:
        return event  # an alias or a collection: no plain key (nothing is edited through it)
    if is_merge_key(event):
        return _MERGE_KEY
    tag = event.tag
    if tag in (None, "!"):
        tag = resolve_plain(event.value, event.implicit)
        if tag != STR:
            try:
                return as_key(plain_scalar(tag, event.value), event.value)
            except (TooLong, ValueError):
                return event.value
    if tag == STR:
        return event.value
    try:
        node = ScalarNode(tag, event.value, None, None, event.style)
        value = _CONSTRUCTOR.construct_object(node, deep=False)
    except (yaml.YAMLError, ValueError, OverflowError):
        return event.value
    return as_key(value, event.value)


def aliased(text: str) -> set[str]:
    """The anchors ``text`` (one document) repeats through an alias, merge keys included."""
    found: set[str] = set()
    parser = FAST_LOADER(text)
    try:
        for event in iter(parser.get_event, None):
            if type(event) is AliasEvent and event.anchor is not None:
                found.add(event.anchor)
    finally:
        parser.dispose()
    return found
