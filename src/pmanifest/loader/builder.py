"""Plain data (and, on request, positions) straight from libyaml's parser events, with the
bounds that keep hostile input cheap: nesting depth, alias expansion, path cells."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

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

from pmanifest.io import limits
from pmanifest.io.limits import MAX_DEPTH, TooLong, bounded_integer
from pmanifest.loader.events import (
    CONSTRUCTED_TAGS,
    FAST_LOADER,
    PLAIN_TAGS,
    STR,
    TAG,
    SurrogateLoader,
    as_key,
    is_merge_key,
    needs_python_parser,
    plain_scalar,
    resolve_plain,
)
from pmanifest.loader.parts import (
    NO_KEY,
    Anchor,
    Discard,
    Frame,
    Wanted,
    YamlProblem,
    too_deep,
)
from pmanifest.loader.positions import Path, Pos, Positions

# Above this many characters a document's positions are looked up path by path (a second
# parse per batch of findings) instead of being tabled whole (~250 bytes per node).
LOCATE_ABOVE = 256 * 1024


_NO_KEY = NO_KEY
_MERGE = object()
_MAP, _SEQ, _INT = TAG + "map", TAG + "seq", TAG + "int"
_NONSPECIFIC = (None, "!")  # tags that leave a scalar's tag to resolution


def _skip(event: Any) -> None:
    """Stream and document events: nothing to build."""


class DocumentBuilder:
    """Builds plain data and positions straight from parser events.

    Working from events (libyaml's parser is iterative) instead of a composed node graph means
    no recursion anywhere, so deep nesting fails cleanly at MAX_DEPTH instead of overflowing
    the C stack; aliases share the anchored value and count its size against a budget.
    The common event (a plain or quoted string as a mapping key or value) is handled inline in
    ``data_only``: that loop is most of the cost of linting.
    """

    def __init__(
        self, line_offset: int, record: bool = True, wanted: frozenset[Path] | None = None,
        resolve: Callable[[str, Any], str] = resolve_plain,
    ) -> None:
        self.resolve = resolve  # the implicit tag of a plain scalar (kubectl's, kustomize's)
        self.offset = line_offset
        self.record = record  # False: data only (positions are built again on demand)
        self.wanted = wanted
        self.loader = FAST_LOADER  # SurrogateLoader when libyaml refused a surrogate pair
        self.reset()

    def reset(self) -> None:
        """Empty tables and state, for a (second) parse."""
        if not self.record:
            table: Callable[[], dict[Any, Any]] = Discard
        elif self.wanted is not None:  # only these paths (a very large document)
            table = functools.partial(Wanted, self.wanted)
        else:
            table = dict
        self.keys: dict[Path, tuple[int, int]] = table()
        self.values: dict[Path, tuple[int, int]] = table()
        self.scalars: dict[Path, tuple[int, int, str | None]] = table()
        self.anchors: dict[str, Anchor] = {}
        self.expanded = 0
        self.constructor = SafeConstructor()
        self.stack: list[Frame] = []
        self.root: Any = _NO_KEY
        self.cells = 0  # sum of the path lengths recorded so far
        self.tag_problem: YamlProblem | None = None  # the first unsupported tag
        self.max_cells = limits.MIN_MAX_CELLS

    def pos(self, mark: Any) -> Pos:
        return Pos(mark.line + self.offset + 1, mark.column + 1)

    def raw_pos(self, mark: Any) -> tuple[int, int]:
        return (mark.line + self.offset + 1, mark.column + 1)

    def run(self, chunk: str) -> tuple[Any, Positions] | None:
        try:
            return self.parse(chunk)
        except yaml.MarkedYAMLError as exc:
            if self.loader is not FAST_LOADER or not needs_python_parser(exc, chunk):
                raise
        self.loader = SurrogateLoader
        self.reset()
        return self.parse(chunk)

    def parse(self, chunk: str) -> tuple[Any, Positions] | None:
        self.max_cells = max(limits.MIN_MAX_CELLS, limits.MAX_CELLS_PER_CHAR * len(chunk))
        parser = self.loader(chunk)
        self.last: Any = None
        try:
            (self.recorded if self.record else self.data_only)(parser)
        except yaml.MarkedYAMLError as exc:
            if "nesting depth" in str(exc.problem):  # libyaml's own limit (>= 6.0.4)
                raise self.too_deep(chunk, self.last, exc) from None
            raise
        finally:
            parser.dispose()
        if self.root is _NO_KEY:
            return None
        return self.root, Positions(self.keys, self.values, self.scalars)

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        return {MappingStartEvent: self.start, SequenceStartEvent: self.start,
                MappingEndEvent: self.end, SequenceEndEvent: self.end, AliasEvent: self.alias}

    def data_only(self, parser: Any) -> None:
        """The event loop of the first parse (data, no positions): most of the cost of
        linting. The common event, a plain or quoted string as a mapping key or value, is
        handled inline."""
        stack = self.stack
        handler = self.handlers().get
        resolve = self.resolve
        event: Any = None
        try:
            for event in iter(parser.get_event, None):
                kind = type(event)
                if kind is not ScalarEvent:
                    handler(kind, _skip)(event)
                    continue
                frame = stack[-1] if stack else None
                tag = event.tag
                if tag in _NONSPECIFIC:
                    tag = resolve(event.value, event.implicit)
                if frame is None or tag != STR or event.anchor or type(frame.value) is not dict \
                        or frame.pending_key is _MERGE or event.value == "<<":  # (a merge?)
                    self.scalar(event)
                elif frame.pending_key is _NO_KEY:  # a string key
                    key = event.value
                    if key in frame.value:
                        raise YamlProblem(f"duplicate key {key!r}", *self.pos(event.start_mark))
                    frame.pending_key = key
                else:  # a string value
                    frame.value[frame.pending_key] = event.value
                    frame.size += 1
                    frame.pending_key = _NO_KEY
                    self.cells += frame.depth
                    if self.cells > self.max_cells:
                        raise self.too_big(event.start_mark)
        except yaml.MarkedYAMLError:
            self.last = event  # the last event received, for the depth error's position
            raise

    def recorded(self, parser: Any) -> None:
        """The event loop of a parse that records positions (strings through ``string``)."""
        handler = self.handlers().get
        stack = self.stack
        string = self.string
        event: Any = None
        try:
            for event in iter(parser.get_event, None):
                if type(event) is not ScalarEvent:
                    handler(type(event), _skip)(event)
                    continue
                if stack and not event.anchor and type(stack[-1].value) is dict:
                    tag = event.tag
                    if tag in _NONSPECIFIC:
                        tag = self.resolve(event.value, event.implicit)
                    if tag == STR and string(stack[-1], event):
                        continue
                self.scalar(event)
        except yaml.MarkedYAMLError:
            self.last = event
            raise

    def string(self, frame: Frame, event: Any) -> bool:
        """A string key or value of the mapping being built, and its position (False: a merge)."""
        mark = event.start_mark
        where = (mark.line + self.offset + 1, mark.column + 1)
        pending = frame.pending_key
        if pending is _NO_KEY:  # a plain string key
            key = event.value
            if key == "<<" and is_merge_key(event):
                return False
            if key in frame.value:
                raise YamlProblem(f"duplicate key {key!r}", *where)
            frame.pending_key = key
            self.keys[(*frame.path, key)] = where
            return True
        if pending is _MERGE:
            return False
        path = (*frame.path, pending)
        self.values[path] = where
        self.scalars[path] = (where[0], where[1], event.style or None)
        frame.value[pending] = event.value
        frame.size += 1
        frame.pending_key = _NO_KEY
        self.cells += frame.depth
        if self.cells > self.max_cells:
            raise self.too_big(mark)
        return True

    # -- where a new value goes ------------------------------------------------------------
    def child_path(self, start_mark: Any) -> tuple[Path, bool]:
        """The path of the value about to be attached; False if it is a mapping key."""
        if not self.stack:
            self.keys[()] = self.raw_pos(start_mark)
            return (), True
        frame = self.stack[-1]
        self.cells += frame.depth
        if self.cells > self.max_cells:
            raise self.too_big(start_mark)
        if isinstance(frame.value, list):
            path = (*frame.path, len(frame.value))
            if self.record:  # (a data-only parse records nothing)
                self.keys[path] = self.raw_pos(start_mark)
            return path, True
        if frame.pending_key is _NO_KEY:
            return frame.path, False
        key = frame.pending_key
        return (frame.path if key is _MERGE else (*frame.path, key)), True

    def too_deep(self, chunk: str, last: Any, exc: Any) -> YamlProblem:
        return too_deep(chunk, last, exc, MAX_DEPTH + 1 - len(self.stack), self.offset,
                        MAX_DEPTH)

    def too_big(self, mark: Any) -> YamlProblem:
        return YamlProblem(f"document too large for its nesting depth (more than "
                           f"{self.max_cells:,} path entries; a YAML bomb?)", *self.pos(mark))

    def attach(self, value: Any, size: int, mark: Any, height: int = 0) -> None:
        """Attach ``size`` nodes of ``height`` levels (0: a scalar; merged: not one more)."""
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.size += size
        if type(frame.value) is list:
            frame.value.append(value)
        elif frame.pending_key is _MERGE:
            frame.height = max(frame.height, height)
            self.merge(frame, value, mark)
            frame.pending_key = _NO_KEY
            return
        else:
            frame.value[frame.pending_key] = value
            frame.pending_key = _NO_KEY
        if height >= frame.height:
            frame.height = height + 1

    def set_key(self, frame: Frame, key: Any, mark: Any) -> None:
        if not isinstance(frame.value, dict):  # pragma: no cover - lists have no keys
            return
        if key in frame.value:
            raise YamlProblem(f"duplicate key {key!r}", *self.pos(mark))
        frame.pending_key = key
        if self.record:
            self.keys[(*frame.path, key)] = self.raw_pos(mark)

    def merge(self, frame: Frame, value: Any, mark: Any) -> None:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(source, dict) for source in sources):
            raise YamlProblem("a merge key (<<) needs a mapping or a list of mappings",
                              *self.pos(mark))
        if frame.merges is None:
            frame.merges = []
        frame.merges.extend(sources)

    # -- events ------------------------------------------------------------------------------
    def scalar(self, event: Any) -> None:
        path, is_value = self.child_path(event.start_mark)
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(event.value, event.implicit)
        if not is_value:
            frame = self.stack[-1]
            if is_merge_key(event):
                frame.pending_key = _MERGE
                return
            value = self.convert(tag, event)
            key = as_key(value, event.value)
            if event.anchor:
                self.anchors[event.anchor] = Anchor(value, 1, 0, key)
            self.set_key(frame, key, event.start_mark)
            return
        if self.record:
            where = self.raw_pos(event.start_mark)
            self.values[path] = where
            if tag in PLAIN_TAGS:
                self.scalars[path] = (where[0], where[1], event.style or None)
        value = self.convert(tag, event)
        if event.anchor:
            self.anchors[event.anchor] = Anchor(value, 1, 0, as_key(value, event.value))
        self.attach(value, 1, event.start_mark)

    def convert(self, tag: str, event: Any) -> Any:
        if tag in PLAIN_TAGS:
            return event.value
        if tag in CONSTRUCTED_TAGS:
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            construct = self.constructor.construct_object
            try:
                if event.tag in _NONSPECIFIC:  # resolved as kubectl resolves it, value too
                    return plain_scalar(tag, event.value)
                if tag == _INT:  # bounded before it is converted, in any base
                    return bounded_integer(node.value, lambda _: construct(node, deep=False))
                return construct(node, deep=False)
            except TooLong as exc:
                raise YamlProblem(str(exc), *self.pos(event.start_mark)) from None
            except (yaml.YAMLError, ValueError, OverflowError):
                raise YamlProblem(f"invalid value for {tag}", *self.pos(event.start_mark)) from None
        return self.unsupported(tag, event.start_mark, event.value)

    def unsupported(self, tag: str, mark: Any, value: Any) -> Any:
        """A tag no plain data has (``!Ref``, ``!!python/name:...``, ``!!set``): the first
        is kept as the document's ``tag_problem`` and the node read as if untagged (its text,
        for a scalar), so the document's shape still tells whether it is a Kubernetes object
        (where the tag is an error) or some other tool's file."""
        if self.tag_problem is None:
            self.tag_problem = YamlProblem(f"unsupported YAML tag {tag!r}", *self.pos(mark))
        return value

    def start(self, event: Any) -> None:
        is_mapping = type(event) is MappingStartEvent
        path, is_value = self.child_path(event.start_mark)
        if not is_value:
            raise YamlProblem("mapping keys must be scalars", *self.pos(event.start_mark))
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem(f"document is nested more than {MAX_DEPTH} levels deep",
                              *self.pos(event.start_mark))
        if event.tag is not None and event.tag not in ("!", _MAP if is_mapping else _SEQ):
            self.unsupported(event.tag, event.start_mark, None)
        if self.record:
            self.values[path] = self.raw_pos(event.start_mark)
        container: dict[Any, Any] | list[Any] = {} if is_mapping else []
        frame = Frame(container, path, event.anchor)
        frame.key = event.start_mark
        self.stack.append(frame)

    def end(self, event: Any = None) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges and isinstance(value, dict):
            for source in frame.merges:
                for key, item in source.items():
                    value.setdefault(key, item)
        if frame.anchor:
            self.anchors[frame.anchor] = Anchor(value, frame.size, frame.height, None)
        self.attach(value, frame.size, frame.key, frame.height)

    def alias(self, event: Any) -> None:
        path, is_value = self.child_path(event.start_mark)
        if event.anchor not in self.anchors:
            raise YamlProblem(f"unknown or recursive alias *{event.anchor}",
                              *self.pos(event.start_mark))
        anchor = self.anchors[event.anchor]
        self.expanded += anchor.size
        if self.expanded > limits.MAX_ALIAS_EXPANSION:
            raise YamlProblem("too many alias expansions (a YAML bomb?)",
                              *self.pos(event.start_mark))
        if not is_value:
            if isinstance(anchor.value, dict | list):
                raise YamlProblem("mapping keys must be scalars", *self.pos(event.start_mark))
            self.set_key(self.stack[-1], anchor.key, event.start_mark)
            return
        # the value's own levels count where it is attached (a merge adds its children)
        merged = 1 if self.stack and self.stack[-1].pending_key is _MERGE else 0
        if len(self.stack) + anchor.height - merged > MAX_DEPTH:
            raise YamlProblem(f"document is nested more than {MAX_DEPTH} levels deep through "
                              f"alias *{event.anchor}", *self.pos(event.start_mark))
        if self.record:
            self.values[path] = self.raw_pos(event.start_mark)
        self.attach(anchor.value, anchor.size, event.start_mark, anchor.height)

