"""Documents with their source positions, and the findings rules produce about them.

Positions live in a side table keyed by path (a tuple of keys and indexes), never inside the
user's data, so every consumer sees exactly the mapping the YAML described.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

Path = tuple[str | int, ...]


class Pos(tuple[int, int]):
    """A 1-based (line, column)."""

    __slots__ = ()

    def __new__(cls, line: int, column: int) -> Pos:
        return super().__new__(cls, (line, column))

    @property
    def line(self) -> int:
        return self[0]

    @property
    def column(self) -> int:
        return self[1]


@dataclass(frozen=True)
class ScalarInfo:
    """Where a string value starts and how it was written (for positions inside it)."""

    pos: Pos
    style: str | None  # None (plain), "'", '"', "|", ">"


_T = TypeVar("_T")


def _split(table: Mapping[Path, _T], prefix: Path) -> dict[str | int, dict[Path, _T]]:
    n = len(prefix)
    out: dict[str | int, dict[Path, _T]] = {}
    for path, value in table.items():
        if len(path) > n and path[:n] == prefix:
            out.setdefault(path[n], {})[path[n + 1:]] = value
    return out


class ScalarTable(Mapping[Path, ScalarInfo]):
    """Read-only view of raw ``(line, column, style)`` entries as ScalarInfo (built on demand:
    the loader records one entry per string, and only a few are ever looked at)."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[Path, tuple[int, int, str | None]]) -> None:
        self._raw = raw

    def __getitem__(self, path: Path) -> ScalarInfo:
        line, column, style = self._raw[path]
        return ScalarInfo(Pos(line, column), style)

    def __iter__(self) -> Iterator[Path]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


RawTables = tuple[
    Mapping[Path, tuple[int, int]],
    Mapping[Path, tuple[int, int]],
    Mapping[Path, tuple[int, int, str | None]],
]


class Positions:
    """Side table of positions: for a mapping entry, the key's position; for a list item or
    the root, the node's own position. ``values`` holds where each value starts. Entries are
    plain ``(line, column)`` tuples, 1-based; accessors return Pos.

    A table may be lazy (``build`` given): most documents produce no finding, so the loader
    only records positions when something asks for one, by parsing the document again."""

    __slots__ = ("_build", "_splits", "_tables")

    def __init__(
        self,
        keys: Mapping[Path, tuple[int, int]] | None = None,
        values: Mapping[Path, tuple[int, int]] | None = None,
        raw_scalars: Mapping[Path, tuple[int, int, str | None]] | None = None,
        *,
        build: Callable[[], RawTables] | None = None,
    ) -> None:
        self._tables: RawTables | None = None
        if build is None:
            self._tables = (keys or {}, values or {}, raw_scalars or {})
        self._build = build
        self._splits: dict[Path, dict[str | int, RawTables]] = {}

    def _get(self) -> RawTables:
        if self._tables is None:
            assert self._build is not None
            self._tables = self._build()
            self._build = None
        return self._tables

    @property
    def keys(self) -> Mapping[Path, tuple[int, int]]:
        return self._get()[0]

    @property
    def values(self) -> Mapping[Path, tuple[int, int]]:
        return self._get()[1]

    @property
    def raw_scalars(self) -> Mapping[Path, tuple[int, int, str | None]]:
        return self._get()[2]

    @property
    def scalars(self) -> ScalarTable:
        return ScalarTable(self.raw_scalars)

    def at(self, path: Path) -> Pos:
        """Position of ``path``, or of its deepest ancestor that exists in the source."""
        keys = self.keys
        p = path
        while True:
            found = keys.get(p)
            if found is not None:
                return Pos(*found)
            if not p:
                return Pos(1, 1)
            p = p[:-1]

    def value_at(self, path: Path) -> Pos:
        found = self.values.get(path)
        return Pos(*found) if found is not None else self.at(path)

    def split(self, prefix: Path) -> dict[str | int, Positions]:
        """The tables of every child of ``prefix`` (e.g. each item of a List), rebased, built
        in one pass over the table (rebasing each child separately would be quadratic)."""
        return {child: Positions(*tables) for child, tables in self._split(prefix).items()}

    def child(self, prefix: Path, key: str | int) -> Positions:
        """The (lazy) table of ``prefix + (key,)``, rebased; siblings share one split pass."""
        empty: RawTables = ({}, {}, {})
        return Positions(build=lambda: self._split(prefix).get(key, empty))

    def _split(self, prefix: Path) -> dict[str | int, RawTables]:
        if prefix not in self._splits:
            keys = _split(self.keys, prefix)
            values = _split(self.values, prefix)
            scalars = _split(self.raw_scalars, prefix)
            self._splits[prefix] = {
                child: (table, values.get(child, {}), scalars.get(child, {}))
                for child, table in keys.items()
            }
        return self._splits[prefix]

    def rebased(self, prefix: Path) -> Positions:
        """The table of the subtree at ``prefix``, with paths relative to it."""
        n = len(prefix)
        keys = {p[n:]: v for p, v in self.keys.items() if p[:n] == prefix}
        values = {p[n:]: v for p, v in self.values.items() if p[:n] == prefix}
        scalars = {p[n:]: v for p, v in self.raw_scalars.items() if p[:n] == prefix}
        return Positions(keys, values, scalars)


@dataclass(frozen=True)
class Document:
    """One Kubernetes object (or one YAML document) from a file."""

    file: str
    index: int  # 0-based document number in the file
    data: Any
    positions: Positions
    source_lines: tuple[str, ...] = ()  # the whole file's lines, shared, for inline comments

    @property
    def kind(self) -> str | None:
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def api_version(self) -> str | None:
        v = self.data.get("apiVersion") if isinstance(self.data, dict) else None
        return v if isinstance(v, str) else None

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.data.get("metadata") if isinstance(self.data, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str | None:
        name = self.metadata.get("name")
        return name if isinstance(name, str) else None

    @property
    def namespace(self) -> str | None:
        ns = self.metadata.get("namespace")
        return ns if isinstance(ns, str) else None

    @property
    def is_kubernetes(self) -> bool:
        return self.kind is not None and self.api_version is not None


@dataclass(frozen=True)
class ObjectRef:
    kind: str | None
    name: str | None
    namespace: str | None


@dataclass(frozen=True)
class Finding:
    rule: str
    slug: str
    severity: str
    file: str
    line: int
    column: int
    object: ObjectRef
    path: str
    message: str

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)


def dotted(path: Path) -> str:
    """``("spec", "containers", 0, "name")`` -> ``spec.containers[0].name``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out
