"""The only module that parses YAML.

Documents come back with a side table of 1-based positions for every key and value. Parsing
uses PyYAML's C composer where present, and only ever builds plain data (dict, list, str, int,
float, bool, None): no tag can construct a Python object. Alias expansion and nesting depth are
bounded, so hostile input fails fast instead of eating memory.

A file is split at its ``---`` document markers before parsing, so a syntax error in one
document does not hide the documents after it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import yaml

from pmanifest.io.limits import MAX_DEPTH
from pmanifest.io.reading import NotText
from pmanifest.io.reading import decode as text_of
from pmanifest.loader.builder import LOCATE_ABOVE, DocumentBuilder
from pmanifest.loader.events import FAST_LOADER, resolve_kustomize, resolve_plain
from pmanifest.loader.parts import YamlProblem
from pmanifest.loader.positions import Path, Positions, RawTables

__all__ = ["MAX_DEPTH", "Broken", "Loaded", "YamlProblem", "decode", "load_documents",
           "load_single", "split_documents"]

_DOC_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)


class Loaded(NamedTuple):
    """One parsed document: its data (None for an empty document) and its positions."""

    number: int  # 0-based document number in the file
    data: Any
    positions: Positions
    start_line: int
    # False: no string in the document can start with "$" (its text has no "$", nor an escape
    # that writes one), so it holds no strategic-merge directive (see pmanifest.lint.fragments)
    dollar: bool = True
    # with ``load_documents(foreign_tags=True)``: the first tag no plain data has, the
    # document read as if it were not there (an error in a Kubernetes object; the mark of
    # another tool's file, CloudFormation's ``!Ref``, MkDocs' ``!!python/name:``, elsewhere)
    tag_problem: YamlProblem | None = None
    # a ``{{`` in the document's own text: in a file that turns out an unrendered template
    # (another document breaks at a placeholder) it is a template too, one without is an object
    braces: bool = False


class Broken(NamedTuple):
    """One document that could not be parsed."""

    number: int  # 0-based document number in the file
    problem: YamlProblem


def decode(raw: bytes) -> str:
    """Bytes to text by the reader's encoding rules (UTF-8, a BOM dropped, no NUL, CRLF as
    LF), or a YamlProblem at the first bad byte."""
    try:
        return text_of(raw)
    except NotText as exc:
        raise YamlProblem(exc.message, exc.line, exc.column) from None


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """Yield (0-based first line, text) for each document between ``---`` markers."""
    start = 0
    start_line = 0
    counted_to = 0  # lines are counted incrementally: one pass over the text in all
    for match in _DOC_MARKER.finditer(text):
        if _only_directives(text[start : match.start()]):
            continue  # `%YAML 1.1` / `%TAG` belong to the document after the marker
        yield start_line, text[start : match.start()]
        start_line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        # keep the marker line itself (blanked) so that columns after "--- " stay right
        start = match.start()
        if match.group(1) == "...":
            start = match.end()
    yield start_line, text[start:]


def load_documents(text: str, foreign_tags: bool = False,
                   kustomize: bool = False) -> Iterator[Loaded | Broken]:
    """Parse every document of a (decoded) YAML stream, one at a time. A document with a tag
    no plain data has is Broken at that tag, or with ``foreign_tags`` Loaded with its
    ``tag_problem`` (the caller tells by the document's shape which it is). Plain scalars
    are read as kubectl reads them, or with ``kustomize`` as ``kubectl kustomize`` reads its
    resources (``yes`` and ``no`` are strings)."""
    resolve = resolve_kustomize if kustomize else resolve_plain
    index = 0
    for first_line, chunk in split_documents(text):
        if _only_comments(chunk):
            continue  # a marker-only or comment-only chunk is not a document
        fix = _line_fixer(chunk, first_line)
        builder = DocumentBuilder(first_line, record=False, resolve=resolve)
        try:
            built = builder.run(chunk)
        except (YamlProblem, yaml.YAMLError) as exc:
            yield Broken(index, _problem(exc, chunk, first_line, fix, builder))
        else:
            if built is None:
                continue
            data, _ = built
            tag_problem = builder.tag_problem
            if tag_problem is not None:
                tag_problem = _problem(tag_problem, chunk, first_line, fix, builder)
                if not foreign_tags:
                    yield Broken(index, tag_problem)
                    index += 1
                    continue
            tables = functools.partial(_positions_of, chunk, first_line, fix, resolve)
            if len(chunk) > LOCATE_ABOVE:
                positions = Positions(locate=tables)
            else:
                positions = Positions(build=tables)
            yield Loaded(index, data, positions, first_line + 1, _may_hold_dollar(chunk),
                         tag_problem, "{{" in chunk)
        index += 1


def _problem(exc: YamlProblem | yaml.YAMLError, chunk: str, first_line: int,
             fix: Callable[[int, int], tuple[int, int]] | None,
             builder: DocumentBuilder) -> YamlProblem:
    """Why a document did not parse, at its position in the file."""
    if isinstance(exc, YamlProblem):
        problem = exc
    elif isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = YamlProblem(exc.problem or exc.context or "invalid YAML",
                              (mark.line if mark else 0) + first_line + 1,
                              (mark.column if mark else 0) + 1)
        # (libyaml's own depth limit never gets here: the builder reports it as our bound)
        problem.syntax = isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError))
    elif isinstance(exc, yaml.reader.ReaderError):
        # a character YAML does not allow: the position is an offset into the chunk (in
        # UTF-8 bytes when libyaml read it), counted here in the file's lines and characters
        offset = exc.position
        if builder.loader is FAST_LOADER:
            offset = len(chunk.encode("utf-8")[:offset].decode("utf-8", "ignore"))
        line = chunk.count("\n", 0, offset) + first_line + 1
        column = offset - (chunk.rfind("\n", 0, offset) + 1) + 1
        return _hinted(YamlProblem(str(exc).splitlines()[0], line, column), chunk, first_line)
    else:
        problem = YamlProblem(str(exc).splitlines()[0], first_line + 1, 1)
    if fix is not None:
        problem.line, problem.column = fix(problem.line, problem.column)
    return _hinted(problem, chunk, first_line)


# What plain YAML holds outside quoted scalars and comments, for the template test: a quote
# opens a scalar at the start of a line or after a space or flow indicator; `#` after a space
# comments; a placeholder is `{{` (Helm, Go templates) or `${` (envsubst, in a flow collection)
# (a string, compiled by re on first use: only a document that did not parse needs it)
_PLAIN_SCAN = (r"""(?:(?<=[\s\[{,:])|^)(?:"(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?)"""
               r"|(?:(?<=\s)|^)#.*|\{\{|\$\{")
_PLACEHOLDERS = ("{{", "${")


def _hinted(problem: YamlProblem, chunk: str, first_line: int) -> YamlProblem:
    """Mark the problem as templated when a placeholder stands in plain YAML where it is: on
    its line, the next (libyaml often stops at the key before a template line) or the one
    before (a template action on a line of its own breaks the structure after it), not inside
    a quoted value or a comment."""
    if "{{" in chunk or "${" in chunk:
        k = problem.line - first_line - 1
        lines = chunk.split("\n")[max(k - 1, 0):k + 2]
        problem.templated = any(m.group() in _PLACEHOLDERS for text in lines
                                for m in re.finditer(_PLAIN_SCAN, text))
    return problem


# "$" as a double-quoted scalar writes it when not as itself (hex digits only: no case)
_DOLLAR_ESCAPE = r"\\(?:x24|u0024|U00000024)"  # (compiled by re on first use)


def _may_hold_dollar(chunk: str) -> bool:
    return "$" in chunk or ("\\" in chunk and re.search(_DOLLAR_ESCAPE, chunk) is not None)


def _only_directives(chunk: str) -> bool:
    lines = [line.strip() for line in chunk.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    return bool(lines) and all(line.startswith("%") for line in lines)


# (a pattern, compiled on first use by ``re``: a chunk rarely has them, and a pattern with
# characters above U+00FF costs about 2.5 M instructions to compile)
_YAML_BREAKS = "\n|[\r\x85\u2028\u2029]"


def _odd_breaks(chunk: str) -> bool:
    """Does the chunk break a line at CR, NEL, LS or PS? (Only CR can be in ASCII text.)"""
    return "\r" in chunk or (not chunk.isascii() and any(
        char in chunk for char in ("\x85", "\u2028", "\u2029")))


def _line_fixer(chunk: str, first_line: int) -> Callable[[int, int], tuple[int, int]] | None:
    """YAML also breaks lines at CR, NEL, LS and PS; the file's lines (and editors) only at LF.
    When a chunk has such characters, map the parser's (line, column) to the file's."""
    if not _odd_breaks(chunk):
        return None
    starts = [0] + [m.end() for m in re.finditer(_YAML_BREAKS, chunk)]

    def fix(line: int, column: int) -> tuple[int, int]:
        k = line - first_line - 1
        if not 0 <= k < len(starts):
            return line, column
        start = starts[k]
        file_line = first_line + 1 + chunk.count("\n", 0, start)
        return file_line, column + start - (chunk.rfind("\n", 0, start) + 1)

    return fix


def _positions_of(
    chunk: str, first_line: int, fix: Callable[[int, int], tuple[int, int]] | None,
    resolve: Callable[[str, Any], str], wanted: frozenset[Path] | None = None,
) -> RawTables:
    """The position tables of a document that already parsed once (so this cannot fail):
    all of them, or only the ``wanted`` paths."""
    builder = DocumentBuilder(first_line, record=True, wanted=wanted, resolve=resolve)
    builder.run(chunk)
    keys, values, scalars = builder.keys, builder.values, builder.scalars
    if fix is not None:
        for table in (keys, values):
            for path, (line, column) in table.items():
                table[path] = fix(line, column)
        for path, (line, column, style) in scalars.items():
            scalars[path] = (*fix(line, column), style)
    return keys, values, scalars


def _only_comments(chunk: str) -> bool:
    for line in chunk.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped not in ("---", "..."):
            return False
    return True


def load_single(text: str) -> Loaded:
    """Parse text that must hold exactly one document (a spec or config file)."""
    docs = [d for d in load_documents(text)]
    for doc in docs:
        if isinstance(doc, Broken):
            raise doc.problem
    loaded = [d for d in docs if isinstance(d, Loaded)]
    if not loaded:
        raise YamlProblem("file is empty", 1, 1)
    if len(loaded) > 1:
        raise YamlProblem("expected one YAML document, found several", loaded[1].start_line, 1)
    return loaded[0]


