"""The engine's cluster side: findings of cluster rules on a request, and of whole-input rules
on the GPU demand of a lint run.

- ``cluster_findings``: rules with ``applies="cluster"`` on one cluster request or read
  (``pmanifest cluster check``). Hits carry their positions (the request knows them).
- ``placed_demands``: with ``lint --cluster``, each file's workloads that ask for GPUs, with
  the positions and suppressions of their GPU and pod counts resolved in the file's own pass
  (so parallel workers return small values, not documents);
- ``input_findings``: rules with ``applies="input"`` once over every file's demands, after
  all files, at the positions placed above. An object's ``pmanifest.io/ignore`` annotation
  and an inline ``# pmanifest: ignore=`` on the counted line suppress them as usual.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from pmanifest.capacity import capacity_of
from pmanifest.cluster_request import ClusterRequest
from pmanifest.demand import Demand, demand_of
from pmanifest.document import Document, Finding, ObjectRef, dotted
from pmanifest.profile import Profile
from pmanifest.rules import ClusterContext, InputContext, Rule, registry
from pmanifest.suppress import annotation_ignores, inline_ignores
from pmanifest.workloads import workloads_of


class LintOptions(Protocol):
    """What this module reads of ``lint.LintOptions`` (lint imports this module)."""

    @property
    def profile(self) -> Profile: ...

    @property
    def cluster(self) -> ClusterRequest | None: ...

    def enabled(self, rule_id: str) -> bool: ...

    def severity_of(self, rule: Rule) -> str: ...


@dataclass(frozen=True)
class Placed:
    """Where a demand's numbers are written (1-based line and column), for its findings."""

    file: str
    object: ObjectRef
    gpus: tuple[int, int]
    gpus_path: str
    pods: tuple[int, int]
    pods_path: str
    ignored: frozenset[str]  # rule ids suppressed for this workload


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


def placed_demands(doc: Document, options: LintOptions) -> list[Demand]:
    """The demands of one Kubernetes object, placed (positions looked up in one batch)."""
    demands = [d for w in workloads_of(doc, options.profile)
               if (d := demand_of(w)) is not None]
    if not demands:
        return []
    doc.positions.prefetch(doc.positions.absolute(p) for d in demands
                           for p in (d.gpus_path, d.pods_path))
    ignored = annotation_ignores(doc)
    placed = []
    for d in demands:
        gpus, pods = doc.positions.value_at(d.gpus_path), doc.positions.value_at(d.pods_path)
        skip = frozenset(ignored | inline_ignores(doc, gpus) | inline_ignores(doc, pods))
        where = Placed(doc.file, ObjectRef(doc.kind, doc.name, doc.namespace),
                       (gpus.line, gpus.column), dotted(d.gpus_path),
                       (pods.line, pods.column), dotted(d.pods_path), skip)
        placed.append(Demand(d.label, d.pool, d.gpus, d.pods, d.gpus_path, d.pods_path,
                             d.surge, d.unavailable, where))
    return placed


def input_findings(demands: Iterable[Demand], options: LintOptions) -> list[Finding]:
    if options.cluster is None:
        return []
    context = InputContext(tuple(demands), capacity_of(options.cluster), options.profile)
    return list(_input_findings(context, options))


def _input_findings(context: InputContext, options: LintOptions) -> Iterator[Finding]:
    for rule in _rules("input", options):
        assert rule.check is not None
        for hit in rule.check(context):
            where = hit.demand.ref
            assert isinstance(where, Placed)
            if rule.meta.id in where.ignored:
                continue
            line, column = where.gpus if hit.at == "gpus" else where.pods
            path = where.gpus_path if hit.at == "gpus" else where.pods_path
            yield Finding(rule.meta.id, rule.meta.slug, options.severity_of(rule), where.file,
                          line, column, where.object, path, hit.message)
