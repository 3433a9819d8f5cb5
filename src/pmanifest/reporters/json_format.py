"""One JSON object: ``{"findings": [...], "summary": {...}}`` (DESIGN.md §2). A finding whose
check knows a correct value has a ``"fix"`` too: ``{"path": "spec...", "value": 300}`` (or
``{"path": ..., "remove": true}``), the path dotted like the finding's own but from the YAML
document's root (``items.N.spec...`` in a ``kind: List``); others have none."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pmanifest.kube.document import Finding
from pmanifest.loader.positions import dotted
from pmanifest.reporters import ITEMS, Summary, json_pieces


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    return json_pieces({"findings": ITEMS, "summary": summary.counts()},
                       (_finding(f) for f in findings))


def _finding(f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": f.rule,
        "slug": f.slug,
        "severity": f.severity,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "object": {"kind": f.object.kind, "name": f.object.name,
                   "namespace": f.object.namespace},
        "path": f.path,
        "message": f.message,
    }
    if f.fix is not None:
        change = {"remove": True} if f.fix.remove else {"value": f.fix.value}
        out["fix"] = {"path": dotted(f.fix.path), **change}
    return out
