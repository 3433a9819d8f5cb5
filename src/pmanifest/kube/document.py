"""Kubernetes objects as linted (one YAML document of a file with its positions) and the
findings rules produce about them."""

from __future__ import annotations

from typing import Any, NamedTuple

from pmanifest.loader.positions import Path, Positions


class Document(NamedTuple):
    """One Kubernetes object (or one YAML document) from a file."""

    file: str
    number: int  # 0-based document number in the file
    data: Any
    positions: Positions
    source_lines: tuple[str, ...] = ()  # the whole file's lines, shared, for inline comments
    prefix: Path = ()  # where the object sits in its YAML document (a List item's items.N)

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
        """An object by its shape: an apiVersion and a kind (kubectl also takes a ``kind:
        List`` without apiVersion); what else a YAML document holds is another tool's."""
        return self.kind is not None and (self.api_version is not None or self.kind == "List")


class ObjectRef(NamedTuple):
    """The Kubernetes object a finding is about (kind, name, namespace, apiVersion)."""

    kind: str | None
    name: str | None
    namespace: str | None
    api_version: str | None = None  # (a baseline tells objects by their API group too)

    def label(self) -> str:
        """``namespace/Kind/name`` (``(file)`` for what belongs to no object, like PM001)."""
        if self.kind is None and self.name is None:
            return "(file)"
        label = f"{self.kind or '?'}/{self.name or '?'}"
        return f"{self.namespace}/{label}" if self.namespace else label


class Fix(NamedTuple):
    """A machine-readable fix: set the value at ``path`` to ``value``, or remove the key with
    ``remove``. ``value`` is the whole value the path should hold (``lint --fix`` writes only
    what differs). A check gives the path from its object's root; the finding's fix has it
    from the YAML document's root (an item of a ``kind: List`` is under ``items.N``), where
    ``lint --fix`` edits the file; ``--format json`` shows it."""

    path: Path
    value: Any = None
    remove: bool = False


class Finding(NamedTuple):
    """One finding: a rule, where it is (file, line, column, path) and what it says."""

    rule: str
    slug: str
    severity: str
    file: str
    line: int
    column: int
    object: ObjectRef
    path: str
    message: str
    fix: Fix | None = None  # what a check proposes, when it knows a correct value

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)
