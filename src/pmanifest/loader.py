"""The only module that parses YAML.

Documents come back with a side table of 1-based positions for every key and value. Parsing
uses PyYAML's C composer where present, and only ever builds plain data (dict, list, str, int,
float, bool, None): no tag can construct a Python object. Alias expansion and nesting depth are
bounded, so hostile input fails fast instead of eating memory.

A file is split at its ``---`` document markers before parsing, so a syntax error in one
document does not hide the documents after it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from pmanifest.document import Path, Pos, Positions, RawTables

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
# Above this many characters a document's positions are looked up path by path (a second
# parse per batch of findings) instead of being tabled whole (~250 bytes per node).
LOCATE_ABOVE = 256 * 1024
MAX_ALIAS_EXPANSION = 100_000
# Every node's position is keyed by its full path, so a node costs memory in proportion to its
# depth: 1,000,000 items nested 198 levels deep (a 2 MB file) took 2 GB and 24 s. The sum of
# path lengths of a document ("cells") is bounded by its size, with a floor that no real
# manifest reaches (a 12 MB List of 40,000 Pods uses about 7M cells).
MAX_CELLS_PER_CHAR = 4
MIN_MAX_CELLS = 4_000_000

_TAG = "tag:yaml.org,2002:"
_PLAIN_TAGS = {_TAG + "str", _TAG + "timestamp", _TAG + "binary"}
_CONSTRUCTED_TAGS = {_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"}
_STR = _TAG + "str"
_RESOLVER = Resolver()
_RESOLVED: dict[tuple[str, Any], str] = {}


_MAY_RESOLVE = frozenset(_RESOLVER.yaml_implicit_resolvers)  # first characters with a regex
_CACHE_LIMIT = 4096


def _resolve_plain(value: str, implicit: Any) -> str:
    """The implicit tag of an untagged scalar. Only a plain scalar whose first character can
    start a non-string (a digit, ``t``rue, ``n``ull, ...) needs regexes; those results are
    cached (manifests repeat their words), in a small bounded cache."""
    if not implicit[0]:
        return _STR  # quoted: a string whatever it looks like
    if (value[:1] if value else "") not in _MAY_RESOLVE:
        return _STR
    key = (value, implicit)
    tag = _RESOLVED.get(key)
    if tag is None:
        tag = _RESOLVER.resolve(ScalarNode, value, implicit)  # type: ignore[no-untyped-call]
        if len(_RESOLVED) >= _CACHE_LIMIT:
            _RESOLVED.clear()
        _RESOLVED[key] = tag
    return tag


_DOC_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)


class YamlProblem(Exception):
    """Why a document could not be turned into data, with its 1-based position."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.templated = False  # the document holds ``{{ }}``: callers may say what it means


@dataclass(frozen=True)
class Loaded:
    """One parsed document: its data (None for an empty document) and its positions."""

    index: int
    data: Any
    positions: Positions
    start_line: int


@dataclass(frozen=True)
class Broken:
    """One document that could not be parsed."""

    index: int
    problem: YamlProblem


def decode(raw: bytes) -> str:
    """Bytes to text: UTF-8 (a BOM is dropped), or a YamlProblem at the first bad byte."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlProblem("file is not valid UTF-8 text", line, column) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        raise YamlProblem("file contains NUL bytes (binary data?)", line, 1)
    return text.replace("\r\n", "\n")


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """Yield (0-based first line, text) for each document between ``---`` markers."""
    start = 0
    start_line = 0
    counted_to = 0  # lines are counted incrementally: one pass over the text in all
    for match in _DOC_MARKER.finditer(text):
        if _only_directives(text[start : match.start()]):
            continue  # `%YAML 1.1` / `%TAG` belong to the document after the marker
        yield start_line, text[start : match.start()]
        start_line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        # keep the marker line itself (blanked) so that columns after "--- " stay right
        start = match.start()
        if match.group(1) == "...":
            start = match.end()
    yield start_line, text[start:]


def load_documents(text: str) -> Iterator[Loaded | Broken]:
    """Parse every document of a (decoded) YAML stream, one at a time."""
    index = 0
    for first_line, chunk in split_documents(text):
        if _only_comments(chunk):
            continue  # a marker-only or comment-only chunk is not a document
        fix = _line_fixer(chunk, first_line)
        try:
            built = _Builder(first_line, record=False).run(chunk)
        except YamlProblem as problem:
            problem.templated = "{{" in chunk
            if fix is not None:
                problem.line, problem.column = fix(problem.line, problem.column)
            yield Broken(index, problem)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = (mark.line if mark else 0) + first_line + 1
            column = (mark.column if mark else 0) + 1
            if fix is not None:
                line, column = fix(line, column)
            found = YamlProblem(exc.problem or exc.context or "invalid YAML", line, column)
            found.templated = "{{" in chunk
            yield Broken(index, found)
        except yaml.YAMLError as exc:
            yield Broken(index, YamlProblem(str(exc).splitlines()[0], first_line + 1, 1))
        else:
            if built is None:
                continue
            data, _ = built
            if len(chunk) > LOCATE_ABOVE:
                positions = Positions(locate=functools.partial(_located, chunk, first_line, fix))
            else:
                build = functools.partial(_positions_of, chunk, first_line, fix)
                positions = Positions(build=build)
            yield Loaded(index, data, positions, first_line + 1)
        index += 1


def _only_directives(chunk: str) -> bool:
    lines = [line.strip() for line in chunk.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    return bool(lines) and all(line.startswith("%") for line in lines)


_ODD_BREAKS = re.compile("[\r\x85\u2028\u2029]")
_YAML_BREAKS = re.compile("\n|[\r\x85\u2028\u2029]")


def _line_fixer(chunk: str, first_line: int) -> Callable[[int, int], tuple[int, int]] | None:
    """YAML also breaks lines at CR, NEL, LS and PS; the file's lines (and editors) only at LF.
    When a chunk has such characters, map the parser's (line, column) to the file's."""
    if not _ODD_BREAKS.search(chunk):
        return None
    starts = [0] + [m.end() for m in _YAML_BREAKS.finditer(chunk)]

    def fix(line: int, column: int) -> tuple[int, int]:
        k = line - first_line - 1
        if not 0 <= k < len(starts):
            return line, column
        start = starts[k]
        file_line = first_line + 1 + chunk.count("\n", 0, start)
        return file_line, column + start - (chunk.rfind("\n", 0, start) + 1)

    return fix


def _located(
    chunk: str, first_line: int, fix: Callable[[int, int], tuple[int, int]] | None,
    wanted: frozenset[Path],
) -> RawTables:
    return _positions_of(chunk, first_line, fix, wanted)


def _positions_of(
    chunk: str, first_line: int, fix: Callable[[int, int], tuple[int, int]] | None,
    wanted: frozenset[Path] | None = None,
) -> RawTables:
    """The position tables of a document that already parsed once (so this cannot fail):
    all of them, or only the ``wanted`` paths."""
    builder = _Builder(first_line, record=True, wanted=wanted)
    builder.run(chunk)
    keys, values, scalars = builder.keys, builder.values, builder.scalars
    if fix is not None:
        for table in (keys, values):
            for path, (line, column) in table.items():
                table[path] = fix(line, column)
        for path, (line, column, style) in scalars.items():
            scalars[path] = (*fix(line, column), style)
    return keys, values, scalars


def _only_comments(chunk: str) -> bool:
    for line in chunk.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped not in ("---", "..."):
            return False
    return True


def load_single(text: str) -> Loaded:
    """Parse text that must hold exactly one document (a spec or config file)."""
    docs = [d for d in load_documents(text)]
    for doc in docs:
        if isinstance(doc, Broken):
            raise doc.problem
    loaded = [d for d in docs if isinstance(d, Loaded)]
    if not loaded:
        raise YamlProblem("file is empty", 1, 1)
    if len(loaded) > 1:
        raise YamlProblem("expected one YAML document, found several", loaded[1].start_line, 1)
    return loaded[0]


class _Discard(dict[Any, Any]):
    """A table that keeps nothing: the builder's sink when only the data is wanted."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class _Wanted(dict[Any, Any]):
    """A table that keeps only the paths asked for."""

    def __init__(self, wanted: frozenset[Path]) -> None:
        super().__init__()
        self.wanted = wanted

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self.wanted:
            super().__setitem__(key, value)


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = ("anchor", "depth", "key", "merges", "path", "pending_key", "size", "value")

    def __init__(self, value: dict[Any, Any] | list[Any], path: Path, anchor: str | None) -> None:
        self.value = value
        self.path = path
        self.anchor = anchor
        self.pending_key: Any = _NO_KEY  # mappings: the key waiting for its value
        self.key: Any = None
        self.merges: list[dict[Any, Any]] = []
        self.size = 1  # nodes in this subtree, alias expansions included
        self.depth = len(path) + 1  # path length (cells) of each child


_NO_KEY = object()
_MERGE = object()


class _Builder:
    """Builds plain data and positions straight from parser events.

    Working from events (libyaml's parser is iterative) instead of a composed node graph means
    no recursion anywhere, so deep nesting fails cleanly at MAX_DEPTH instead of overflowing
    the C stack; aliases share the anchored value and count its size against a budget.
    The common event (a plain or quoted string as a mapping key or value) is handled inline in
    ``run``: this loop is most of the cost of linting.
    """

    def __init__(
        self, line_offset: int, record: bool = True, wanted: frozenset[Path] | None = None
    ) -> None:
        self.offset = line_offset
        self.record = record  # False: data only (positions are built again on demand)
        if not record:
            table: Callable[[], dict[Any, Any]] = _Discard
        elif wanted is not None:  # only these paths (a very large document)
            table = functools.partial(_Wanted, wanted)
        else:
            table = dict
        self.keys: dict[Path, tuple[int, int]] = table()
        self.values: dict[Path, tuple[int, int]] = table()
        self.scalars: dict[Path, tuple[int, int, str | None]] = table()
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, subtree size)
        self.expanded = 0
        self.constructor = SafeConstructor()
        self.stack: list[_Frame] = []
        self.root: Any = _NO_KEY
        self.cells = 0  # sum of the path lengths recorded so far
        self.max_cells = MIN_MAX_CELLS

    def pos(self, mark: Any) -> Pos:
        return Pos(mark.line + self.offset + 1, mark.column + 1)

    def raw_pos(self, mark: Any) -> tuple[int, int]:
        return (mark.line + self.offset + 1, mark.column + 1)

    def run(self, chunk: str) -> tuple[Any, Positions] | None:
        self.max_cells = max(MIN_MAX_CELLS, MAX_CELLS_PER_CHAR * len(chunk))
        parser = _Loader(chunk)
        try:
            get_event = parser.get_event
            stack = self.stack
            keys, values, scalars = self.keys, self.values, self.scalars
            offset = self.offset + 1
            resolve = _resolve_plain
            record = self.record
            event: Any = None
            while True:
                try:
                    event = get_event()
                except yaml.MarkedYAMLError as exc:
                    if "nesting depth" in str(exc.problem):  # libyaml's own limit (>= 6.0.4)
                        raise self.too_deep(chunk, event, exc) from None
                    raise
                kind = type(event)
                if kind is ScalarEvent:
                    if stack and not event.anchor:
                        frame = stack[-1]
                        tag = event.tag
                        if tag is None or tag == "!":
                            tag = resolve(event.value, event.implicit)
                        if tag == _STR and type(frame.value) is dict:
                            mark = event.start_mark
                            where = (mark.line + offset, mark.column + 1)
                            pending = frame.pending_key
                            if pending is _NO_KEY:  # a plain string key
                                key = event.value
                                if key in frame.value:
                                    raise YamlProblem(f"duplicate key {key!r}", *where)
                                frame.pending_key = key
                                if record:
                                    keys[(*frame.path, key)] = where
                                continue
                            if pending is not _MERGE:  # a string value
                                if record:
                                    path = (*frame.path, pending)
                                    values[path] = where
                                    scalars[path] = (where[0], where[1], event.style or None)
                                frame.value[pending] = event.value
                                frame.size += 1
                                frame.pending_key = _NO_KEY
                                self.cells += frame.depth
                                if self.cells > self.max_cells:
                                    raise self.too_big(mark)
                                continue
                    self.scalar(event)
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    self.start(event, kind is MappingStartEvent)
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    self.end()
                elif kind is AliasEvent:
                    self.alias(event)
                elif kind is StreamEndEvent or event is None:
                    break
        finally:
            parser.dispose()
        if self.root is _NO_KEY:
            return None
        return self.root, Positions(self.keys, self.values, self.scalars)

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
            self.keys[path] = self.raw_pos(start_mark)
            return path, True
        if frame.pending_key is _NO_KEY:
            return frame.path, False
        key = frame.pending_key
        return (frame.path if key is _MERGE else (*frame.path, key)), True

    def too_deep(self, chunk: str, last: Any, exc: Any) -> YamlProblem:
        """Our depth limit, where libyaml's own (deeper) one stopped its look-ahead first: the
        opening bracket that takes the document past MAX_DEPTH, counted from the last event
        received, so the report does not depend on the libyaml version."""
        message = f"document is nested more than {MAX_DEPTH} levels deep"
        start = last.end_mark.index if last is not None else 0
        spare = MAX_DEPTH + 1 - len(self.stack)
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
                    return YamlProblem(message, line + self.offset + 1, column + 1)
            elif char in "]}":
                depth -= 1
            i += 1
        mark = exc.problem_mark
        return YamlProblem(message, *(self.pos(mark) if mark is not None else (1, 1)))

    def too_big(self, mark: Any) -> YamlProblem:
        return YamlProblem(f"document too large for its nesting depth (more than "
                           f"{self.max_cells:,} path entries; a YAML bomb?)", *self.pos(mark))

    def attach(self, value: Any, size: int, mark: Any) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.size += size
        if isinstance(frame.value, list):
            frame.value.append(value)
            return
        if frame.pending_key is _MERGE:
            self.merge(frame, value, mark)
        else:
            frame.value[frame.pending_key] = value
        frame.pending_key = _NO_KEY

    def set_key(self, frame: _Frame, key: Any, mark: Any) -> None:
        if not isinstance(frame.value, dict):  # pragma: no cover - lists have no keys
            return
        if key in frame.value:
            raise YamlProblem(f"duplicate key {key!r}", *self.pos(mark))
        frame.pending_key = key
        self.keys[(*frame.path, key)] = self.raw_pos(mark)

    def merge(self, frame: _Frame, value: Any, mark: Any) -> None:
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                raise YamlProblem("a merge key (<<) needs a mapping or a list of mappings",
                                  *self.pos(mark))
            frame.merges.append(source)

    # -- events ------------------------------------------------------------------------------
    def scalar(self, event: Any) -> None:
        path, is_value = self.child_path(event.start_mark)
        tag = event.tag
        if tag is None or tag == "!":
            tag = _resolve_plain(event.value, event.implicit)
        if not is_value:
            frame = self.stack[-1]
            if tag == _TAG + "merge":
                frame.pending_key = _MERGE
                return
            key = self.convert(tag, event)
            if isinstance(key, float | bool) or key is None:
                key = event.value
            self.set_key(frame, key, event.start_mark)
            return
        where = self.raw_pos(event.start_mark)
        self.values[path] = where
        if tag in _PLAIN_TAGS:
            self.scalars[path] = (where[0], where[1], event.style or None)
        value = self.convert(tag, event)
        if event.anchor:
            self.anchors[event.anchor] = (value, 1)
        self.attach(value, 1, event.start_mark)

    def convert(self, tag: str, event: Any) -> Any:
        if tag in _PLAIN_TAGS:
            return event.value
        if tag in _CONSTRUCTED_TAGS:
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            try:
                return self.constructor.construct_object(node, deep=False)
            except (yaml.YAMLError, ValueError, OverflowError):
                raise YamlProblem(f"invalid value for {tag}", *self.pos(event.start_mark)) from None
        raise YamlProblem(f"unsupported YAML tag {tag!r}", *self.pos(event.start_mark))

    def start(self, event: Any, is_mapping: bool) -> None:
        path, is_value = self.child_path(event.start_mark)
        if not is_value:
            raise YamlProblem("mapping keys must be scalars", *self.pos(event.start_mark))
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem(f"document is nested more than {MAX_DEPTH} levels deep",
                              *self.pos(event.start_mark))
        expected = _TAG + ("map" if is_mapping else "seq")
        if event.tag not in (None, "!", expected):
            raise YamlProblem(f"unsupported YAML tag {event.tag!r}", *self.pos(event.start_mark))
        self.values[path] = self.raw_pos(event.start_mark)
        container: dict[Any, Any] | list[Any] = {} if is_mapping else []
        frame = _Frame(container, path, event.anchor)
        frame.key = event.start_mark
        self.stack.append(frame)

    def end(self) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges and isinstance(value, dict):
            for source in frame.merges:
                for key, item in source.items():
                    value.setdefault(key, item)
        if frame.anchor:
            self.anchors[frame.anchor] = (value, frame.size)
        self.attach(value, frame.size, frame.key)

    def alias(self, event: Any) -> None:
        path, is_value = self.child_path(event.start_mark)
        if event.anchor not in self.anchors:
            raise YamlProblem(f"unknown or recursive alias *{event.anchor}",
                              *self.pos(event.start_mark))
        value, size = self.anchors[event.anchor]
        self.expanded += size
        if self.expanded > MAX_ALIAS_EXPANSION:
            raise YamlProblem("too many alias expansions (a YAML bomb?)",
                              *self.pos(event.start_mark))
        if not is_value:
            if isinstance(value, dict | list):
                raise YamlProblem("mapping keys must be scalars", *self.pos(event.start_mark))
            self.set_key(self.stack[-1], value, event.start_mark)
            return
        self.values[path] = self.raw_pos(event.start_mark)
        self.attach(value, size, event.start_mark)
