"""Find the pod templates of an object: from the table of known kinds
(:mod:`pmanifest.kube.kinds`), inside embedded objects, or by shape.

This module only finds where templates are; :mod:`pmanifest.kube.workloads` gives them roles and
placement. It knows no profile, so suppressions can ask for template paths too.

A custom resource the table does not know is searched by shape: a mapping held by a ``spec``,
``podSpec``, ``template`` or ``podTemplate`` key whose ``containers`` is a list holding an
object with a string ``image``. (``WorkloadAllowlist.matchingCriteria.containers[*].image`` is
an allowlist, not a pod: its key is not one of those.)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, NamedTuple

from pmanifest.kube.kinds import (
    EMBEDDED_SPECS,
    SHAPE_KEYS,
    WORKER,
    Kind,
    Template,
    builtin_group,
    lookup,
)
from pmanifest.loader.positions import Path

ANY_ITEM = "[*]"
ANY_KEY = "*"
MAX_EMBEDDING = 3  # objects inside objects inside objects, at most
GENERIC = Template("", WORKER)  # a template found by shape


def get(data: Any, path: Path) -> Any:
    """Follow ``path`` through dicts and lists; None where a step is missing or mistyped."""
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not -len(data) <= part < len(data):
                return None
        elif not isinstance(data, dict):
            return None
        else:
            if part not in data:
                return None
        data = data[part]
    return data


def mapping(data: Any, path: Path = ()) -> dict[str, Any]:
    value = get(data, path)
    return value if isinstance(value, dict) else {}


def sequence(data: Any, path: Path = ()) -> list[Any]:
    value = get(data, path)
    return value if isinstance(value, list) else []


def group_of(api_version: Any) -> str:
    """``apps/v1`` -> ``apps``; ``v1`` -> ``""``."""
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""


class Found(NamedTuple):
    """One pod template of an object, with what the table says of it (paths from the root)."""

    pod_path: Path
    pod: dict[str, Any]
    template: Template
    kind: str  # the kind that holds it (an embedded object's own kind)
    group: str
    owner: Path  # the object that holds it: () or the path of an embedded object
    set_role: str
    name: str | None = None  # what the last wildcard matched: an item's name or a key
    name_path: Path | None = None
    generic: bool = False  # found by shape in a kind the table does not know
    title: str = ""  # how messages name the kind ("Volcano Job"), or "" for the kind itself
    runs: bool = True  # False: its kind is a template for others to run (a TrainingRuntime)

    def resolve(self, pattern: str) -> Path:
        """A path written with the template's wildcards (``spec.replicatedJobs[*].replicas``),
        made concrete by the template's own match, from the document root."""
        return resolve(pattern, self.pod_path, len(self.owner))

    @property
    def also_meta_path(self) -> Path | None:
        """More metadata whose role label counts after the template's own (``meta_also``)."""
        also = self.template.meta_also
        return None if also is None else self.resolve(also)

    @property
    def meta_path(self) -> Path:
        """Where the template's metadata (labels, annotations) is."""
        meta = self.template.meta
        if meta == "self":
            return self.pod_path
        if meta == "child":
            return (*self.pod_path, "metadata")
        return (*self.pod_path[:-1], "metadata")

    @property
    def set_path(self) -> Path | None:
        """The spec of the set running the template (JobSet, Volcano Job), if any."""
        prefix = self.template.set
        if prefix is None:
            return None
        return self.pod_path[:len(self.owner) + len(parse(prefix))]


@functools.cache
def parse(dotted: str) -> tuple[str, ...]:
    """``a.b[*].c.*.d`` -> ``("a", "b", "[*]", "c", "*", "d")``."""
    out: list[str] = []
    for piece in dotted.split("."):
        if piece.endswith(ANY_ITEM):
            out.extend((piece[:-len(ANY_ITEM)], ANY_ITEM))
        else:
            out.append(piece)
    return tuple(out)


def resolve(pattern: str, concrete: Path, start: int = 0) -> Path:
    """``pattern``'s wildcards replaced by what ``concrete[start:]`` (a path the pattern's
    template matched, its wildcards at the same places) has there; ``concrete[:start]`` (an
    embedded object's path) comes first."""
    out = list(concrete[:start])
    for i, part in enumerate(parse(pattern)):
        out.append(concrete[start + i] if part in (ANY_ITEM, ANY_KEY) else part)
    return tuple(out)


Match = tuple[Path, Any, Path | None]  # concrete path, value, path of the last wildcard match


def expand(data: Any, pattern: tuple[str, ...], path: Path = (),
           last: Path | None = None) -> Iterator[Match]:
    """Every concrete path matching ``pattern`` below ``data``, with its value."""
    if not pattern:
        yield path, data, last
        return
    part, rest = pattern[0], pattern[1:]
    if part == ANY_ITEM:
        for i, item in enumerate(data if isinstance(data, list) else ()):
            yield from expand(item, rest, (*path, i), (*path, i))
    elif part == ANY_KEY:
        for key, value in (data.items() if isinstance(data, dict) else ()):
            yield from expand(value, rest, (*path, key), (*path, key))
    elif isinstance(data, dict) and part in data:
        yield from expand(data[part], rest, (*path, part), last)


def _name(data: Any, last: Path | None, key: str) -> tuple[str | None, Path | None]:
    """The name of what the last wildcard matched: a mapping key, or a list item's ``key``
    (``targetJobs[*].name``: every target's, joined, at the first one)."""
    if not last:
        return None, None
    if isinstance(last[-1], str):
        return last[-1], last
    names = [(value, path) for path, value, _ in expand(get(data, last), parse(key), last)
             if isinstance(value, str)]
    if not names:
        return None, None
    return ", ".join(name for name, _ in names), names[0][1]


def _applies(template: Template, data: Any, path: Path, value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if template.requires and not any(key in value for key in template.requires):
        return False
    if template.unless is not None and template.unless in value:
        return False
    holder = mapping(data, path[:-2])
    if template.if_present is not None and template.if_present not in holder:
        return False
    return template.if_absent is None or template.if_absent not in holder


def find(data: Any, owner: Path = (), depth: int = 0, runs: bool = True) -> Iterator[Found]:
    """The pod templates of the object ``data`` (found at ``owner`` in its document)."""
    if not isinstance(data, dict):
        return
    kind, group = data.get("kind"), group_of(data.get("apiVersion"))
    if not isinstance(kind, str):
        return
    entry = lookup(group, kind)
    if entry is None:
        if not builtin_group(group):
            yield from _by_shape(data, owner, kind, group)
        return
    runs = runs and entry.runs
    if group in entry.former_groups:  # named by the group the kind has now
        group = entry.group
    yield from _from_table(entry, data, owner, kind, group, runs)
    if depth < MAX_EMBEDDING:
        for embedded in entry.embedded:
            for path, value, _ in expand(data, parse(embedded)):
                yield from find(value, (*owner, *path), depth + 1, runs)


def _from_table(entry: Kind, data: dict[str, Any], owner: Path, kind: str,
                group: str, runs: bool) -> Iterator[Found]:
    for template in entry.templates:
        for path, value, last in expand(data, parse(template.path)):
            if _applies(template, data, path, value):
                name, name_path = _name(data, last, template.name_key)
                yield Found((*owner, *path), value, template, kind, group, owner,
                            entry.set_role, name,
                            None if name_path is None else (*owner, *name_path),
                            title=entry.title, runs=runs)


def _by_shape(data: dict[str, Any], owner: Path, kind: str, group: str) -> Iterator[Found]:
    """Pod templates of a kind the table does not know, found by their shape."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            if path and path[-1] in SHAPE_KEYS and _pod_shaped(node):
                yield Found((*owner, *path), node, GENERIC, kind, group, owner, WORKER,
                            generic=True)
                continue
            spec = _embedded_spec(node, (*owner, *path), kind, group)
            if spec:
                yield from spec
                continue
            items: list[tuple[str | int, Any]] = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        stack.extend(((*path, key), value) for key, value in reversed(items)
                     if isinstance(value, dict | list))


def _embedded_spec(node: dict[str, Any], at: Path, kind: str, group: str) -> list[Found]:
    """The templates of a known kind's spec embedded at ``at`` (``EMBEDDED_SPECS``), read
    with that kind's templates and roles; paths of counts and fault tolerance are from it."""
    for marker, templates in EMBEDDED_SPECS:
        if marker not in node:
            continue
        out = []
        for template in templates:
            for path, value, last in expand(node, parse(template.path)):
                if _applies(template, node, path, value):
                    name, name_path = _name(node, last, template.name_key)
                    out.append(Found((*at, *path), value, template, kind, group, at, WORKER,
                                     name, None if name_path is None else (*at, *name_path)))
        return out
    return []


def _pod_shaped(node: dict[str, Any]) -> bool:
    containers = node.get("containers")
    return isinstance(containers, list) and any(
        isinstance(c, dict) and isinstance(c.get("image"), str) for c in containers)


def known(data: Any) -> bool:
    """Is the object of a kind pmanifest reads: a built-in kind, or one in the table?"""
    group = group_of(data.get("apiVersion")) if isinstance(data, dict) else ""
    kind = data.get("kind") if isinstance(data, dict) else None
    return builtin_group(group) or (isinstance(kind, str) and lookup(group, kind) is not None)
