"""Findings reported once per run: a rule whose message names a kind, never an object (PM004,
a kind pmanifest cannot read), is kept at its first object with a count of the rest."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pmanifest.kube.document import Finding

ONCE_PER_RUN = ("PM004",)  # reported at the first object of a kind, with a count of the rest

Groups = dict[tuple[str, str], tuple[int, set[str]]]  # (rule, message) -> (objects, files)


def once_per_run(findings: Iterable[Finding]) -> Iterable[Finding]:
    """Findings of ONCE_PER_RUN rules kept once per rule and message (their messages name the
    kind and apiVersion, never the object): the first, with how many objects and files it
    stands for. The order of the others is kept. ``findings`` is read twice (it is a list
    or a Stored) and returned as it is when no rule of ONCE_PER_RUN is among them."""
    groups: Groups = {}
    for finding in findings:
        if finding.rule in ONCE_PER_RUN:
            count, files = groups.get((finding.rule, finding.message), (0, set()))
            files.add(finding.file)
            groups[finding.rule, finding.message] = (count + 1, files)
    return _once(findings, groups) if groups else findings


def _once(findings: Iterable[Finding], groups: Groups) -> Iterator[Finding]:
    said: set[tuple[str, str]] = set()
    for finding in findings:
        if finding.rule not in ONCE_PER_RUN:
            yield finding
            continue
        key = (finding.rule, finding.message)
        if key in said:
            continue
        said.add(key)
        count, files = groups[key]
        if count == 1:
            yield finding
            continue
        where = f"{len(files)} files" if len(files) > 1 else "this file"
        yield finding._replace(message=f"{finding.message} ({count} objects of this kind in "
                                       f"{where}; reported once per run)")
