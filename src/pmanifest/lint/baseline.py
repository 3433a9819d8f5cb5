"""A baseline: the findings a repository had when it adopted pmanifest, so a gate fails only on
new ones (``lint --write-baseline FILE`` records them, ``--baseline FILE`` or the config's
``baseline:`` reads them).

A finding is recorded by what it is about, never by where it happens to be: its rule, its
file (relative to the baseline's directory, so the gate may run from anywhere), its object
(API group, kind, namespace and name: the version is left out, an object moved from
``batch/v1beta1`` to ``batch/v1`` is the same object) and the path in that object
(``spec.template.spec.terminationGracePeriodSeconds``). Lines, columns and messages are not
part of it, so moving an object, reformatting a file or a rule's new wording keep it matched.
A finding about no object (a YAML syntax error, a suppression comment that suppresses
nothing) is recorded by its rule, file and message, with line numbers in the message left
out. The same fingerprint may stand for several findings (one script, several hits): the
baseline keeps a count, and only that many are matched.

What the baseline holds that no finding matches any more (fixed, or the object renamed) is
reported on stderr, so the file shrinks: ``--write-baseline`` again drops it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from pmanifest.errors import ConfigError
from pmanifest.io.writing import Target
from pmanifest.kube.document import Finding
from pmanifest.lint.stored import Stored

VERSION = 1
STDIN = "<stdin>"
_LINE = re.compile(r"\b(lines?) \d+(?:(?:, | and | to |-)\d+)*")
_NULLABLE = {"type": ["string", "null"]}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "findings"],
    "properties": {
        "comment": {"type": "string"},
        "version": {"const": VERSION},
        "findings": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["rule", "file", "path", "count"],
            "properties": {
                "rule": {"type": "string", "minLength": 1},
                "file": {"type": "string", "minLength": 1},
                "apiVersion": _NULLABLE, "kind": _NULLABLE, "namespace": _NULLABLE,
                "name": _NULLABLE,
                "path": {"type": "string"},
                "message": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
            },
        }},
    },
}
COMMENT = ("pmanifest lint baseline: findings recorded with `pmanifest lint --write-baseline`; "
           "a run given it reports only the others")


class Key(NamedTuple):
    """What a finding is, whatever its line: see the module's docstring."""

    rule: str
    file: str
    group: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    path: str
    message: str  # only for a finding about no object ("" otherwise)


class Entry(NamedTuple):
    """One fingerprint of a baseline file, as written there."""

    key: Key
    times: int  # the findings it stands for (the file's "count")
    record: dict[str, Any]  # the entry as the file holds it (for what no longer matches)


class Baseline(NamedTuple):
    """A baseline file read: its entries, and the directory its files are relative to."""

    source: str
    base: str
    entries: tuple[Entry, ...]


class Split(NamedTuple):
    """A run's findings against a baseline."""

    new: Stored
    matched: int  # findings the baseline holds (not reported)
    stale: list[dict[str, Any]]  # entries (with the count left) that matched no finding


def _group(api_version: str | None) -> str | None:
    if api_version is None:
        return None
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _file(name: str, base: str) -> str:
    """A finding's file as the baseline writes it: relative to its directory, with ``/``."""
    if name == STDIN:
        return name
    try:
        relative = os.path.relpath(os.path.abspath(name), base)
    except ValueError:  # another drive
        relative = os.path.abspath(name)
    return relative.replace(os.sep, "/")


def _message(text: str) -> str:
    return _LINE.sub(r"\1 N", text)


def key_of(finding: Finding, base: str) -> Key:
    obj = finding.object
    about = obj.kind is not None or obj.name is not None
    return Key(finding.rule, _file(finding.file, base), _group(obj.api_version), obj.kind,
               obj.namespace, obj.name, finding.path, "" if about else _message(finding.message))


def _record(key: Key, finding: Finding, count: int) -> dict[str, Any]:
    return {"rule": key.rule, "file": key.file, "apiVersion": finding.object.api_version,
            "kind": key.kind, "namespace": key.namespace, "name": key.name,
            "path": key.path, "message": finding.message, "count": count}


def baseline_text(findings: Iterable[Finding], path: str) -> str:
    """The baseline file recording ``findings`` (sorted, one entry per fingerprint)."""
    base = os.path.dirname(os.path.abspath(path))
    counts: Counter[Key] = Counter()
    first: dict[Key, Finding] = {}
    for finding in findings:
        key = key_of(finding, base)
        counts[key] += 1
        first.setdefault(key, finding)
    records = [_record(key, first[key], counts[key])
               for key in sorted(counts, key=lambda k: tuple(str(part) for part in k))]
    body = {"comment": COMMENT, "version": VERSION, "findings": records}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def read_baseline(path: str) -> Baseline:
    """The baseline at ``path``, through the one reader; ConfigError (file, line, column) when
    it is missing or is no baseline."""
    from pmanifest.io.reading import Unreadable, read_limited
    from pmanifest.loader.documents import YamlProblem, decode
    from pmanifest.schema.datafile import load_data

    try:
        raw, _ = read_limited(path, regular_only=True)
        data, _ = load_data(decode(raw), path, SCHEMA, "the baseline")
    except (Unreadable, OSError) as exc:
        reason = exc.reason if isinstance(exc, Unreadable) else (exc.strerror or str(exc))
        raise ConfigError(f"cannot read the baseline: {reason}; write one with "
                          f"`pmanifest lint PATH... --write-baseline {path}`", path) from None
    except YamlProblem as problem:
        raise ConfigError(problem.message, path, problem.line, problem.column) from None
    base = os.path.dirname(os.path.abspath(path))
    entries = tuple(Entry(Key(r["rule"], r["file"], _group(r.get("apiVersion")), r.get("kind"),
                              r.get("namespace"), r.get("name"), r["path"],
                              "" if r.get("kind") is not None or r.get("name") is not None
                              else _message(r.get("message", ""))), r["count"], r)
                    for r in data["findings"])
    return Baseline(path, base, entries)


def split(findings: Iterable[Finding], baseline: Baseline) -> Split:
    """The findings the baseline does not hold, how many it does, and its entries (each with
    what is left of its count) that matched no finding."""
    left: Counter[Key] = Counter()
    for entry in baseline.entries:
        left[entry.key] += entry.times
    new = Stored()
    matched = 0
    for finding in findings:
        key = key_of(finding, baseline.base)
        if left[key] > 0:
            left[key] -= 1
            matched += 1
        else:
            new.extend((finding,))
    stale = []
    for entry in baseline.entries:
        unused = min(left[entry.key], entry.times)
        if unused:
            left[entry.key] -= unused
            stale.append({**entry.record, "count": unused})
    return Split(new, matched, stale)


SHOWN_STALE = 20  # entries that no longer match, listed one a line; the rest are counted


class Adoption(NamedTuple):
    """A lint run's baseline: the one it reads (``--baseline``, else the config's, unless
    ``--no-baseline``), or the file it writes (``--write-baseline``, with what that file
    held before, to say what changed)."""

    reading: Baseline | None = None
    writing: str | None = None
    before: Baseline | None = None

    @classmethod
    def of(cls, given: str | None, write: str | None, none: bool,
           configured: str | None) -> Adoption:
        """Read what the run needs, before any manifest: the baseline, or what the file to
        write holds (refusing to replace a file that is no baseline)."""
        if write is not None:
            before = None
            if os.path.lexists(write):
                try:
                    before = read_baseline(write)
                except ConfigError as exc:
                    raise ConfigError(f"--write-baseline would replace a file that is not a "
                                      f"pmanifest baseline ({exc.message}); choose another "
                                      "path", write) from None
            return cls(writing=write, before=before)
        path = None if none else (given or configured)
        return cls(reading=read_baseline(path) if path is not None else None)

    def targets(self) -> list[Target]:
        return [] if self.writing is None else [Target("--write-baseline", self.writing,
                                                       update=True)]

    def apply(self, findings: Stored) -> tuple[Stored, dict[Target, str], list[str]]:
        """(the findings to report, the file to write, the lines to say on stderr)."""
        if self.writing is not None:
            text = baseline_text(findings, self.writing)
            return Stored(), {self.targets()[0]: text}, [self._written(findings)]
        if self.reading is None:
            return findings, {}, []
        found = split(findings, self.reading)
        return found.new, {}, _notes(found, self.reading.source)

    def _written(self, findings: Stored) -> str:
        said = f"pmanifest: recorded {_count(len(findings), 'finding')} in {self.writing}"
        if self.before is None:
            return said + "; give it to --baseline (or `baseline:` in the config)"
        found = split(findings, self.before)
        dropped = sum(entry["count"] for entry in found.stale)
        return (f"{said} ({len(found.new)} not in it before, {dropped} dropped that matched "
                "no finding any more)")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _notes(found: Split, source: str) -> list[str]:
    notes = []
    if found.matched:
        notes.append(f"pmanifest: {_count(found.matched, 'finding')} held by the baseline "
                     f"{source} not reported")
    if found.stale:
        stale = sum(entry["count"] for entry in found.stale)
        notes.append(f"pmanifest: {_count(stale, 'baseline finding')} of {source} matched "
                     "nothing (fixed, or the object renamed); `pmanifest lint ... "
                     f"--write-baseline {source}` drops them:")
        for entry in found.stale[:SHOWN_STALE]:
            about = "/".join(str(part) for part in (entry.get("namespace"), entry.get("kind"),
                                                    entry.get("name")) if part is not None)
            times = f" ({entry['count']} times)" if entry["count"] > 1 else ""
            notes.append(f"  {entry['file']}: {entry['rule']} {about or '(file)'} "
                         f"{entry['path']}{times}".rstrip())
        if len(found.stale) > SHOWN_STALE:
            notes.append(f"  and {len(found.stale) - SHOWN_STALE} more")
    return notes
