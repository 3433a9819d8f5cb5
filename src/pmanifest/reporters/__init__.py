"""Reporters turn findings into text. Each module exposes ``render(findings, summary) -> str``;
modules load only when their format is asked for. May import ``catalogue`` and ``kube``;
never check code (``rules``, ``policy``, ``lint``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pmanifest.kube.document import Finding

FORMATS = ("text", "json", "sarif", "github", "junit")


@dataclass(frozen=True)
class Summary:
    """What a run checked and found, for the reporters."""

    files: int
    objects: int
    errors: int
    warnings: int
    infos: int
    skipped: int = 0  # objects of kinds pmanifest cannot read (custom resources, PM004)
    # (file, object label) of every object linted, when a reporter needs them (JUnit lists
    # passing objects too); not part of the JSON summary
    checked: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    rules: int = 0  # rules the run applied (the summary line says so)
    fragments: int = 0  # patch fragments not linted (PM007)
    profile: tuple[str, str] | None = None  # the run's profile and why (given or inferred)

    @classmethod
    def of(cls, findings: Sequence[Finding], files: int, objects: int,
           checked: tuple[tuple[str, str], ...] = (), skipped: int = 0, rules: int = 0,
           fragments: int = 0, profile: tuple[str, str] | None = None) -> Summary:
        count = {"error": 0, "warning": 0, "info": 0}
        for f in findings:
            count[f.severity] += 1
        return cls(files, objects, count["error"], count["warning"], count["info"], skipped,
                   checked, rules, fragments, profile)

    def counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {"files": self.files, "objects": self.objects,
                               "errors": self.errors, "warnings": self.warnings,
                               "infos": self.infos, "skipped": self.skipped}
        if self.profile is not None:
            out["profile"] = {"name": self.profile[0], "why": self.profile[1]}
        return out


Render = Callable[[Sequence[Finding], Summary, bool], str]


def reporter(name: str) -> Render:
    module = importlib.import_module(f"pmanifest.reporters.{name}_format")
    render: Render = module.render
    return render
