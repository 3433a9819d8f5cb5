"""Test assertions among the files of a lint run: patterns a test harness matches against live
objects, not objects anyone applies.

Chainsaw and kuttl run end-to-end tests as steps over the files of a directory. Some files are
applied (objects like any other: linted), others are assertions and expected errors: partial
patterns holding only the fields to compare (a status alone, no selector, no containers), often
with JMESPath expressions as keys (``(contains(keys(labels), 'x')): true``). Linted as objects
they report missing fields that were never meant to be there. A file is an assertion when

- a chainsaw test in its directory (``chainsaw-test.yaml`` or ``.yml``) names it, as a path or
  a glob, in an ``assert`` or ``error`` operation of a step (``try``, ``catch``, ``finally``,
  ``cleanup``); every other file of that directory is linted;
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
from typing import Any

from pmanifest.lint.kustomize import search_dirs
from pmanifest.lint.sources import FileRef, Problem, Source
from pmanifest.loader.documents import Loaded, YamlProblem, decode, load_documents

CHAINSAW_TESTS = ("chainsaw-test.yaml", "chainsaw-test.yml")
SUITES = ("kuttl-test.yaml", "kuttl-test.yml", ".chainsaw.yaml", ".chainsaw.yml")
CONVENTION = re.compile(r"^\d+-(?:assert|errors?)(?:[-_.][^/]*)?\.ya?ml$")
ASSERTING = ("assert", "error")  # the chainsaw operations whose files are patterns
BLOCKS = ("try", "catch", "finally", "cleanup")
# a key that is a JMESPath expression: parenthesised (after chainsaw's `~` iteration marker)
# and more than a field name (Kyverno's anchors, `(name)`, are field names)
_EXPRESSION = re.compile(r"^~?[\w.-]*\((.*)\)$", re.DOTALL)
_FIELD = re.compile(r"^[A-Za-z_][\w.-]*$")


def mark_assertions(items: list[FileRef | Source | Problem]) -> list[FileRef | Source | Problem]:
    """The inputs, with ``assertion`` set on every file a test harness reads as one."""
    finder = _Finder()
    return [item._replace(assertion=harness)
            if isinstance(item, FileRef) and (harness := finder.harness(item.path)) else item
            for item in items]


class _Finder:
    """What decides whether a file is an assertion, looked up once per directory."""

    def __init__(self) -> None:
        self.tests: dict[str, tuple[str, list[str]] | None] = {}  # dir -> (test, patterns)
        self.suites: dict[str, str | None] = {}  # dir -> the suite file at or above it
        self.cwd = os.path.realpath(os.curdir)

    def harness(self, path: str) -> str | None:
        """The harness file that reads ``path`` as an assertion, or None."""
        directory = os.path.realpath(os.path.dirname(path) or os.curdir)
        if directory not in self.tests:
            self.tests[directory] = _chainsaw_test(directory)
        test = self.tests[directory]
        if test is not None:
            shown, patterns = test
            real = os.path.join(directory, os.path.basename(path))
            return shown if any(fnmatch.fnmatch(real, p) for p in patterns) else None
        if CONVENTION.match(os.path.basename(path)) is None:
            return None
        return self.suite(directory)

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


def _chainsaw_test(directory: str) -> tuple[str, list[str]] | None:
    """The chainsaw test of a (real) directory and the patterns of the files of its assert and
    error operations (real paths), or None when it has none that can be read."""
    for name in CHAINSAW_TESTS:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            text = _text(path)
            if text is None:
                return None
            return path, [os.path.normpath(os.path.join(directory, p)) for p in _asserted(text)]
    return None


def _asserted(text: str) -> Iterator[str]:
    for item in load_documents(text):
        spec = item.data.get("spec") if isinstance(item, Loaded) and isinstance(
            item.data, dict) else None
        steps = spec.get("steps") if isinstance(spec, dict) else None
        for step in steps if isinstance(steps, list) else []:
            for block in BLOCKS:
                operations = step.get(block) if isinstance(step, dict) else None
                for operation in operations if isinstance(operations, list) else []:
                    yield from _operation_files(operation)


def _operation_files(operation: Any) -> Iterator[str]:
    for key in ASSERTING:
        body = operation.get(key) if isinstance(operation, dict) else None
        file = body.get("file") if isinstance(body, dict) else None
        if isinstance(file, str) and file:
            yield file


def _text(path: str) -> str | None:
    from pmanifest.io.limits import MAX_KUSTOMIZATION_BYTES
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        raw, _ = read_limited(path, MAX_KUSTOMIZATION_BYTES, regular_only=True)
        return decode(raw)
    except (OSError, Unreadable, YamlProblem):
        return None


def is_pattern(data: Any) -> bool:
    """Does a document hold a JMESPath expression as a key (a chainsaw assertion tree)?"""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and _is_expression(key):
                    return True
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _is_expression(key: str) -> bool:
    match = _EXPRESSION.match(key)
    return match is not None and _FIELD.match(match.group(1).strip()) is None
