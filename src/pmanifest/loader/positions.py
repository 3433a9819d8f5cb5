"""Documents with their source positions, and the findings rules produce about them.

Positions live in a side table keyed by path (a tuple of keys and indexes), never inside the
user's data, so every consumer sees exactly the mapping the YAML described.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple, TypeVar

Path = tuple[str | int, ...]


class Pos(tuple[int, int]):
    """A 1-based (line, column)."""

    __slots__ = ()

    def __new__(cls, line: int, column: int) -> Pos:
        return super().__new__(cls, (line, column))

    def __getnewargs__(self) -> tuple[int, int]:
        return self[0], self[1]  # pickle (parallel lint workers) calls __new__(cls, *these)

    @property
    def line(self) -> int:
        return self[0]

    @property
    def column(self) -> int:
        return self[1]


class ScalarInfo(NamedTuple):
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

    Tables may be lazy. Most documents produce no finding, so the loader records positions only
    when something asks for one, by parsing the document again: the whole table (``build``),
    or for a very large document only the paths asked for (``locate``, so a finding in a
    million-node document costs a second pass, not a million-entry table)."""

    __slots__ = ("_build", "_known", "_locate", "_parent", "_prefix", "_splits", "_tables")

    def __init__(
        self,
        keys: Mapping[Path, tuple[int, int]] | None = None,
        values: Mapping[Path, tuple[int, int]] | None = None,
        raw_scalars: Mapping[Path, tuple[int, int, str | None]] | None = None,
        *,
        build: Callable[[], RawTables] | None = None,
        locate: Callable[[frozenset[Path]], RawTables] | None = None,
    ) -> None:
        self._tables: RawTables | None = None
        if build is None and locate is None:
            self._tables = (keys or {}, values or {}, raw_scalars or {})
        self._build = build
        self._locate = locate
        self._known: set[Path] = set()
        self._splits: dict[Path, dict[str | int, RawTables]] = {}
        self._parent: Positions | None = None  # a view of the parent's subtree at _prefix
        self._prefix: Path = ()

    def absolute(self, path: Path) -> Path:
        """``path`` as seen from the outermost table (views add their prefix)."""
        if self._parent is None:
            return path
        return self._parent.absolute((*self._prefix, *path))

    def _get(self) -> RawTables:
        if self._tables is None:
            if self._build is not None:
                self._tables = self._build()
                self._build = None
            else:
                self._tables = ({}, {}, {})  # filled on demand by _ensure
        return self._tables

    def prefetch(self, paths: Iterable[Path]) -> None:
        """Locate several paths in one pass (a no-op unless in locate mode)."""
        if self._parent is not None:
            self._parent.prefetch((*self._prefix, *p) for p in paths)
        elif self._locate is not None:
            self._ensure(*paths)

    def _ensure(self, *paths: Path) -> None:
        """In locate mode, look up ``paths`` and their ancestors (once)."""
        if self._locate is None:
            return
        wanted = frozenset(p[:n] for p in paths for n in range(len(p) + 1)) - self._known
        if not wanted:
            return
        found = self._locate(wanted)
        keys, values, scalars = self._get()
        for table, new in ((keys, found[0]), (values, found[1]), (scalars, found[2])):
            assert isinstance(table, dict)
            table.update(new)
        self._known |= wanted

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
        if self._locate is not None or self._parent is not None:
            return ScalarTable(_Located(self))
        return ScalarTable(self.raw_scalars)

    def at(self, path: Path) -> Pos:
        """Position of ``path``, or of its deepest ancestor that exists in the source."""
        if self._parent is not None:
            return self._parent.at((*self._prefix, *path))
        self._ensure(path)
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
        if self._parent is not None:
            return self._parent.value_at((*self._prefix, *path))
        self._ensure(path)
        found = self.values.get(path)
        return Pos(*found) if found is not None else self.at(path)

    def child(self, prefix: Path, key: str | int) -> Positions:
        """The (lazy) table of ``prefix + (key,)``, rebased; siblings share one split pass."""
        if self._locate is not None or self._parent is not None:
            return self._located_subtree((*prefix, key))
        empty: RawTables = ({}, {}, {})
        return Positions(build=lambda: self._split(prefix).get(key, empty))

    def _located_subtree(self, prefix: Path) -> Positions:
        """A view of the subtree at ``prefix``: lookups go to this table (and its cache)."""
        view = Positions()
        view._parent = self
        view._prefix = prefix
        return view

    def _scalar(self, path: Path) -> tuple[int, int, str | None]:
        if self._parent is not None:
            return self._parent._scalar((*self._prefix, *path))
        self._ensure(path)
        return self.raw_scalars[path]

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


class _Located(Mapping[Path, tuple[int, int, str | None]]):
    """The scalar table of a locate-mode Positions or a view: each lookup locates its path
    first (iterating shows only what was located so far)."""

    __slots__ = ("_positions",)

    def __init__(self, positions: Positions) -> None:
        self._positions = positions

    def __getitem__(self, path: Path) -> tuple[int, int, str | None]:
        return self._positions._scalar(path)

    def __iter__(self) -> Iterator[Path]:
        return iter(self._positions.raw_scalars)

    def __len__(self) -> int:
        return len(self._positions.raw_scalars)


def dotted(path: Path) -> str:
    """``("spec", "containers", 0, "name")`` -> ``spec.containers[0].name``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out
