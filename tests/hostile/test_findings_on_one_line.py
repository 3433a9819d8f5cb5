"""Findings on one long line (issue 24): minified JSON holds every object on one line, and each
finding scanned that whole line for an ignore comment (quadratic: 8,000 findings of a 1.7 MB
line took 18 s). Each line's comments are read once for the document; the figure is in
``bench/hostile.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke


def test_ignore_comments_of_a_line_are_read_once(runner: CliRunner, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each finding scanned its whole line for an ignore comment: minified JSON holds every
    finding on one line (quadratic: 8,000 findings of a 1.7 MB line took 18 s)."""
    from pmanifest.lint import suppress

    calls: list[int] = []
    original = suppress.comment_names
    monkeypatch.setattr(suppress, "comment_names",
                        lambda line: calls.append(len(line)) or original(line))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"nodeSelector": {"together.ai/compute_class": "preemptible"},
                    "containers": [{"name": "a", "image": "b"}]}}
    (tmp_path / "all.json").write_text(json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [pod] * 300}))
    result = invoke(runner, ["lint", "all.json", "--select", "PM105"])
    assert result.exit_code == 1 and result.stdout.count("PM105") == 300
    assert len(calls) <= 2, len(calls)  # the line, and the line above it (none)


def test_an_ignore_comment_still_suppresses_each_finding_of_its_line(
        runner: CliRunner, tmp_path: Path) -> None:
    pod = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d"}, "spec": '
           '{"nodeSelector": {"together.ai/compute_class": "preemptible"}, "containers": '
           '[{"name": "a", "image": "b"}]}}')
    items = ", ".join(pod % i for i in range(50))
    (tmp_path / "all.yaml").write_text(
        '{"apiVersion": "v1", "kind": "List", "items": [' + items + "]}"
        "  # pmanifest: ignore=PM105 reason=generated\n")
    result = invoke(runner, ["lint", "all.yaml", "--select", "PM105"])
    assert (result.exit_code, result.stdout) == (0, "")
