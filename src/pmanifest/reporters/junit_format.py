"""JUnit XML for GitLab (``artifacts:reports:junit``) and Jenkins.

One ``<testsuite name="pmanifest">``; one ``<testcase>`` per linted object (``classname``
the file, ``name`` ``kind/name`` with the namespace when set; file-level findings such as
PM001 under ``(file)``), passing when clean, with one ``<failure>`` per finding (``type`` the
severity; ``failures`` counts the failed testcases, as JUnit does). A run that linted no
object is one passing testcase, ``pmanifest lint``, so the report is never empty. Built with
``xml.etree`` so escaping is right; control characters are written as the one escaper writes
them, and what XML 1.0 cannot carry otherwise becomes U+FFFD.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator

from pmanifest.io.terminal import shown, shown_lines
from pmanifest.kube.document import Finding
from pmanifest.reporters import Summary

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str, lines: bool = False) -> str:
    """Text for the report: through the one escaper (CI pages show it), and what XML 1.0
    still cannot carry (lone surrogates, U+FFFE, U+FFFF) as U+FFFD."""
    return _NOT_XML.sub("\ufffd", shown_lines(text) if lines else shown(text))


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    """The report whole (a testcase gathers its object's findings; every object linted is
    one, so the tree is built before it is written)."""
    cases: dict[tuple[str, str], list[Finding]] = {key: [] for key in summary.checked}
    for f in findings:
        cases.setdefault((f.file, f.object.label()), []).append(f)
    failed = sum(1 for items in cases.values() if items)
    suite = ET.Element("testsuite", {
        "name": "pmanifest", "tests": str(max(len(cases), 1)), "failures": str(failed),
        "errors": "0", "skipped": "0",
    })
    if not cases:
        ET.SubElement(suite, "testcase", {"classname": "pmanifest", "name": "pmanifest lint"})
    for (file, label), items in cases.items():
        case = ET.SubElement(suite, "testcase", {"classname": _clean(file),
                                                 "name": _clean(label)})
        for f in items:
            failure = ET.SubElement(case, "failure", {
                "type": f.severity,
                "message": _clean(f"{f.rule} {f.slug}: {f.message}"),
            })
            text = f"{shown(f.file)}:{f.line}:{f.column}: {f.severity} {f.rule}[{f.slug}] " \
                f"{shown(f.message)}"
            failure.text = _clean(text + (f"\npath: {shown(f.path)}" if f.path else ""), True)
    ET.indent(suite)
    yield '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, "unicode") + "\n"
