"""Test assertions among the files of a lint run: patterns a test harness matches against live
objects, not objects anyone applies.

Chainsaw and kuttl run end-to-end tests as steps over the files of a directory. Some files are
applied (objects like any other: linted), others are assertions and expected errors: partial
patterns holding only the fields to compare (a status alone, no selector, no containers), often
with JMESPath expressions as keys (``(contains(keys(labels), 'x')): true``). Linted as objects
they report missing fields that were never meant to be there. A file is an assertion when

- a chainsaw test in its directory (``chainsaw-test.yaml`` or ``.yml``) names it, as a path or
  a glob, in an ``assert`` or ``error`` operation of a step (``try``, ``catch``, ``finally``,
  ``cleanup``); every other file of that directory is linted, but one its ``patch`` operation
  names, or one it applies whose every object an earlier assertion found and nothing the test
  applied before made (it changes what an operator made), is a patch fragment (PM007);
- or, in a directory without a chainsaw test, its name follows the step convention kuttl and
  chainsaw share (``NN-assert*.yaml``, ``NN-error*.yaml``) and a test suite's configuration
  (``kuttl-test.yaml``, ``.chainsaw.yaml``) stands in its directory or above it (up to the
  current directory or the repository root, as kustomizations are looked for).

A document with a JMESPath expression as a key (:func:`is_pattern`) is one wherever it is. The
engine passes assertions over and the run counts them in a note.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from pmanifest.lint.kustomize import search_dirs
from pmanifest.lint.sources import FileRef, Problem, Source
from pmanifest.loader.documents import Loaded, YamlProblem, decode, load_documents

CHAINSAW_TESTS = ("chainsaw-test.yaml", "chainsaw-test.yml")
SUITES = ("kuttl-test.yaml", "kuttl-test.yml", ".chainsaw.yaml", ".chainsaw.yml")
CONVENTION = re.compile(r"^\d+-(?:assert|errors?)(?:[-_.][^/]*)?\.ya?ml$")
ASSERTING = ("assert", "error")  # the chainsaw operations whose files are patterns
APPLYING = ("apply", "create", "update", "patch")  # ... and those that send objects
BLOCKS = ("try", "catch", "finally", "cleanup")
# a key that is a JMESPath expression: parenthesised (after chainsaw's `~` iteration marker)
# and more than a field name (Kyverno's anchors, `(name)`, are field names)
_EXPRESSION = r"(?s)^~?[\w.-]*\((.*)\)$"
_OPENERS = ("(", "~")
_FIELD = r"^[A-Za-z_][\w.-]*$"


def mark_assertions(items: list[FileRef | Source | Problem]) -> list[FileRef | Source | Problem]:
    """The inputs, with ``assertion`` set on every file a test harness reads as one, and
    ``patch_of`` on every file a chainsaw test patches live objects with."""
    finder = _Finder()
    out: list[FileRef | Source | Problem] = []
    for item in items:
        if isinstance(item, FileRef) and item.patch_of is None:
            harness = finder.harness(item.path)
            if harness is not None and harness[1] == "assertion":
                item = item._replace(assertion=harness[0])
            elif harness is not None:
                item = item._replace(patch_of=harness[0])
        out.append(item)
    return out


class _Finder:
    """What decides whether a file is an assertion, looked up once per directory."""

    def __init__(self) -> None:
        self.tests: dict[str, _Test | None] = {}
        self.suites: dict[str, str | None] = {}  # dir -> the suite file at or above it
        self.cwd = os.path.realpath(os.curdir)

    def harness(self, path: str) -> tuple[str, str] | None:
        """(the harness file, "assertion") when it reads ``path`` as an assertion, (the test,
        "patch_of") when a chainsaw test patches live objects with it, else None."""
        directory = os.path.realpath(os.path.dirname(path) or os.curdir)
        if directory not in self.tests:
            self.tests[directory] = _chainsaw_test(directory)
        test = self.tests[directory]
        if test is not None:
            real = os.path.join(directory, os.path.basename(path))
            if any(fnmatch.fnmatch(real, p) for p in test.asserted):
                return test.path, "assertion"
            return (test.path, "patch_of") if real in test.patches else None
        if CONVENTION.match(os.path.basename(path)) is None:
            return None
        suite = self.suite(directory)
        return None if suite is None else (suite, "assertion")

    def suite(self, directory: str) -> str | None:
        if directory not in self.suites:
            found = None
            for place in search_dirs(directory, self.cwd):
                found = next((os.path.join(place, n) for n in SUITES
                              if os.path.isfile(os.path.join(place, n))), None)
                if found is not None:
                    break
            self.suites[directory] = found
        return self.suites[directory]


class _Test(NamedTuple):
    """A chainsaw test: its file, the patterns of the files it asserts with (real paths), and
    the files it patches live objects with."""

    path: str
    asserted: list[str]
    patches: set[str]


def _chainsaw_test(directory: str) -> _Test | None:
    """The chainsaw test of a (real) directory, or None when it has none that can be read."""
    for name in CHAINSAW_TESTS:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            text = _text(path)
            return None if text is None else _read_test(_shown(path), directory, text)
    return None


def _read_test(path: str, directory: str, text: str) -> _Test:
    """Walk the test's operations in order: what its assertions found exists; a file applied
    to objects that exist and that the test did not make patches them."""
    test = _Test(path, [], set())
    found: set[tuple[str, str]] = set()  # (kind, name) an assertion found
    made: set[tuple[str, str]] = set()  # (kind, name) the test applied or created
    for operation, file in _operations(text):
        real = os.path.normpath(os.path.join(directory, file))
        if operation in ASSERTING:
            test.asserted.append(real)
            found |= _objects(real)
        elif operation in APPLYING:
            objects = _objects(real)
            exists = all((kind, name) in found or (kind, "") in found for kind, name in objects)
            if operation == "patch" or (objects and exists and not objects & made):
                test.patches.add(real)
            made |= objects
    return test


def _operations(text: str) -> Iterator[tuple[str, str]]:
    """(operation, file) of every operation of the test's steps that names a file, in order."""
    for item in load_documents(text):
        spec = item.data.get("spec") if isinstance(item, Loaded) and isinstance(
            item.data, dict) else None
        steps = spec.get("steps") if isinstance(spec, dict) else None
        for step in steps if isinstance(steps, list) else []:
            for block in BLOCKS:
                operations = step.get(block) if isinstance(step, dict) else None
                for operation in operations if isinstance(operations, list) else []:
                    yield from _named_files(operation)


def _named_files(operation: Any) -> Iterator[tuple[str, str]]:
    for key in (*ASSERTING, *APPLYING):
        body = operation.get(key) if isinstance(operation, dict) else None
        file = body.get("file") if isinstance(body, dict) else None
        if isinstance(file, str) and file:
            yield key, file


def _objects(path: str) -> set[tuple[str, str]]:
    """(kind, name) of the objects of a file named by a test, the name empty where it gives
    none (an assertion by labels: any object of the kind); none when it is a glob or cannot
    be read."""
    text = _text(path) if os.path.isfile(path) else None
    out = set()
    for item in load_documents(text) if text is not None else ():
        data = item.data if isinstance(item, Loaded) else None
        meta = data.get("metadata") if isinstance(data, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(data, dict):
            out.add((str(data.get("kind")), name if isinstance(name, str) else ""))
    return out


def _text(path: str) -> str | None:
    from pmanifest.io.limits import MAX_KUSTOMIZATION_BYTES
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        raw, _ = read_limited(path, MAX_KUSTOMIZATION_BYTES, regular_only=True)
        return decode(raw)
    except (OSError, Unreadable, YamlProblem):
        return None


# where a key may end in a parenthesis: `)` right before a key's colon (found fast: a literal)
# (patterns here are strings, compiled by re on first use: most runs never need them)
_CLOSE = r"(?m)\)[\"']?[ \t]*:(?:[ \t]|$)"


def may_hold_pattern(text: str) -> bool:
    """Can a document of ``text`` hold a JMESPath key (a cheap test before the walk): a line
    (or a list item, or a flow mapping) that starts a key with a parenthesis (or chainsaw's
    ``~``) and closes it right before the colon?"""
    if "(" not in text:
        return False
    for match in re.finditer(_CLOSE, text):
        head = text[text.rfind("\n", 0, match.start()) + 1:match.start()].lstrip(" \t-")
        if head[:1] in _OPENERS or "{(" in head or ", (" in head:
            return True
    return False


def is_pattern(data: Any) -> bool:
    """Does a document hold a JMESPath expression as a key (a chainsaw assertion tree)?"""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and key[:1] in _OPENERS and _is_expression(key):
                    return True
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _is_expression(key: str) -> bool:
    match = re.match(_EXPRESSION, key)
    return match is not None and re.match(_FIELD, match.group(1).strip()) is None


def _shown(path: str) -> str:
    """A harness file as findings name files: relative to the current directory inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative
