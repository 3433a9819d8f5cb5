"""The only module that parses YAML.

Documents come back with a side table of 1-based positions for every key and value. Parsing
uses PyYAML's C composer where present, and only ever builds plain data (dict, list, str, int,
float, bool, None): no tag can construct a Python object. Alias expansion and nesting depth are
bounded, so hostile input fails fast instead of eating memory.

A file is split at its ``---`` document markers before parsing, so a syntax error in one
document does not hide the documents after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pmanifest.document import Path, Pos, Positions, ScalarInfo

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
MAX_ALIAS_EXPANSION = 100_000

_TAG = "tag:yaml.org,2002:"
_PLAIN_TAGS = {_TAG + "str", _TAG + "timestamp", _TAG + "binary"}
_CONSTRUCTED_TAGS = {_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"}
_DOC_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)


class YamlProblem(Exception):
    """Why a document could not be turned into data, with its 1-based position."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


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
    for match in _DOC_MARKER.finditer(text):
        yield start_line, text[start : match.start()]
        start_line = text.count("\n", 0, match.start())
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
        try:
            node = yaml.compose(chunk, Loader=_Loader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = (mark.line if mark else 0) + first_line + 1
            column = (mark.column if mark else 0) + 1
            message = exc.problem or exc.context or "invalid YAML"
            yield Broken(index, YamlProblem(message, line, column))
            index += 1
            continue
        except yaml.YAMLError as exc:
            yield Broken(index, YamlProblem(str(exc).splitlines()[0], first_line + 1, 1))
            index += 1
            continue
        except RecursionError:
            yield Broken(index, YamlProblem("document is nested too deeply", first_line + 1, 1))
            index += 1
            continue
        if node is None:
            continue
        try:
            data, positions = build(node, first_line)
        except YamlProblem as problem:
            yield Broken(index, problem)
        else:
            yield Loaded(index, data, positions, first_line + 1)
        index += 1


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


class _Builder:
    """Turns a composed node graph into plain data plus a position table."""

    def __init__(self, line_offset: int) -> None:
        self.offset = line_offset
        self.keys: dict[Path, Pos] = {}
        self.values: dict[Path, Pos] = {}
        self.scalars: dict[Path, ScalarInfo] = {}
        self.seen: set[int] = set()
        self.expanded = 0
        self.constructor = SafeConstructor()

    def pos(self, node: Node) -> Pos:
        return Pos(node.start_mark.line + self.offset + 1, node.start_mark.column + 1)

    def build(self, node: Node, path: Path, depth: int) -> Any:
        if depth > MAX_DEPTH:
            line, col = self.pos(node)
            raise YamlProblem(f"document is nested more than {MAX_DEPTH} levels deep", line, col)
        if id(node) in self.seen:
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                line, col = self.pos(node)
                raise YamlProblem("too many alias expansions (a YAML bomb?)", line, col)
        elif not isinstance(node, ScalarNode):
            self.seen.add(id(node))
        self.values.setdefault(path, self.pos(node))
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            self.check_tag(node, _TAG + "seq")
            out: list[Any] = []
            for i, item in enumerate(node.value):
                item_path = (*path, i)
                self.keys.setdefault(item_path, self.pos(item))
                out.append(self.build(item, item_path, depth + 1))
            return out
        if isinstance(node, MappingNode):
            return self.mapping(node, path, depth)
        raise YamlProblem("unsupported YAML node", *self.pos(node))  # pragma: no cover

    def check_tag(self, node: Node, expected: str) -> None:
        if node.tag != expected:
            line, col = self.pos(node)
            raise YamlProblem(f"unsupported YAML tag {node.tag!r}", line, col)

    def scalar(self, node: ScalarNode, path: Path) -> Any:
        if node.tag in _PLAIN_TAGS:
            self.scalars[path] = ScalarInfo(self.pos(node), node.style or None)
        return self.scalar_value(node)

    def scalar_value(self, node: ScalarNode) -> Any:
        tag = node.tag
        if tag in _PLAIN_TAGS:
            return node.value
        if tag in _CONSTRUCTED_TAGS:
            try:
                return self.constructor.construct_object(node, deep=False)
            except (yaml.YAMLError, ValueError, OverflowError):
                line, col = self.pos(node)
                raise YamlProblem(f"invalid value for {tag}", line, col) from None
        line, col = self.pos(node)
        raise YamlProblem(f"unsupported YAML tag {tag!r}", line, col)

    def mapping(self, node: MappingNode, path: Path, depth: int) -> dict[Any, Any]:
        self.check_tag(node, _TAG + "map")
        out: dict[Any, Any] = {}
        merged: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.extend(self.merge_sources(value_node))
                continue
            self.add_entry(out, key_node, value_node, path, depth, explicit=True)
        for key_node, value_node in merged:
            self.add_entry(out, key_node, value_node, path, depth, explicit=False)
        return out

    def merge_sources(self, value: Node) -> list[tuple[Node, Node]]:
        sources = value.value if isinstance(value, SequenceNode) else [value]
        pairs: list[tuple[Node, Node]] = []
        for source in sources:
            if not isinstance(source, MappingNode):
                raise YamlProblem("a merge key (<<) needs a mapping", *self.pos(source))
            self.expanded += len(source.value)
            pairs.extend(source.value)
        return pairs

    def add_entry(
        self, out: dict[Any, Any], key_node: Node, value_node: Node, path: Path, depth: int,
        *, explicit: bool,
    ) -> None:
        if not isinstance(key_node, ScalarNode):
            raise YamlProblem("mapping keys must be scalars", *self.pos(key_node))
        key = self.scalar_value(key_node)
        if isinstance(key, float | bool) or key is None:
            key = key_node.value
        if key in out:
            if not explicit:
                return  # explicit keys win over merged ones
            raise YamlProblem(f"duplicate key {key!r}", *self.pos(key_node))
        child: Path = (*path, key)
        if explicit or child not in self.keys:
            self.keys[child] = self.pos(key_node)
        out[key] = self.build(value_node, child, depth + 1)


def build(node: Node, line_offset: int = 0) -> tuple[Any, Positions]:
    builder = _Builder(line_offset)
    builder.keys[()] = builder.pos(node)
    data = builder.build(node, (), 0)
    return data, Positions(builder.keys, builder.values, builder.scalars)
