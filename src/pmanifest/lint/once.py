"""Findings reported once per run: a rule whose message names a kind, never an object (PM004,
a kind pmanifest cannot read), is kept at its first object with a count of the rest."""

from __future__ import annotations

from pmanifest.kube.document import Finding

ONCE_PER_RUN = ("PM004",)  # reported at the first object of a kind, with a count of the rest


def once_per_run(findings: list[Finding]) -> list[Finding]:
    """Findings of ONCE_PER_RUN rules kept once per rule and message (their messages name the
    kind and apiVersion, never the object): the first, with how many objects and files it
    stands for. The order of the others is kept."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    out: list[Finding | tuple[str, str]] = []
    for finding in findings:
        if finding.rule not in ONCE_PER_RUN:
            out.append(finding)
            continue
        key = (finding.rule, finding.message)
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(finding)
    return [item if isinstance(item, Finding) else _counted(groups[item]) for item in out]


def _counted(same: list[Finding]) -> Finding:
    first = same[0]
    if len(same) == 1:
        return first
    files = len({f.file for f in same})
    where = f"{files} files" if files > 1 else "this file"
    return first._replace(message=f"{first.message} ({len(same)} objects of this kind in "
                                  f"{where}; reported once per run)")
