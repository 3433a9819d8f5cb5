"""Numbers from input (issue 24): an integer of more than 4,300 digits in any base, a count
past what floats hold, a resource quantity past 64 bits, a non-finite duration. Each was an
internal error (exit 3); each is now a finding or exit 2 at its position, in every command
that reads one, and the numbers just inside the bounds still work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "examples" / "finetune-sigterm.yaml").read_text()
READ = json.loads((ROOT / "examples" / "cluster" / "cluster-read.json").read_text())
TOO_LONG = "integer of more than 4,300 digits (the most pmanifest reads)"
# the same huge value in the spellings of an integer that Python converts without the
# 4,300-digit limit (power-of-two bases): str() of the result then failed (sexagesimal
# `1:20` is a string, as kubectl reads it)
HUGE = {
    "hex": "0x" + "f" * 5000,
    "octal": "0" + "7" * 6000,
    "octal-0o": "0o" + "7" * 6000,
    "binary": "0b" + "1" * 20000,
    "decimal": "9" * 5000,
}
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n"
       "  terminationGracePeriodSeconds: {value}\n  containers: [{{name: a, image: b}}]\n")


@pytest.mark.parametrize("spelling", sorted(HUGE))
def test_lint_reports_a_huge_integer_at_its_place(runner: CliRunner, tmp_path: Path,
                                                  spelling: str) -> None:
    (tmp_path / "pod.yaml").write_text(POD.format(value=HUGE[spelling]))
    result = invoke(runner, ["lint", "pod.yaml", "--select", "PM001"])
    assert (result.exit_code, result.stdout) == (
        1, f"pod.yaml:5:34: error PM001[yaml-syntax-error] {TOO_LONG}\n")


def test_an_integer_of_4300_digits_is_read(runner: CliRunner, tmp_path: Path) -> None:
    """The bound is the one Python converts by: just inside it, the value is read (and PM002
    says what Kubernetes makes of it)."""
    for value in ("9" * 4300, "0x" + "f" * 3500, ":".join(["59"] * 2000)):
        (tmp_path / "pod.yaml").write_text(POD.format(value=value))
        result = invoke(runner, ["lint", "pod.yaml", "--select", "PM001", "--select", "PM002"])
        assert result.exit_code == 1 and "PM001" not in result.stdout, result.stdout
        assert "PM002[schema-invalid] spec.terminationGracePeriodSeconds" in result.stdout


def test_render_refuses_a_huge_integer(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        SPEC.replace("gracePeriodSeconds: 300", "gracePeriodSeconds: " + HUGE["hex"]))
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    line = SPEC[:SPEC.index("gracePeriodSeconds: 300")].count("\n") + 1
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"spec.yaml:{line}:27: {TOO_LONG}; fix the YAML\n")


@pytest.mark.parametrize("command", [["cluster", "check"], ["cluster", "events"]])
def test_cluster_files_refuse_a_huge_integer(runner: CliRunner, tmp_path: Path,
                                             command: list[str]) -> None:
    text = json.dumps(READ, indent=1).replace('"num_gpus": 16', '"num_gpus": ' + HUGE["hex"])
    (tmp_path / "read.json").write_text(text)
    result = invoke(runner, [*command, "read.json"])
    assert result.exit_code == 2 and result.stdout == "", result.stdout
    assert result.stderr.startswith("read.json:") and TOO_LONG in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_policy_file_with_a_huge_integer(runner: CliRunner, tmp_path: Path) -> None:
    policies = tmp_path / "pol"
    policies.mkdir()
    (policies / "p.yaml").write_text(
        "id: ACME001\nslug: big\nseverity: error\nsummary: s\nrationale: r\nfix: f\n"
        "target: podSpec\nschema:\n  properties:\n    terminationGracePeriodSeconds:\n"
        f"      maximum: {HUGE['octal']}\n")
    for args in (["policy", "test", "pol"], ["lint", "x.yaml", "--policies", "pol"]):
        result = invoke(runner, args)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", f"pol/p.yaml:11:16: invalid YAML: {TOO_LONG}\n"), args


def test_a_saved_command_line_with_a_5000_digit_number(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    (tmp_path / "create.sh").write_text(
        "tg beta clusters create --name a --num-gpus 8 --num-preemptible-gpus "
        + "9" * 5000 + "\n")
    result = invoke(runner, ["cluster", "check", "create.sh"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"create.sh:1:70: {TOO_LONG}\n")
    (tmp_path / "create.sh").write_text(
        "tg beta clusters create --name a --num-gpus 8 --num-preemptible-gpus "
        + "9" * 4300 + "\n")
    result = invoke(runner, ["cluster", "check", "create.sh"])
    assert result.exit_code == 1 and "is not a multiple of 8" in result.stdout


def test_pyproject_with_a_huge_integer(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.pmanifest]\nfailOn = {HUGE['hex']}\n")
    (tmp_path / "pod.yaml").write_text(POD.format(value=30))
    result = invoke(runner, ["lint", "pod.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"{tmp_path / 'pyproject.toml'}: [tool.pmanifest]: {TOO_LONG}\n"
    (tmp_path / "pyproject.toml").write_text("[tool.pmanifest]\nfailOn = " + "9" * 5000)
    result = invoke(runner, ["lint", "pod.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"{tmp_path / 'pyproject.toml'}: [tool.pmanifest]: {TOO_LONG}\n"


@pytest.mark.parametrize("exponent", [304, 310, 400])
@pytest.mark.parametrize("field", ["allocated_preemptible_gpus", "desired_preemptible_gpus"])
def test_a_gpu_count_beyond_any_float(runner: CliRunner, tmp_path: Path, exponent: int,
                                      field: str) -> None:
    """A count the history multiplies by seconds in floats, or PM505 by 0.5: OverflowError."""
    (tmp_path / "read.json").write_text(json.dumps({**READ, field: 10**exponent}))
    result = invoke(runner, ["cluster", "events", "read.json"])
    line = json.dumps({**READ, field: 0}).count("\n") + 1
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"read.json:{line}:") and \
        f"{field} is beyond any GPU count (more than 2^53)" in result.stderr
    result = invoke(runner, ["cluster", "check", "read.json"])
    assert result.exit_code in (0, 1)


def test_pm505_compares_huge_counts_exactly(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(
        {**READ, "desired_preemptible_gpus": 8 * 10**310, "allocated_preemptible_gpus": 8}))
    result = invoke(runner, ["cluster", "check", "read.json", "--fail-on", "info"])
    assert result.exit_code == 1 and "PM505" in result.stdout
    (tmp_path / "read.json").write_text(json.dumps(
        {**READ, "desired_preemptible_gpus": 8 * 10**310,
         "allocated_preemptible_gpus": 4 * 10**310}))
    result = invoke(runner, ["cluster", "check", "read.json", "--fail-on", "info"])
    assert "PM505" not in result.stdout  # exactly half is not below half


@pytest.mark.parametrize("value", ["nan", "inf", "-nan", "Infinity", "1e999"])
def test_checkpoint_seconds_must_be_finite(runner: CliRunner, tmp_path: Path,
                                           value: str) -> None:
    (tmp_path / "read.json").write_text(json.dumps(READ))
    result = invoke(runner, ["cluster", "events", "read.json", "--checkpoint-seconds", value])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"Invalid value for '--checkpoint-seconds': {value!r} is not a finite number of " \
           "seconds" in result.stderr


@pytest.mark.parametrize("where", ["requests", "limits", "sizeLimit"])
def test_a_quantity_beyond_64_bits_in_a_spec(runner: CliRunner, tmp_path: Path,
                                              where: str) -> None:
    """Was refused by the built-in template's output check: an internal error."""
    big = "99999999999999999999999999"
    text = {"requests": SPEC.replace('cpu: "32"', f"cpu: {big}"),
            "limits": SPEC.replace('requests: {cpu: "32", memory: 256Gi}',
                                   f'requests: {{cpu: "32", memory: 256Gi}}\n      '
                                   f'limits: {{memory: {big}}}'),
            "sizeLimit": SPEC.replace("sizeLimit: 64Gi", f"sizeLimit: {big}")}[where]
    (tmp_path / "spec.yaml").write_text(text)
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"must be at most 9223372036854775807, got {big}; change the value" in \
        result.stderr and result.stderr.startswith("spec.yaml:")
    (tmp_path / "spec.yaml").write_text(text.replace(big, str(2**62)))
    assert invoke(runner, ["render", "-f", "spec.yaml"]).exit_code in (0, 2)


def test_every_integer_of_the_spec_is_bounded() -> None:
    """The class: an integer of the spec that reaches a template as a number has a maximum
    within int64 (the built-in templates refuse any integer beyond 64 bits, and that is an
    internal error). Command arguments and env values are passed as their text."""
    from pmanifest.render.spec import schema_json

    unbounded = []

    def walk(node: object, path: tuple[object, ...]) -> None:
        if isinstance(node, dict):
            types = node.get("type")
            types = types if isinstance(types, list) else [types]
            as_text = "integers are passed as their decimal text" in \
                str(node.get("description", "")) or "A value (quote" in \
                str(node.get("description", ""))
            if "integer" in types and not as_text and not (
                    node.get("minimum", -(2**64)) >= -(2**63) and
                    node.get("maximum", 2**64) <= 2**63 - 1):
                unbounded.append(".".join(map(str, path)))
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))

    walk(json.loads(schema_json()), ())
    assert unbounded == []
