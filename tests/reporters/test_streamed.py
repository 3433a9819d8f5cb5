"""Reports are made in pieces from findings held compactly: the same text as made whole, and
a run's findings are given back in order, as often as they are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pmanifest.cli.main import main
from pmanifest.io.terminal import json_text
from pmanifest.kube.document import Finding, Fix, ObjectRef
from pmanifest.lint import stored
from pmanifest.lint.stored import Stored
from pmanifest.reporters import ITEMS, Summary, json_pieces, text

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
_JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8)


@given(before=st.dictionaries(_TEXT, _JSON, max_size=3),
       after=st.dictionaries(_TEXT, _JSON, max_size=3),
       depth=st.integers(0, 3), items=st.lists(_JSON, max_size=4))
def test_json_in_pieces_is_the_document_dumped_whole(before: dict[str, Any],
                                                     after: dict[str, Any], depth: int,
                                                     items: list[Any]) -> None:
    def nest(value: Any) -> dict[str, Any]:
        document: dict[str, Any] = {**before, "the items": value, **after}
        for _ in range(depth):
            document = {"level": [document]}
        return document

    whole = json_text(json.dumps(nest(items), indent=2, ensure_ascii=False)) + "\n"
    assert "".join(json_pieces(nest(ITEMS), items)) == whole


def test_json_in_pieces_is_not_misled_by_input_that_looks_like_its_stand_in() -> None:
    """Text from the input may come before the items (SARIF lists the rules, user policies'
    among them, before the results): whatever it holds, the items go where ITEMS stands."""
    document = {"rules": ["pmanifest-items-0", "\x00items\x00"], "findings": ITEMS,
                "summary": {"profile": "pmanifest-items-"}}
    whole = json.dumps({**document, "findings": [1, 2]}, indent=2) + "\n"
    assert "".join(json_pieces(document, [1, 2])) == whole
    with pytest.raises(TypeError):  # (what is not JSON stays an error)
        "".join(json_pieces({"findings": ITEMS, "other": object()}, []))


def _finding(n: int) -> Finding:
    return Finding("PM106", "gpu-pod-best-effort", "warning" if n % 3 else "error",
                   f"dir/app-{n:05d}.yaml", n, n % 7 + 1,
                   ObjectRef("Deployment", f"app-{n}", "ml", "apps/v1"),
                   "spec.template.spec.containers[0]", f"message {n} \u00e9\u2028",
                   Fix(("spec", "template", n), {"cpu": "4", "memory": [n, None]}) if n % 2
                   else None)


@pytest.mark.parametrize("count", [0, 1, stored.BATCH - 1, stored.BATCH, 3 * stored.BATCH + 5])
def test_stored_findings_come_back_equal_in_order_every_time(count: int) -> None:
    findings = [_finding(n) for n in range(count)]
    kept = Stored(findings[: count // 2])
    kept.extend(findings[count // 2:])
    assert len(kept) == count and bool(kept) is (count > 0)
    assert list(kept) == findings
    assert list(kept) == findings  # (read again)
    assert Stored.of(kept) is kept and list(Stored.of(findings)) == findings


def test_stored_findings_are_packed_smaller_than_the_objects() -> None:
    kept = Stored(_finding(n) for n in range(4 * stored.BATCH))
    packed = sum(len(batch) for batch in kept._packed)
    assert len(kept._packed) == 4 and not kept._pending
    assert packed < 4 * stored.BATCH * 100  # (as objects, each is well over 1 KB)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_a_run_of_more_findings_than_a_batch_reports_each_once_in_order(
        tmp_path: Path, fmt: str) -> None:
    """Enough findings to pack batches, one PM004 per file (reported once per run, counted):
    stdout and --output hold the same report, every finding in input order."""
    count = stored.BATCH // 2 + 7
    for n in range(count):
        (tmp_path / f"m-{n:04d}.yaml").write_text(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
            "  terminationGracePeriodSeconds: 900\n  containers:\n  - name: c\n"
            "    image: busybox\n---\napiVersion: example.com/v1\nkind: Widget\n"
            "metadata:\n  name: w\n")
    out = tmp_path / "report.out"
    args = ["lint", "--jobs", "1", "--format", fmt, str(tmp_path), "--format", fmt,
            "--output", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.stdout == out.read_text(encoding="utf-8")
    if fmt != "json":
        return
    findings = json.loads(result.stdout)["findings"]
    rules = [f["rule"] for f in findings]
    assert rules.count("PM004") == 1 and f"({count} objects of this kind in {count} files" \
        in next(f["message"] for f in findings if f["rule"] == "PM004")
    files = [f["file"] for f in findings if f["rule"] != "PM004"]
    assert files == sorted(files) and len(set(files)) == count
    assert len(findings) == count + 1 and 2 * count > stored.BATCH  # (a batch was packed)


def _junit_whole(findings: list[Finding], summary: Summary) -> str:
    """JUnit as it was made before it was written a testcase at a time: the whole tree, then
    ``ET.indent`` (the reference the streamed text must equal)."""
    import xml.etree.ElementTree as ET

    from pmanifest.io.terminal import shown
    from pmanifest.reporters.junit_format import _clean

    cases: dict[tuple[str, str], list[Finding]] = {key: [] for key in summary.checked}
    for f in findings:
        cases.setdefault((f.file, f.object.label()), []).append(f)
    suite = ET.Element("testsuite", {
        "name": "pmanifest", "tests": str(max(len(cases), 1)),
        "failures": str(sum(1 for items in cases.values() if items)),
        "errors": "0", "skipped": "0"})
    if not cases:
        ET.SubElement(suite, "testcase", {"classname": "pmanifest", "name": "pmanifest lint"})
    for (file, label), items in cases.items():
        case = ET.SubElement(suite, "testcase", {"classname": _clean(file),
                                                 "name": _clean(label)})
        for f in items:
            failure = ET.SubElement(case, "failure", {
                "type": f.severity, "message": _clean(f"{f.rule} {f.slug}: {f.message}")})
            text = f"{shown(f.file)}:{f.line}:{f.column}: {f.severity} {f.rule}[{f.slug}] " \
                f"{shown(f.message)}"
            failure.text = _clean(text + (f"\npath: {shown(f.path)}" if f.path else ""), True)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, "unicode") + "\n"


_OBJECTS = [ObjectRef("Deployment", "a", None), ObjectRef("Job", "b", "ml"),
            ObjectRef(None, None, None), ObjectRef("Pod", "c\x1b[31m", None)]


@given(checked=st.lists(st.tuples(st.sampled_from(["x.yaml", "y.yaml"]),
                                  st.sampled_from(_OBJECTS)), max_size=5),
       found=st.lists(st.tuples(st.sampled_from(["x.yaml", "y.yaml", "z.yaml"]),
                                st.sampled_from(_OBJECTS), st.integers(1, 9)), max_size=8),
       packed=st.booleans())
def test_junit_written_a_testcase_at_a_time_is_the_whole_tree(
        checked: list[tuple[str, ObjectRef]], found: list[tuple[str, ObjectRef, int]],
        packed: bool) -> None:
    """Whatever the order of the findings against the objects (those of a testcase still to
    come are held), objects without findings, findings of no linted object, none at all."""
    findings = [Finding("PM201", "grace-period-over-limit", "error", file, line, 1, ref,
                        "spec" if line % 2 else "", f"over <{line}> & \"so\"")
                for file, ref, line in found]
    summary = Summary(2, len(checked), len(findings), 0, 0,
                      checked=tuple((file, ref.label()) for file, ref in checked))
    given_findings: list[Finding] | Stored = Stored(findings) if packed else findings
    assert text("junit", given_findings, summary) == _junit_whole(findings, summary)
