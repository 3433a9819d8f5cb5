"""SARIF 2.1.0 for code-scanning uploads (GitHub ``upload-sarif``, GitLab, Azure DevOps).

One run; ``tool.driver.rules`` lists every rule of the catalogue with its metadata (summary,
rationale, fix), so the upload explains each result without another lookup. Locations are
relative to ``%SRCROOT%``, the directory pmanifest runs in (the repository root in CI).
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import Any

from pmanifest import __version__
from pmanifest.kube.document import Finding
from pmanifest.reporters import ITEMS, Summary, json_pieces

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(file: str, root: str | None = None) -> str:
    """``file`` as a URI reference relative to ``root`` (default: the current directory),
    with forward slashes and percent-encoding (``<stdin>`` becomes ``%3Cstdin%3E``)."""
    path = file
    if os.path.isabs(path):
        base = root if root is not None else os.getcwd()
        relative = os.path.relpath(path, base)
        if not relative.startswith(os.pardir):
            path = relative
    path = path.replace(os.sep, "/")
    while path.startswith("./"):
        path = path[2:]
    return urllib.parse.quote(path, safe="/")


def _rules() -> list[dict[str, Any]]:
    from pmanifest.catalogue import catalogue

    return [
        {
            "id": m.id,
            "name": m.slug,
            "shortDescription": {"text": m.summary},
            "fullDescription": {"text": m.rationale},
            "help": {"text": m.fix},
            "defaultConfiguration": {"level": LEVELS[m.severity]},
        }
        for m in catalogue().values()
    ]


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": f.rule}
    if f.rule in index:
        result["ruleIndex"] = index[f.rule]
    result["level"] = LEVELS[f.severity]
    result["message"] = {"text": f.message}
    result["locations"] = [{
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(f.file), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
        },
    }]
    return result


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "pmanifest", "version": __version__, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": ITEMS,
            **({"properties": {"profile": {"name": summary.profile[0],
                                           "why": summary.profile[1]}}}
               if summary.profile is not None else {}),
        }],
    }
    return json_pieces(log, (_result(f, index) for f in findings))
