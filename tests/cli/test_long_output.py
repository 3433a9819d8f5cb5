"""A long report reaches stdout whole: written in pieces cut after a newline (so a colour
escape, which click strips off a pipe, never spans two pieces), byte for byte the report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pmanifest.io.writing import ECHO_PIECE, _pieces

RED, RESET = "\x1b[31m", "\x1b[0m"


def test_pieces_are_cut_after_a_newline_and_make_the_text() -> None:
    line = f"f.yaml:1:1: {RED}error{RESET} PM101[x] " + "m" * 70 + "\n"
    text = line * (3 * ECHO_PIECE // len(line))
    pieces = list(_pieces(text))
    assert len(pieces) >= 3
    assert "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces)
    assert all(len(p) <= ECHO_PIECE for p in pieces)


def test_a_line_longer_than_a_piece_stays_whole() -> None:
    text = "a\n" + "b" * (2 * ECHO_PIECE) + "\nc\n" + "d" * 10
    pieces = list(_pieces(text))
    assert "".join(pieces) == text
    assert "b" * (2 * ECHO_PIECE) + "\n" in pieces
    assert pieces[-1].endswith("d" * 10)  # no newline at the end: the rest as it is


def test_short_text_is_one_piece() -> None:
    assert list(_pieces("x\n")) == ["x\n"]
    assert list(_pieces("")) == [""]


def test_a_long_coloured_report_through_a_pipe_is_whole_and_plain(tmp_path: Path) -> None:
    """``--color always`` is not asked: off a terminal, colours are stripped from every piece."""
    doc = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: api-{n}}}\nspec:\n"
           "  template:\n    spec:\n      nodeSelector: {{together.ai/compute-class: "
           "preemptible}}\n      containers: [{{name: c, image: i, resources: {{limits: "
           "{{nvidia.com/gpu: 1}}}}}}]\n")
    files = 600
    for n in range(files):
        (tmp_path / f"d{n:04}.yaml").write_text(doc.format(n=n), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pmanifest", "lint", "--jobs", "1",
                             "--select", "PM101", str(tmp_path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == files and len(result.stdout) > 2 * ECHO_PIECE
    assert "\x1b" not in result.stdout
    assert all(" error PM101[serving-on-preemptible] " in line for line in lines)
    assert sorted(lines) == lines  # in input order, none lost or doubled
