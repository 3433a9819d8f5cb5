"""``file:line:col: severity id[slug] message``, one finding a line (the file and the message
through the one escaper: what they quote from input never acts on the terminal)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pmanifest.io.terminal import shown
from pmanifest.kube.document import Finding
from pmanifest.reporters import Summary

_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    for f in findings:
        severity = f"{_COLOURS[f.severity]}{f.severity}{_RESET}" if colour else f.severity
        yield (f"{shown(f.file)}:{f.line}:{f.column}: {severity} {f.rule}[{f.slug}] "
               f"{shown(f.message)}\n")


def summary_line(summary: Summary) -> str:
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    checked = [plural(summary.objects, "object")]
    if summary.fragments:
        checked.append(f"{plural(summary.fragments, 'patch fragment')} skipped")
    if summary.rules:  # (a lint run always applies PM001; other commands do not count rules)
        checked.append(plural(summary.rules, "rule"))
    return (
        f"{plural(summary.errors, 'error')}, {plural(summary.warnings, 'warning')}, "
        f"{summary.infos} info in {plural(summary.files, 'file')} ({', '.join(checked)})"
    )
