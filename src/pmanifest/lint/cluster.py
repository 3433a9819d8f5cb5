"""The engine's cluster side: findings of cluster rules on a request, and of whole-input rules
on the GPU demand of a lint run.

- ``cluster_findings``: rules with ``applies="cluster"`` on one cluster request or read
  (``pmanifest cluster check``). Hits carry their positions (the request knows them).
- ``demands_of``: with ``lint --cluster``, each object's workloads that ask for GPUs, with
  where they come from (parallel workers return these small values, not documents);
- ``input_findings``: rules with ``applies="input"`` once over every file's demands, after
  all files. Positions are looked up only for the demands that get a finding, by parsing
  their files once more (looking them all up in the first pass doubled the time of a run).
  An object's ``pmanifest.io/ignore`` annotation and an inline ``# pmanifest: ignore=`` on the
  counted line suppress them as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pmanifest.cluster.capacity import capacity_of
from pmanifest.cluster.demand import Demand, demand_of
from pmanifest.cluster.request import ClusterRequest
from pmanifest.kube.document import Document, Finding, ObjectRef
from pmanifest.kube.profile import Profile
from pmanifest.kube.workloads import workloads_of
from pmanifest.lint.suppress import annotation_ignores, inline_ignores
from pmanifest.loader.documents import Loaded, YamlProblem, decode, load_documents
from pmanifest.loader.positions import Path, Pos, dotted
from pmanifest.rules import ClusterContext, InputContext, InputHit, Rule, registry


class LintOptions(Protocol):
    """What this module reads of ``lint.LintOptions`` (lint imports this module)."""

    @property
    def profile(self) -> Profile: ...

    @property
    def cluster(self) -> ClusterRequest | None: ...

    def enabled(self, rule_id: str) -> bool: ...

    def severity_of(self, rule: Rule) -> str: ...


@dataclass(frozen=True)
class Located:
    """Where a demand comes from: its file, document and object (a ``kind: List`` item has a
    prefix), and the rules its annotation suppresses. Positions are looked up only for the
    few demands that get a finding, after the run (``input_findings``)."""

    file: str
    doc_index: int
    prefix: Path  # the object's path inside its document
    object: ObjectRef
    ignored: frozenset[str]  # by the pmanifest.io/ignore annotation


def _rules(applies: str, options: LintOptions) -> list[Rule]:
    return [r for r in registry().values()
            if r.applies == applies and r.check is not None and options.enabled(r.meta.id)]


def cluster_findings(request: ClusterRequest, options: LintOptions) -> list[Finding]:
    found: list[Finding] = []
    target = ObjectRef("Cluster", request.name, None)
    for rule in _rules("cluster", options):
        assert rule.check is not None
        for hit in rule.check(ClusterContext(request, options.profile)):
            pos = hit.pos if hit.pos is not None else request.start
            found.append(Finding(rule.meta.id, rule.meta.slug, options.severity_of(rule),
                                 request.file, pos.line, pos.column, target, dotted(hit.path),
                                 hit.message))
    return sorted(found, key=Finding.sort_key)


def wants_demands(options: LintOptions) -> bool:
    return options.cluster is not None and bool(_rules("input", options))


def demands_of(doc: Document, prefix: Path, options: LintOptions) -> list[Demand]:
    """The GPU demand of one Kubernetes object's workloads (no position is looked up);
    ``prefix`` is the object's path in its document (``object_prefixes``)."""
    demands = [d for w in workloads_of(doc, options.profile)
               if (d := demand_of(w)) is not None]
    if not demands:
        return []
    where = Located(doc.file, doc.number, prefix,
                    ObjectRef(doc.kind, doc.name, doc.namespace, doc.api_version),
                    frozenset(annotation_ignores(doc)))
    return [replace(d, ref=where) for d in demands]


def object_prefixes(top: Any) -> dict[int, Path]:
    """``id(data) -> path`` of every mapping a document holds as itself or as a (nested)
    ``items`` entry: where the engine's objects sit in their document."""
    found: dict[int, Path] = {}
    stack: list[tuple[Any, Path]] = [(top, ())]
    while stack:
        data, path = stack.pop()
        if not isinstance(data, dict):
            continue
        found.setdefault(id(data), path)
        items = data.get("items")
        if isinstance(items, list):
            stack.extend((item, (*path, "items", i)) for i, item in enumerate(items))
    return found


def input_findings(demands: Iterable[Demand], options: LintOptions,
                   read: Callable[[str], bytes | None]) -> list[Finding]:
    """The whole-input rules' findings; ``read`` gives a file's bytes again, to locate the
    findings (parsed once more for the files that have some)."""
    if options.cluster is None:
        return []
    context = InputContext(tuple(demands), capacity_of(options.cluster), options.profile)
    hits: dict[str, list[tuple[Rule, InputHit]]] = {}
    for rule in _rules("input", options):
        assert rule.check is not None
        for hit in rule.check(context):
            where = hit.demand.ref
            assert isinstance(where, Located)
            if rule.meta.id not in where.ignored:
                hits.setdefault(where.file, []).append((rule, hit))
    found: list[Finding] = []
    for file, items in hits.items():
        found += _File(file, read(file)).findings(items, options)
    return found


class _File:
    """One file parsed again: its documents by index, for positions and inline comments."""

    def __init__(self, file: str, raw: bytes | None) -> None:
        self.file = file
        self.docs: dict[int, Document] = {}
        if raw is None:
            return  # gone since it was linted: findings point at its start
        try:
            text = decode(raw)
        except YamlProblem:
            return
        lines = tuple(text.split("\n"))
        for item in load_documents(text):
            if isinstance(item, Loaded):
                self.docs[item.number] = Document(file, item.number, item.data, item.positions,
                                                 lines)

    def findings(self, items: list[tuple[Rule, InputHit]],
                 options: LintOptions) -> Iterator[Finding]:
        paths = [(hit, (*hit.demand.ref.prefix, *_path(hit))) for _, hit in items]
        for hit, path in paths:
            doc = self.docs.get(hit.demand.ref.doc_index)
            if doc is not None:
                doc.positions.prefetch([path])
        seen: dict[int, set[str]] = {}
        for (rule, hit), (_, path) in zip(items, paths, strict=True):
            where: Located = hit.demand.ref
            doc = self.docs.get(where.doc_index)
            pos = doc.positions.value_at(path) if doc is not None else Pos(1, 1)
            if doc is not None and rule.meta.id in inline_ignores(doc, pos, seen):
                continue
            yield Finding(rule.meta.id, rule.meta.slug, options.severity_of(rule), self.file,
                          pos.line, pos.column, where.object, dotted(_path(hit)), hit.message)


def _path(hit: InputHit) -> Path:
    return hit.demand.gpus_path if hit.at == "gpus" else hit.demand.pods_path
