"""Text from input files never reaches a terminal raw (issue 24): escape sequences, CR, LF,
C1 controls, the line separators and bidirectional overrides in node names, event reasons,
field names and file names were written as they are by ``cluster events`` and ``cluster
check`` (and by lint's reporters in file names). Every command's output and messages go
through the one escaper; the JSON outputs keep the values exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
READ = json.loads((ROOT / "examples" / "cluster" / "cluster-read.json").read_text())
EVIL = "\x1b[31mred\x1b[0m\rX\nY\x9b2J\u2028\u202eZ\x07"
SHOWN = "\\x1b[31mred\\x1b[0m\\rX\\nY\\x9b2J\\u2028\\u202eZ\\x07"


def _raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on (line feeds end lines: allowed)."""
    return sorted({ch for ch in text if ch != "\n" and not ch.isprintable()})


def _read_with(name: str, reason: str = "TogetherPreemptionNotified") -> dict[str, object]:
    events = list(READ["node_lifecycle_events"])
    events.append({"node_name": name, "reason": reason, "timestamp": "2025-03-03T12:00:00Z"})
    events.append({"reason": "Togeth" + EVIL, "timestamp": "2025-03-03T12:00:00Z"})
    return {**READ, "node_lifecycle_events": events}


def test_cluster_events_text_escapes_input(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(_read_with("gpu-preemptible-dp-" + EVIL)))
    result = invoke(runner, ["cluster", "events", "read.json"])
    assert result.exit_code == 0
    assert _raw_controls(result.stdout) == []
    assert f"gpu-preemptible-dp-{SHOWN}" in result.stdout  # the node, on its own row
    unwrapped = re.sub(r"\n +", " ", result.stdout)  # prose is wrapped at spaces
    assert f"Togeth{SHOWN} without a node_name" in unwrapped  # a note quoting a reason
    rows = [line for line in result.stdout.splitlines() if line.startswith("gpu-")]
    nodes = {event["node_name"] for event in READ["node_lifecycle_events"]}
    assert len(rows) == len(nodes) + 1  # no line was forged or split


def test_cluster_events_json_keeps_the_values(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(_read_with("gpu-preemptible-dp-" + EVIL)))
    result = invoke(runner, ["cluster", "events", "read.json", "--format", "json"])
    assert result.exit_code == 0 and _raw_controls(result.stdout) == []
    nodes = [n["node"] for n in json.loads(result.stdout)["nodes"]]
    assert "gpu-preemptible-dp-" + EVIL in nodes


def test_cluster_check_escapes_field_names(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps({**READ, "gpu_typ" + EVIL: "H100"}))
    for fmt in ("text", "github", "junit"):
        result = invoke(runner, ["cluster", "check", "read.json", "--format", fmt])
        assert result.exit_code == 1, fmt
        assert _raw_controls(result.stdout + result.stderr) == [], fmt
        assert f"gpu_typ{SHOWN}" in result.stdout.replace("%0A", "\n"), fmt
    for fmt in ("json", "sarif"):
        result = invoke(runner, ["cluster", "check", "read.json", "--format", fmt])
        assert _raw_controls(result.stdout) == [] and json.loads(result.stdout), fmt
        assert "gpu_typ" + EVIL in result.stdout.encode().decode("unicode_escape", "ignore") \
            or "gpu_typ" + EVIL in json.dumps(json.loads(result.stdout), ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "json", "sarif"])
def test_lint_reporters_escape_file_names(runner: CliRunner, tmp_path: Path, fmt: str) -> None:
    name = "pod" + EVIL.replace("\n", "") + ".yaml"
    (tmp_path / name).write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {together.ai/compute_class: preemptible}\n"
        "  containers: [{name: a, image: b}]\n")
    result = invoke(runner, ["lint", name, "--select", "PM105", "--format", fmt])
    assert result.exit_code == 1
    assert _raw_controls(result.stdout + result.stderr) == []
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)


def test_error_messages_escape_what_they_quote(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, ["lint", "missing" + EVIL + ".yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"missing{SHOWN}.yaml: no such file or directory\n"
    (tmp_path / "read.json").write_text(json.dumps({**READ, "node_lifecycle_events": 7}))
    (tmp_path / ("r" + EVIL + ".json")).write_text("{")
    result = invoke(runner, ["cluster", "events", "r" + EVIL + ".json"])
    assert result.exit_code == 2 and result.stderr.startswith(f"r{SHOWN}.json:")
    assert result.stderr.count("\n") == 1 and _raw_controls(result.stderr) == []


def test_a_policy_s_own_text_is_escaped_wherever_shown(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    """``rules``, ``explain`` and ``policy test`` print what a policy file says (its summary,
    rationale, test names): a repository's policies are input too."""
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "p.yaml").write_text(json.dumps({
        "id": "ACME001", "slug": "evil", "severity": "error", "summary": "s" + EVIL,
        "rationale": "r" + EVIL, "fix": "f", "target": "object",
        "schema": {"required": ["metadata"]},
        "tests": [{"name": "t" + EVIL, "manifest": "apiVersion: v1\nkind: ConfigMap\n"
                   "metadata: {name: x}\n", "findings": []}]}))
    for args in (["rules", "--policies", "pol"], ["explain", "ACME001", "--policies", "pol"],
                 ["policy", "test", "pol"]):
        result = invoke(runner, args)
        assert result.exit_code == 0, (args, result.stderr)
        assert _raw_controls(result.stdout + result.stderr) == [], args
        assert "\\x1b[31mred\\x1b[0m" in result.stdout, args


def test_render_check_shows_the_committed_file_s_controls_escaped(runner: CliRunner,
                                                                   tmp_path: Path) -> None:
    """Found by the fuzzer (tests/hostile/test_fuzz.py): ``render --check`` printed the diff's
    lines as the committed file holds them, escape sequences and carriage returns included."""
    spec = ROOT / "examples" / "serving.yaml"
    rendered = invoke(runner, ["render", "-f", str(spec)]).stdout
    committed = rendered.replace("replicas: 3", "replicas: 3 # \x1b]0;owned\x07\x1b[2J\rX")
    (tmp_path / "rendered.yaml").write_text(committed)
    result = invoke(runner, ["render", "-f", str(spec), "--check", "rendered.yaml"])
    assert result.exit_code == 1
    assert _raw_controls(result.stdout) == []
    assert "-  replicas: 3 # \\x1b]0;owned\\x07\\x1b[2J\\rX\n+  replicas: 3\n" in result.stdout


def test_lint_diff_shows_the_file_s_controls_escaped(runner: CliRunner, tmp_path: Path) -> None:
    """``lint --diff`` shows lines of the linted file around each fix: the same class. YAML
    refuses C0 and C1 controls, not the bidirectional overrides ("Trojan source")."""
    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}  # \u2066evil\u2069\nspec:\n"
        "  template:\n    spec:\n      restartPolicy: Never\n"
        "      nodeSelector: {together.ai/compute-class: preemptible}\n"
        "      terminationGracePeriodSeconds: 900  # \u202eevil\n"
        "      containers: [{name: a, image: b}]\n")
    result = invoke(runner, ["lint", "--diff", "--select", "PM201", "job.yaml"])
    assert result.exit_code == 1, result.stderr
    assert _raw_controls(result.stdout) == []
    assert "-      terminationGracePeriodSeconds: 900  # \\u202eevil\n" in result.stdout
