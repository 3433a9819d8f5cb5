"""What linting one file adds up to: ``Collected`` while its documents are linted, a
``FileResult`` (picklable, for parallel runs) once it is done."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.kube.document import Finding
from pmanifest.lint.passover import PLACEHOLDER

if TYPE_CHECKING:
    from pmanifest.cluster.demand import Demand


class FileResult(NamedTuple):
    """What linting one file gave: findings and counts."""

    findings: list[Finding]
    objects: int  # Kubernetes objects seen
    labels: tuple[str, ...] = ()  # their labels, with LintOptions.record_objects
    demands: tuple[Demand, ...] = ()  # GPU demand of its workloads (with --cluster)
    skipped: int = 0  # objects of kinds pmanifest cannot read (PM004), reported or not
    fragments: int = 0  # patch fragments seen and not linted (PM007)
    foreign: int = 0  # YAML documents that are no Kubernetes object (no apiVersion and kind)
    passed: tuple[tuple[str, int], ...] = ()  # what was passed over, how many (lint.passover)



@dataclass
class Collected:
    """What one file's documents add up to."""

    findings: list[Finding] = field(default_factory=list)
    objects: int = 0
    labels: list[str] = field(default_factory=list)
    demands: list[Demand] = field(default_factory=list)
    skipped: int = 0  # objects of kinds pmanifest cannot read
    fragments: int = 0
    foreign: int = 0  # documents without apiVersion and kind: another tool's YAML
    passed: Counter[str] = field(default_factory=Counter)  # test assertions, placeholders
    used: set[tuple[int, str]] = field(default_factory=set)  # (comment line, rule) it hid
    broken: bool = False  # a document did not parse (its comments suppressed nothing)

    def add(self, other: Collected) -> None:
        """Add what ``other`` (some documents of the same file) collected."""
        self.findings += other.findings
        self.objects += other.objects
        self.labels += other.labels
        self.demands += other.demands
        self.skipped += other.skipped
        self.fragments += other.fragments
        self.foreign += other.foreign
        for key, n in other.passed.items():  # (PLACEHOLDER is a mark of the file, not a count)
            self.passed[key] = (self.passed[key] or n) if key == PLACEHOLDER else \
                self.passed[key] + n
        self.used |= other.used
        self.broken |= other.broken

    def result(self, *, counted_only: bool = False) -> FileResult:
        """The file's result (``counted_only``: leave out what was passed over no time)."""
        passed = tuple((k, n) for k, n in self.passed.items() if n or not counted_only)
        return FileResult(sorted(self.findings, key=Finding.sort_key), self.objects,
                          tuple(self.labels), tuple(self.demands), self.skipped,
                          self.fragments, self.foreign, passed)


__all__ = ["Collected", "FileResult"]
