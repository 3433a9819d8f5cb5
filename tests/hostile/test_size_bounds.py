"""Work in proportion to the input (issue 24): what grew faster than its input is bounded by
its size. These tests check the bound itself (what is computed, how often), not a time; the
figures are in ``bench/hostile.py``."""

from __future__ import annotations

import difflib
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
READ = json.loads((ROOT / "examples" / "cluster" / "cluster-read.json").read_text())
SPEC = (ROOT / "examples" / "finetune-sigterm.yaml").read_text()


def test_the_events_table_is_not_padded_to_the_longest_name(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    """Every row was padded to the longest node name: 0.8 MB of events took over 2 GiB."""
    events = list(READ["node_lifecycle_events"])
    events.append({"node_name": "gpu-preemptible-dp-" + "x" * 20_000,
                   "reason": "TogetherNodeAdded", "timestamp": "2025-03-02T07:00:00Z"})
    (tmp_path / "read.json").write_text(json.dumps({**READ, "node_lifecycle_events": events}))
    result = invoke(runner, ["cluster", "events", "read.json"])
    assert result.exit_code == 0
    rows = [line for line in result.stdout.splitlines() if line.startswith("gpu-")]
    long_row = next(row for row in rows if "x" * 20_000 in row)
    assert all(len(row) < 150 for row in rows if row is not long_row)
    header = next(line for line in result.stdout.splitlines() if line.startswith("node "))
    assert header.startswith("node" + " " * 59 + "  compute")
    names = [row.split("  ")[0] for row in rows if row is not long_row]
    assert all(len(row) - len(row.lstrip()) == 0 for row in rows) and names


def test_a_short_node_column_still_fits_its_names(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(READ))
    result = invoke(runner, ["cluster", "events", "read.json"])
    header = next(line for line in result.stdout.splitlines() if line.startswith("node "))
    width = max(len(e["node_name"]) for e in READ["node_lifecycle_events"])
    assert header == f"{'node':<{width}}  compute      preemptions  observed  preempted at"


def _apply(old: list[str], diff: str) -> list[str]:
    """A unified diff applied to ``old`` (hunks in order, context checked)."""
    out: list[str] = []
    at = 0
    lines = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(lines):
        header = lines[i]
        assert header.startswith("@@ -"), header
        start = int(header[4:].split(",")[0].split(" ")[0])
        begin = start - 1 if not header.startswith("@@ -0,0") else 0
        if header.split(" ")[1].endswith(",0"):
            begin = start
        out.extend(old[at:begin])
        at = begin
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][0], lines[i][1:]
            if tag in " -":
                assert old[at] == text, (at, old[at], text)
                at += 1
            if tag in " +":
                out.append(text)
            i += 1
    return out + old[at:]


def test_a_drift_diff_is_bounded_and_applies(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """``render --check`` on a reordered file ran difflib over every line (57,600 lines took
    40-56 s): past MAX_DIFF_LINES what differs is one hunk, which still applies."""
    from pmanifest.render.output import check_drift

    unified = difflib.unified_diff

    def bounded(a: list[str], b: list[str], *args: object, **kwargs: object) -> object:
        assert max(len(a), len(b)) <= 20_000, "difflib over the whole file"  # MAX_DIFF_LINES
        return unified(a, b, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib, "unified_diff", bounded)
    rendered = [f"line {i}\n" for i in range(25_000)]
    shuffled = rendered[:10] + random.Random(7).sample(rendered[10:-10],
                                                        len(rendered) - 20) + rendered[-10:]
    (tmp_path / "committed.yaml").write_text("".join(shuffled))
    diff = check_drift("".join(rendered), str(tmp_path / "committed.yaml"))
    assert diff.startswith(f"--- {tmp_path / 'committed.yaml'} (committed)\n")
    assert _apply(shuffled, diff) == rendered
    assert diff.count("\n@@ ") == 1 and diff.splitlines()[2] == (
        f"@@ -8,{len(rendered) - 14} +8,{len(rendered) - 14} @@")


def test_a_small_drift_is_still_difflibs(tmp_path: Path) -> None:
    from pmanifest.render.output import check_drift

    rendered = [f"line {i}\n" for i in range(100)]
    committed = list(rendered)
    committed[50] = "changed\n"
    (tmp_path / "committed.yaml").write_text("".join(committed))
    diff = check_drift("".join(rendered), str(tmp_path / "committed.yaml"))
    assert diff == "".join(difflib.unified_diff(
        committed, rendered, fromfile=f"{tmp_path / 'committed.yaml'} (committed)",
        tofile=f"{tmp_path / 'committed.yaml'} (rendered now)"))
    assert _apply(committed, diff) == rendered


@pytest.mark.parametrize("growth", ["all new", "all gone", "appended"])
def test_one_hunk_diffs_apply_at_the_edges(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           growth: str) -> None:
    from pmanifest.io import limits
    from pmanifest.render.output import check_drift

    monkeypatch.setattr(limits, "MAX_DIFF_LINES", 5)
    base = [f"line {i}\n" for i in range(30)]
    committed, rendered = {"all new": ([], base), "all gone": (base, []),
                           "appended": (base, base + ["more\n"] * 12)}[growth]
    (tmp_path / "committed.yaml").write_text("".join(committed))
    diff = check_drift("".join(rendered), str(tmp_path / "committed.yaml"))
    assert _apply(committed, diff) == rendered


def test_shell_inlining_is_budgeted_in_bytes() -> None:
    """A 10 KB function body called 2,000 times (a 14 KB script) stayed within the budget of
    steps and was copied 2,000 times (350 KB of that took over 2 GiB); the bytes the walk
    records are bounded by the script's size."""
    from pmanifest.shell import analyse

    script = "f() { echo " + "A" * 10_000 + "; }\ntrap 'f; exit 143' TERM\n" + "f\n" * 2_000
    facts = analyse(script)
    assert facts.opaque == "too much text to read once the script's functions are inlined"
    few = "f() { echo " + "A" * 10_000 + "; }\ntrap 'f; exit 143' TERM\n" + "f\n" * 3
    assert analyse(few).opaque == "" and len(analyse(few).traps) == 1


def test_the_shell_parser_is_bounded_on_broken_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter's error recovery is quadratic on some broken text (60 KB of ``a=(`` took
    15-91 s); the parse stops in proportion to the script's size (here made small, so that
    the test is quick whatever the machine), and the script is opaque."""
    from pmanifest.io import limits
    from pmanifest.shell import walker

    valid = "trap 'exit 143' TERM\n" + "echo hi\n" * 2_000
    assert walker.analyse.__wrapped__(valid).opaque == ""  # within the real, generous bound
    assert limits.SHELL_PARSE_SECONDS >= 1.0
    monkeypatch.setattr(walker, "SHELL_PARSE_SECONDS", 0.05)
    monkeypatch.setattr(walker, "SHELL_PARSE_SECONDS_PER_KIB", 0.0)
    facts = walker.analyse.__wrapped__("a=(" * 8_000)
    assert facts.opaque.startswith("it did not parse in the time its size allows")


def test_a_short_script_is_parsed_whole_and_nothing_of_it_is_kept() -> None:
    """tree-sitter keeps every bytes object a read callback returns (a tree of 20,000 pods
    kept 3 MiB of their scripts): a script up to SHELL_PARSE_WHOLE_BYTES is parsed whole and
    no reference to it stays; a longer one goes through the callback, which can stop."""
    import sys
    import time

    from pmanifest.io.limits import SHELL_PARSE_WHOLE_BYTES
    from pmanifest.shell import walker

    broken = b"a=(" * SHELL_PARSE_WHOLE_BYTES  # what tree-sitter recovers from slowly
    short = broken[:SHELL_PARSE_WHOLE_BYTES]
    before = sys.getrefcount(short)
    for _ in range(3):  # past its deadline before it starts, and parsed all the same
        assert walker.parse(short, time.monotonic() - 1).root_node.type == "program"
    assert sys.getrefcount(short) == before
    with pytest.raises(walker._Opaque):  # one byte longer: stopped, opaque
        walker.parse(broken[:SHELL_PARSE_WHOLE_BYTES + 1], time.monotonic() - 1)
