"""One JSON object: ``{"findings": [...], "summary": {...}}`` (DESIGN.md §2)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from pmanifest.document import Finding
from pmanifest.reporters import Summary


def render(findings: Sequence[Finding], summary: Summary, colour: bool) -> str:
    payload = {
        "findings": [
            {
                "rule": f.rule,
                "slug": f.slug,
                "severity": f.severity,
                "file": f.file,
                "line": f.line,
                "column": f.column,
                "object": asdict(f.object),
                "path": f.path,
                "message": f.message,
            }
            for f in findings
        ],
        "summary": summary.counts(),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
