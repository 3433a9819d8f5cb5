"""Reporters turn findings into text. Each module exposes ``render(findings, summary, colour)``,
which gives the report in pieces as it makes them (a report of 20,000 findings is never whole
in memory; the findings are read as they come, twice by JUnit); ``text`` joins them. Modules load
only when their format is asked for. May import ``catalogue``, ``kube`` and ``io``; never
check code (``rules``, ``policy``, ``lint``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
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
    def of(cls, findings: Iterable[Finding], files: int, objects: int,
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


Render = Callable[[Iterable[Finding], Summary, bool], Iterator[str]]


def reporter(name: str) -> Render:
    module = importlib.import_module(f"pmanifest.reporters.{name}_format")
    render: Render = module.render
    return render


def text(name: str, findings: Iterable[Finding], summary: Summary, colour: bool = False) -> str:
    """The whole report of format ``name``."""
    return "".join(reporter(name)(findings, summary, colour))


class _Items:
    """The stand-in for the list ``json_pieces`` writes (``ITEMS``)."""


ITEMS: Any = _Items()  # stands in a JSON document for the list json_pieces writes


def json_pieces(document: dict[str, Any], items: Iterable[Any]) -> Iterator[str]:
    """``json.dumps(document, indent=2, ensure_ascii=False)`` (through ``json_text``) where
    the one value ``ITEMS`` in ``document`` is the list of ``items``, written an item at a
    time: the same text as the whole document dumped at once. ``ITEMS`` is dumped as a string
    made for this call, which nothing from the input can hold."""
    import json  # (not at import: every command reads FORMATS, few write JSON)
    import secrets

    from pmanifest.io.terminal import json_text

    mark = f"pmanifest-items-{secrets.token_hex(16)}"

    def stand_in(value: object) -> str:
        if value is ITEMS:
            return mark
        raise TypeError(f"{type(value).__name__} is not JSON")

    head, _, tail = json_text(json.dumps(document, indent=2, ensure_ascii=False,
                                         default=stand_in)).partition(json.dumps(mark))
    line = head[head.rfind("\n") + 1:]
    outer = " " * (len(line) - len(line.lstrip(" ")))
    inner = outer + "  "
    yield head
    opening = "[\n"
    for item in items:
        body = json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n" + inner)
        yield json_text(f"{opening}{inner}{body}")
        opening = ",\n"
    yield ("[]" if opening == "[\n" else f"\n{outer}]") + tail + "\n"
