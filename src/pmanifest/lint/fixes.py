"""``lint --fix``: every fix a check proposes (``Finding.fix``) written into its file as the
smallest text edits (``fixplace``), every byte outside them kept: comments, key order,
quoting, anchors, blank lines, indentation, flow style, the BOM and CRLF line endings.

Each fix is applied on its own and checked by parsing the file again: its document must hold
exactly what it held with the fix's value at the fix's path, and every other document must be
the same text. A fix that fails the check, or that ``fixplace`` cannot place exactly, is
skipped with its reason; the file keeps the other fixes. Fixes are applied from the bottom of
the file up (an edit never moves what is still to be placed above it), then the file is linted
again, since one fix can call for another (PM401's podFailurePolicy requires PM402's
``restartPolicy: Never``), until nothing more applies: running ``--fix`` twice changes
nothing the second time.

Files that cannot be edited exactly are skipped whole: not UTF-8, mixed line endings. A
document written as one flow collection (JSON) is not edited: YAML's flow syntax written into
it would leave it YAML, no longer JSON.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import yaml

from pmanifest.kube.document import Finding
from pmanifest.lint.fixplace import MISSING, Edit, Layout, Unplaceable, place, remove, same
from pmanifest.loader.documents import YamlProblem, load_single
from pmanifest.loader.positions import Path, dotted
from pmanifest.loader.spans import Chunk, aliased, document_chunks, spans

MAX_ROUNDS = 10  # lint, fix, lint again: a fix that calls for another is applied next round
BOM = b"\xef\xbb\xbf"


class Fixed(NamedTuple):
    """One file after --fix: its new bytes (the same bytes when nothing applied), the
    findings whose fix was applied, and those skipped with the reason."""

    raw: bytes
    applied: list[Finding]
    skipped: list[tuple[Finding, str]]


def fix_file(raw: bytes, findings: list[Finding],
             relint: Callable[[bytes], list[Finding]]) -> Fixed:
    """Apply every fix of ``findings`` (one file's) and of what ``relint`` finds after them."""
    fixable = [f for f in findings if f.fix is not None]
    if not fixable:
        return Fixed(raw, [], [])
    try:
        text, encode = _text_of(raw)
    except Unplaceable as exc:
        return Fixed(raw, [], [(f, exc.reason) for f in fixable])
    applied: list[Finding] = []
    skipped: list[tuple[Finding, str]] = []
    tried: set[tuple[Any, ...]] = set()
    for _ in range(MAX_ROUNDS):
        todo = [f for f in fixable if _identity(f) not in tried]
        before = len(applied)
        for finding in sorted(todo, key=lambda f: (f.line, f.column), reverse=True):
            tried.add(_identity(finding))
            try:
                text = apply_fix(text, finding)
            except Unplaceable as exc:
                skipped.append((finding, exc.reason))
            else:
                applied.append(finding)
        if len(applied) == before:
            break
        fixable = [f for f in relint(encode(text)) if f.fix is not None]
    return Fixed(encode(text), applied, skipped)


def _identity(finding: Finding) -> tuple[Any, ...]:
    assert finding.fix is not None
    return finding.rule, finding.object, finding.path, finding.fix.path


def _text_of(raw: bytes) -> tuple[str, Callable[[str], bytes]]:
    """The text to edit (LF line endings) and how it goes back to bytes as the file had them."""
    bom = raw.startswith(BOM)
    try:
        text = raw[len(BOM) if bom else 0:].decode("utf-8")
    except UnicodeDecodeError:
        raise Unplaceable("the file is not UTF-8 text") from None
    crlf = "\r\n" in text
    if crlf:
        if text.count("\r") != text.count("\r\n") or text.count("\n") != text.count("\r\n"):
            raise Unplaceable("the file mixes line endings (CRLF and LF or CR): an edit "
                              "would have to choose one")
        text = text.replace("\r\n", "\n")
    elif "\r" in text:
        raise Unplaceable("the file breaks lines with CR alone")

    def encode(edited: str) -> bytes:
        body = edited.replace("\n", "\r\n") if crlf else edited
        return (BOM if bom else b"") + body.encode("utf-8")

    return text, encode


def apply_fix(text: str, finding: Finding) -> str:
    """``text`` with ``finding``'s fix written in, checked; Unplaceable when it cannot be."""
    fix = finding.fix
    assert fix is not None
    chunks = document_chunks(text)
    k = _chunk_of(text, chunks, finding.line)
    chunk = chunks[k]
    if _is_json(chunk.text):
        raise Unplaceable("the document is JSON (one flow collection); edit it by hand")
    data = _data(chunk.text)
    try:
        layout = Layout(text, spans(chunk.text, chunk.offset), aliased(chunk.text))
    except yaml.YAMLError:  # what only PyYAML's own parser reads (JSON's surrogate pairs)
        raise Unplaceable("the document cannot be read for editing (an escape libyaml "
                          "refuses); edit it by hand") from None
    path = fix.path  # from the document's root (an item of a List under ``items.N``)
    parent = _get(data, path[:-1])
    if not isinstance(parent, dict):
        raise Unplaceable(f"{dotted(path[:-1]) or 'the object'} is not a mapping")
    old = parent.get(path[-1], MISSING)
    if fix.remove:
        edits = [] if old is MISSING else remove(layout, path)
    else:
        edits = place(layout, path, old, fix.value)
    if not edits:
        raise Unplaceable(f"{dotted(path)} already holds what the fix writes")
    expected = _unshared(data)  # (what an alias shares is one object in ``data``)
    target = _get(expected, path[:-1])
    if fix.remove:
        del target[path[-1]]
    else:
        target[path[-1]] = _unshared(fix.value)
    edited = _edited(text, edits, chunk)
    _check(edited, chunks, k, expected, dotted(path))
    return edited


def _unshared(data: Any) -> Any:
    """A copy of ``data`` in which no two places share a mapping or a list."""
    if isinstance(data, dict):
        return {key: _unshared(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_unshared(item) for item in data]
    return data


def _is_json(chunk: str) -> bool:
    """Is the document one flow collection, as JSON is?"""
    for line in chunk.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "---", "%")):
            return stripped.startswith(("{", "["))
    return False


def _chunk_of(text: str, chunks: list[Chunk], line: int) -> int:
    """The document holding ``line`` (1-based): the last one starting at or before it."""
    found = 0
    for i, chunk in enumerate(chunks):
        if text.count("\n", 0, chunk.offset) + 1 <= line:
            found = i
    return found


def _data(chunk: str) -> Any:
    try:
        return load_single(chunk).data
    except YamlProblem as problem:
        raise Unplaceable(f"the document does not load ({problem.message})") from None


def _get(data: Any, path: Path) -> Any:
    for part in path:
        found = (isinstance(data, dict) and part in data) or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data))
        if found:
            data = data[part]
        else:
            raise Unplaceable(f"{dotted(path)} is not in the document")
    return data


def _edited(text: str, edits: list[Edit], chunk: Chunk) -> str:
    """``text`` with ``edits`` applied (none overlapping; all inside ``chunk``)."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in itertools.pairwise(ordered):
        if after.start < before.end:
            raise Unplaceable("two parts of the fix would overlap")
    end = chunk.offset + len(chunk.text)
    if ordered[0].start < chunk.offset or ordered[-1].end > end:
        raise Unplaceable("the fix would reach into another document")
    for edit in reversed(ordered):
        text = text[:edit.start] + edit.new + text[edit.end:]
    return text


def _check(edited: str, chunks: list[Chunk], k: int, expected: Any, where: str) -> None:
    """The edited text holds exactly ``expected`` in document ``k``, every other document as
    it was written."""
    after = document_chunks(edited)
    if len(after) != len(chunks) or any(
            a.text != b.text for i, (a, b) in enumerate(zip(after, chunks, strict=True))
            if i != k):
        raise Unplaceable(f"writing {where} would change the other documents of the file")
    try:
        found = load_single(after[k].text).data
    except YamlProblem as problem:
        raise Unplaceable(f"writing {where} here would not parse ({problem.message})") from None
    if not same(found, expected):
        raise Unplaceable(f"writing {where} here would change more than {where} (an alias or "
                          "a merge key shares it)")
