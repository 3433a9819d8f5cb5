"""Suppressions: the ``pmanifest.io/ignore`` annotation on an object or its pod templates, and
``# pmanifest: ignore=RULE[,RULE...] [reason=...]`` comments on the finding's line or the line
above. Rules never see them: the engine drops suppressed hits.

Comment lines are read in linear time whatever they hold (a 100 KB comment line costs one
pass over it)."""

from __future__ import annotations

import re

from pmanifest.catalogue import lookup
from pmanifest.document import Document, Pos
from pmanifest.workloads import annotation_paths, get

IGNORE_ANNOTATION = "pmanifest.io/ignore"
_MARK = "pmanifest:"
_NAMES = re.compile(r"[ \t]*ignore=([A-Za-z0-9_,\- ]*)")
_REASON = " reason"


def rule_ids(names: str) -> set[str]:
    """``"PM201, prestop-sleep"`` -> ``{"PM201", "PM203"}`` (unknown names are dropped)."""
    out = set()
    for name in names.split(","):
        found = lookup(name.strip())
        if found is not None:
            out.add(found.id)
    return out


def annotation_ignores(doc: Document) -> set[str]:
    """Rules ignored by the annotation on the object, on any of its pod templates or on an
    object embedded in it."""
    ignored: set[str] = set()
    for meta in annotation_paths(doc):
        node = get(doc.data, (*meta, "annotations"))
        value = node.get(IGNORE_ANNOTATION) if isinstance(node, dict) else None
        if isinstance(value, str):
            ignored |= rule_ids(value)
    return ignored


def inline_ignores(doc: Document, pos: Pos) -> set[str]:
    """Rules ignored by a comment on the line of ``pos`` or the line above."""
    ignored: set[str] = set()
    for line_no in (pos.line, pos.line - 1):
        if 1 <= line_no <= len(doc.source_lines):
            names = comment_names(doc.source_lines[line_no - 1])
            if names is not None:
                ignored |= rule_ids(names)
    return ignored


def comment_names(line: str) -> str | None:
    """The rule names of a ``# pmanifest: ignore=...`` comment in ``line``, or None."""
    start = 0
    while (i := line.find(_MARK, start)) != -1:
        start = i + len(_MARK)
        j = i - 1
        while j >= 0 and line[j] in " \t":
            j -= 1
        if j < 0 or line[j] != "#":
            continue
        match = _NAMES.match(line, start)
        if match is None:
            continue
        names, end = match.group(1), match.end()
        if line.startswith("=", end) and names.endswith(_REASON):
            return names[:-len(_REASON)].strip() or None  # `... reason=<anything>`
        if not line[end:].strip():
            return names.strip() or None
    return None
