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
from collections import Counter
from collections.abc import Iterable, Iterator

from pmanifest.io.terminal import shown, shown_lines
from pmanifest.kube.document import Finding
from pmanifest.reporters import Summary

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str, lines: bool = False) -> str:
    """Text for the report: through the one escaper (CI pages show it), and what XML 1.0
    still cannot carry (lone surrogates, U+FFFE, U+FFFF) as U+FFFD."""
    return _NOT_XML.sub("\ufffd", shown_lines(text) if lines else shown(text))


Key = tuple[str, str]  # a testcase: (file, object label)


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    """The report a testcase at a time. ``findings`` is read twice (a list or a run's Stored
    findings): first how many each testcase has (the suite's counts come first), then each
    testcase with its findings, those of the testcases still to come held until they are
    written (findings come in the order of the objects, so almost none are)."""
    count: Counter[Key] = Counter((f.file, f.object.label()) for f in findings)
    cases = dict.fromkeys([*summary.checked, *count])
    suite = ET.Element("testsuite", {
        "name": "pmanifest", "tests": str(max(len(cases), 1)), "failures": str(len(count)),
        "errors": "0", "skipped": "0",
    })
    suite.text = "CASES"
    head, _, tail = ET.tostring(suite, "unicode").partition("CASES")
    yield f'<?xml version="1.0" encoding="UTF-8"?>\n{head}'
    if not cases:
        cases = {("pmanifest", "pmanifest lint"): None}
    coming = iter(findings)
    held: dict[Key, list[Finding]] = {}
    for key in cases:
        items = held.pop(key, [])
        while len(items) < count[key]:
            f = next(coming)
            if (f.file, f.object.label()) == key:
                items.append(f)
            else:
                held.setdefault((f.file, f.object.label()), []).append(f)
        yield "\n  " + _testcase(key, items)
    yield f"\n{tail}\n"


def _testcase(key: Key, items: list[Finding]) -> str:
    file, label = key
    case = ET.Element("testcase", {"classname": _clean(file), "name": _clean(label)})
    for f in items:
        failure = ET.SubElement(case, "failure", {
            "type": f.severity,
            "message": _clean(f"{f.rule} {f.slug}: {f.message}"),
        })
        text = f"{shown(f.file)}:{f.line}:{f.column}: {f.severity} {f.rule}[{f.slug}] " \
            f"{shown(f.message)}"
        failure.text = _clean(text + (f"\npath: {shown(f.path)}" if f.path else ""), True)
    ET.indent(case, level=1)
    return ET.tostring(case, "unicode")
