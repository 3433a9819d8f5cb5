"""The --plot SVG: well-formed XML, one row per node, every event where it belongs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def plot(runner: CliRunner, *inputs: str, out: Path) -> ET.Element:
    result = runner.invoke(main, ["cluster", "events", *inputs, "--plot", str(out)])
    assert result.exit_code == 0, result.stderr
    return ET.parse(out).getroot()  # raises on anything that is not well-formed XML


def rows(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def test_one_row_per_node_of_the_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    root = plot(CliRunner(), "examples/cluster/cluster-read.json", out=tmp_path / "t.svg")
    assert root.tag == f"{SVG}svg"
    assert [g.get("data-node") for g in rows(root)] == [
        "gpu-preemptible-dp-4k7xq", "gpu-preemptible-dp-8m2vd", "gpu-preemptible-dp-c9r5t",
        "gpu-preemptible-dp-h3w6n", "gpu-preemptible-dp-p5z2k", "gpu-preemptible-dp-t8b1m"]
    events = [g for row in rows(root) for g in row.iter(f"{SVG}g")
              if g.get("class") == "event"]
    assert len(events) == 11  # every event of the read, each in its node's row
    titles = sorted(t.text or "" for g in events for t in g.iter(f"{SVG}title"))
    assert titles[0] == "TogetherNodeAdded at 2025-03-02T06:12:40Z"


def test_events_sit_in_time_order_inside_the_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    root = plot(CliRunner(), "examples/cluster/cluster-read.json", out=tmp_path / "t.svg")
    row = rows(root)[0]  # 4k7xq: added at the window's start, preempted 41 h later
    added = row.find(f"{SVG}g/{SVG}circle")
    preempted = row.find(f"{SVG}g/{SVG}path")
    assert added is not None and preempted is not None
    x_added = float(added.get("cx", "nan"))
    x_preempted = float((preempted.get("d") or "").split()[1]) + 6  # the triangle's tip
    width = float(root.get("width", "nan"))
    assert x_added < x_preempted < width
    assert x_preempted - x_added == pytest.approx((width - 24 - x_added) * 148025 / 200969,
                                                  abs=0.2)


def test_hostile_node_names_still_give_well_formed_xml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    names = ['gpu-preemptible-dp-<a href="x">&amp;', "gpu-dp-\x01\x1b[31m", "n" * 300,
             "gpu-preemptible-dp-\u2028\ufffe"]
    items = [{"node_name": n, "reason": "TogetherPreemptionNotified",
              "timestamp": f"2025-03-04T0{i}:00:00Z"} for i, n in enumerate(names)]
    (tmp_path / "read.json").write_text(json.dumps({"node_lifecycle_events": items}))
    root = plot(CliRunner(), "read.json", out=tmp_path / "t.svg")
    found = [g.get("data-node") for g in rows(root)]
    assert len(found) == 4
    assert 'gpu-preemptible-dp-<a href="x">&amp;' in found
    assert "gpu-dp-\ufffd\ufffd[31m" in found


def test_no_events_and_untimed_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.json").write_text('{"node_lifecycle_events": []}')
    assert rows(plot(CliRunner(), "empty.json", out=tmp_path / "a.svg")) == []
    (tmp_path / "untimed.json").write_text(json.dumps({"node_lifecycle_events": [
        {"node_name": "gpu-preemptible-dp-1", "reason": "TogetherPreemptionNotified"}]}))
    root = plot(CliRunner(), "untimed.json", out=tmp_path / "b.svg")
    (row,) = rows(root)
    assert [t.text for t in row.iter(f"{SVG}text")] == ["gpu-preemptible-dp-1", "+1 untimed"]
