"""Suppressions: the ``pmanifest.io/ignore`` annotation on an object or its pod templates, and
``# pmanifest: ignore=RULE[,RULE...] [reason=...]`` comments on the finding's line or the line
above. Rules never see them: the engine drops suppressed hits.

A suppression that names no rule (``ignore=PM2O1``, annotation ``PM999``), a
``# pmanifest: ignore`` comment written some other way (``ignore: PM201``, trailing words), or
one on a line where the rule it names finds nothing would silently suppress nothing:
:func:`comment_problems`, :func:`unused_comments` and :func:`annotation_problems` find them,
and the engine reports each as PM005. With ``inlineSuppressions: false`` in the config the
engine honours none of them and reports each as PM005 too.

Comment lines are read in linear time whatever they hold (a 100 KB comment line costs one
pass over it)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from pmanifest.catalogue import lookup, suggest
from pmanifest.kube.document import Document, Finding, ObjectRef
from pmanifest.kube.workloads import annotation_paths, get
from pmanifest.loader.positions import Path, Pos

IGNORE_ANNOTATION = "pmanifest.io/ignore"
SUPPRESSION_MARK = _MARK = "pmanifest:"
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


Metas = tuple[Path, ...]  # the metadata paths that speak for an object (annotation_paths)


def annotation_ignores(doc: Document, metas: Metas | None = None) -> set[str]:
    """Rules ignored by the annotation on the object, on any of its pod templates or on an
    object embedded in it (``metas``: ``annotation_paths(doc)``, when the caller has it)."""
    ignored: set[str] = set()
    for _, value in ignore_annotations(doc, metas):
        ignored |= rule_ids(value)
    return ignored


def ignore_annotations(doc: Document, metas: Metas | None = None) -> Iterator[tuple[Path, str]]:
    """(path, value) of every ignore annotation: on the object, its pod templates and the
    objects embedded in it."""
    for meta in annotation_paths(doc) if metas is None else metas:
        path = (*meta, "annotations")
        node = get(doc.data, path)
        value = node.get(IGNORE_ANNOTATION) if isinstance(node, dict) else None
        if isinstance(value, str):
            yield (*path, IGNORE_ANNOTATION), value


def unknown_names(names: str) -> list[str]:
    """The names in ``"PM201, PM2O1"`` that are no rule (id or slug)."""
    return [name.strip() for name in names.split(",")
            if name.strip() and lookup(name.strip()) is None]


_SHOWN = 60  # characters of an unknown name echoed in the message (a comment can be 100 KB)


def _unknown_message(where: str, name: str) -> str:
    shown = repr(name)
    if len(name) > _SHOWN:
        shown = f"{name[:_SHOWN - 3]!r}... ({len(name):,} characters)"
    return (f"{where} names {shown}, which is no rule{suggest(name)}, so it suppresses "
            "nothing; `pmanifest rules` lists the ids and slugs")


def annotation_problems(doc: Document, honoured: bool,
                        metas: Metas | None = None) -> Iterator[tuple[Path, str]]:
    """(path, message) of every ignore annotation that suppresses nothing: it names no rule,
    or suppressions in manifests are turned off (``honoured`` is False)."""
    for path, value in ignore_annotations(doc, metas):
        if not honoured:
            yield path, f"{IGNORE_ANNOTATION} is not honoured: {_OFF}"
            continue
        for name in unknown_names(value):
            yield path, _unknown_message(f"annotation {IGNORE_ANNOTATION}", name)


_OFF = ("suppressions in manifests are turned off by the config (inlineSuppressions: false); "
        "set the rule's level in the config instead")


def comment_problems(lines: tuple[str, ...], honoured: bool) -> Iterator[tuple[int, int, str]]:
    """(line, column, message) of every ``# pmanifest: ignore`` comment that suppresses
    nothing: written some other way than ``ignore=RULE[,RULE] [reason=...]``, naming no rule,
    or not honoured (``honoured`` is False)."""
    for number, line in enumerate(lines, 1):
        if _MARK not in line:
            continue
        start = _directive_start(line)
        if start is None:
            continue
        names = comment_names(line)
        if names is None:
            yield number, start + 1, ("`# pmanifest:` comment not understood, so it suppresses "
                                      "nothing; write `# pmanifest: ignore=PM201[,RULE...] "
                                      "[reason=...]` with nothing after it")
        elif not honoured:
            yield number, start + 1, f"`# pmanifest: ignore` is not honoured: {_OFF}"
        else:
            for name in unknown_names(names):
                column = line.find(name, start) + 1
                yield number, column, _unknown_message("`# pmanifest: ignore`", name)


_DIRECTIVE_WORDS = ("ignore", "disable", "noqa", "skip", "suppress")


def _directive_start(line: str) -> int | None:
    """Where a ``# pmanifest: ignore...`` comment (or one meant as such: ``disable``,
    ``noqa``, ``skip``, ``suppress``) starts in ``line``, or None; other ``pmanifest:`` prose
    in a comment is no directive."""
    for i in _commented_marks(line):
        if line[i + len(_MARK):].lstrip(" \t").lower().startswith(_DIRECTIVE_WORDS):
            return i
    return None


def _commented_marks(line: str) -> Iterator[int]:
    """Where ``pmanifest:`` starts in ``line`` right after a ``#`` (blanks between)."""
    start = 0
    while (i := line.find(_MARK, start)) != -1:
        start = i + len(_MARK)
        j = i - 1
        while j >= 0 and line[j] in " \t":
            j -= 1
        if j >= 0 and line[j] == "#":
            yield i


def inline_ignores(doc: Document, pos: Pos, seen: dict[int, set[str]] | None = None
                   ) -> set[str]:
    """Rules ignored by a comment on the line of ``pos`` or the line above. ``seen``: what
    each line ignores, filled as lines are read, for a caller with many findings (a file of
    one long line, minified JSON, holds them all: reading it for each was quadratic)."""
    ignored: set[str] = set()
    for line_no in (pos.line, pos.line - 1):
        ignored |= _ignored_on(doc, line_no, seen)
    return ignored


def suppressing_line(doc: Document, pos: Pos, rule_id: str,
                     seen: dict[int, set[str]] | None = None) -> int | None:
    """The line of the comment that suppresses ``rule_id`` at ``pos`` (on its line, else the
    line above), or None (``seen`` as for :func:`inline_ignores`)."""
    for line_no in (pos.line, pos.line - 1):
        if rule_id in _ignored_on(doc, line_no, seen):
            return line_no
    return None


def _ignored_on(doc: Document, line_no: int, seen: dict[int, set[str]] | None) -> set[str]:
    """The rules the comment on line ``line_no`` ignores, read once per line with ``seen``."""
    if not 1 <= line_no <= len(doc.source_lines):
        return set()
    found = seen.get(line_no) if seen is not None else None
    if found is None:
        names = comment_names(doc.source_lines[line_no - 1])
        found = rule_ids(names) if names is not None else set()
        if seen is not None:
            seen[line_no] = found
    return found


def unused_comments(lines: tuple[str, ...], used: set[tuple[int, str]],
                    checked: frozenset[str], found: Mapping[str, list[int]]
                    ) -> Iterator[tuple[int, int, str]]:
    """(line, column, message) of every rule a well-formed ``# pmanifest: ignore=`` comment
    names that suppressed no finding (``used``: the (comment line, rule id) that did) though
    the rule ran on the file (``checked``): the comment is on the wrong line (``found``: the
    lines of the rule's findings in the file, to point at the nearest), or the finding is
    gone."""
    for number, line in enumerate(lines, 1):
        if _MARK not in line:
            continue
        names = comment_names(line)
        if names is None:
            continue
        start = _directive_start(line) or 0
        for name in names.split(","):
            rule_id = next(iter(rule_ids(name)), None)
            if rule_id is None or rule_id not in checked or (number, rule_id) in used:
                continue
            shown = f"{name.strip()!r}" + (f" ({rule_id})" if rule_id != name.strip() else "")
            where = found.get(rule_id)
            todo = (f"the nearest {rule_id} finding is on line "
                    f"{min(where, key=lambda n: (abs(n - number), n))}: move the comment to "
                    "that line or the line above" if where else
                    f"no {rule_id} finding in this file is left to suppress: remove it")
            yield number, line.find(name.strip(), start) + 1, (
                f"`# pmanifest: ignore` names {shown}, but no {rule_id} finding is on this line "
                f"or the next, so it suppresses nothing; {todo}")


def comment_names(line: str) -> str | None:
    """The rule names of a ``# pmanifest: ignore=...`` comment in ``line``, or None."""
    for i in _commented_marks(line):
        match = _NAMES.match(line, i + len(_MARK))
        if match is None:
            continue
        names, end = match.group(1), match.end()
        if line.startswith("=", end) and names.endswith(_REASON):
            return names[:-len(_REASON)].strip() or None  # `... reason=<anything>`
        if not line[end:].strip():
            return names.strip() or None
    return None


def comment_findings(file: str, lines: tuple[str, ...], honoured: bool, severity: str,
                     checked: frozenset[str], used: set[tuple[int, str]],
                     findings: list[Finding]) -> list[Finding]:
    """PM005 (at ``severity``) for every ``# pmanifest:`` comment that suppresses nothing: not
    understood, naming no rule, not ``honoured``, or naming a rule that found nothing on its
    line or the next (``checked``: the rules that ran on the whole file; ``used``: the
    (line, rule) of every comment that suppressed a finding)."""
    meta = lookup("PM005")
    assert meta is not None
    found = list(comment_problems(lines, honoured))
    if honoured and checked:
        lines_of: dict[str, list[int]] = {}
        for finding in findings:
            lines_of.setdefault(finding.rule, []).append(finding.line)
        found += unused_comments(lines, used, checked, lines_of)
    return [Finding(meta.id, meta.slug, severity, file, line, column,
                    ObjectRef(None, None, None), "", message) for line, column, message in found]
