"""Exact behaviour of ``pmanifest cluster check``."""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmanifest.cli.main import main
from tests.hypothesis_profiles import examples

ROOT = Path(__file__).resolve().parents[2]
MISTAKES = "examples/cluster/create-command-mistakes.sh"


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(ROOT)
    return CliRunner()


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def check(runner: CliRunner, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(main, ["cluster", "check", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_the_examples_are_clean(in_repo: CliRunner) -> None:
    for name in ("create-request.json", "update-request.json", "cluster-read.json",
                 "create-command.sh"):
        assert check(in_repo, f"examples/cluster/{name}") == (0, "", "")


def test_every_mistake_at_its_place_in_the_command_line(in_repo: CliRunner) -> None:
    code, out, err = check(in_repo, MISTAKES)
    assert code == 1
    assert out == (
        f"{MISTAKES}:3:1: error PM503[no-standard-node] no --num-gpus: every cluster needs at "
        "least one standard node; set --num-gpus (8 GPUs a node)\n"
        f"{MISTAKES}:9:26: error PM501[preemptible-gpus-not-multiple-of-8] "
        "--num-preemptible-gpus 12 is not a multiple of 8 (preemptible capacity comes in whole "
        "8-GPU nodes); use 8 or 16\n"
        f"{MISTAKES}:9:26: error PM502[preemptible-without-project] --num-preemptible-gpus 12 "
        "needs a project: pass --project (or set TOGETHER_PROJECT_ID)\n"
        f"{MISTAKES}:9:26: error PM504[preemptible-on-slurm] --num-preemptible-gpus 12 on a "
        "SLURM cluster: preemptible compute is for Kubernetes clusters only (Slurm is not "
        "supported yet)\n")
    assert err == "4 errors, 0 warnings, 0 info in 1 file (1 request)\n"


def test_unknown_body_fields_and_flags_are_reported(runner: CliRunner, tmp_path: Path) -> None:
    """A misspelt field or flag leaves the one it meant unchecked: PM506, with the closest
    known name (the request had passed as clean)."""
    (tmp_path / "body.json").write_text('{"name": "llm", "cluster_type": "KUBERNETES", '
                                        '"num_gpus": 8,\n "nmu_preemptible_gpus": 12}\n')
    assert check(runner, "body.json") == (1, (
        "body.json:2:2: error PM506[unknown-cluster-field] unknown field nmu_preemptible_gpus: "
        "the cluster API documents no such field, so its value is not checked and not what the "
        "cluster gets; did you mean num_preemptible_gpus?\n"),
        "1 error, 0 warnings, 0 info in 1 file (1 request)\n")
    (tmp_path / "create.sh").write_text(
        "tg beta clusters create --name llm --cluster-type KUBERNETES --num-gpus 8 \\\n"
        "  --num-preemptable-gpus 12 --project p --colour blue\n")
    assert check(runner, "create.sh") == (1, (
        "create.sh:2:3: error PM506[unknown-cluster-field] unknown flag --num-preemptable-gpus: "
        "the cluster API documents no such flag, so its value is not checked and not what the "
        "cluster gets; did you mean --num-preemptible-gpus?\n"
        "create.sh:2:41: error PM506[unknown-cluster-field] unknown flag --colour: the cluster "
        "API documents no such flag, so its value is not checked and not what the cluster gets; "
        "remove it (known flags: --billing-type, --cluster-type, --cuda-version, --gpu-type, "
        "--name, --num-gpus, --num-preemptible-gpus, --nvidia-driver-version, --project, "
        "--region)\n"), "2 errors, 0 warnings, 0 info in 1 file (1 request)\n")


def test_json_report(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "create.json").write_text(json.dumps(
        {"name": "llm", "region": "us-central-8", "num_gpus": 8, "num_preemptible_gpus": 12,
         "project_id": "p"}, indent=2))
    code, out, _ = check(runner, "create.json", "--format", "json")
    assert code == 1
    assert json.loads(out) == {
        "findings": [{
            "rule": "PM501", "slug": "preemptible-gpus-not-multiple-of-8", "severity": "error",
            "file": "create.json", "line": 5, "column": 27,
            "object": {"kind": "Cluster", "name": "llm", "namespace": None},
            "path": "num_preemptible_gpus",
            "message": "num_preemptible_gpus 12 is not a multiple of 8 (preemptible capacity "
                       "comes in whole 8-GPU nodes); use 8 or 16"}],
        "summary": {"files": 1, "objects": 1, "errors": 1, "warnings": 0, "infos": 0,
                    "skipped": 0}}


def test_sarif_github_and_junit_in_one_run(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(
        {"cluster_id": "c-1", "num_gpus": 16, "desired_preemptible_gpus": 32,
         "allocated_preemptible_gpus": 0}))
    code, out, err = check(runner, "read.json", "--format", "sarif", "--output", "r.sarif",
                           "--format", "junit", "--output", "r.xml", "--format", "github",
                           "--fail-on", "info")
    assert (code, err) == (1, "")
    assert out == ("::notice file=read.json,line=1,col=101,title=PM505 "
                   "preemptible-allocation-far-below-target::allocated_preemptible_gpus 0 is "
                   "less than half the target of 32: preemptible nodes are still filling in, or "
                   "capacity is tight; pods pinned to preemptible nodes wait for it\n")
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("PM505", "note")
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (1, 101)
    suite = ET.parse(tmp_path / "r.xml").getroot()
    assert [c.get("name") for c in suite.iter("testcase")] == ["Cluster/?"]


def test_info_does_not_fail_by_default_and_disable(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps(
        {"cluster_id": "c-1", "num_gpus": 16, "desired_preemptible_gpus": 32,
         "allocated_preemptible_gpus": 0}))
    code, out, _ = check(runner, "read.json")
    assert code == 0 and "PM505" in out
    assert check(runner, "read.json", "--disable", "preemptible-allocation-far-below-target"
                 ) == (0, "", "")


def test_as_overrides_the_guess(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "body.yaml").write_text("num_preemptible_gpus: 8\n")
    assert check(runner, "body.yaml")[0] == 0  # an update: the cluster may have its project
    code, out, _ = check(runner, "body.yaml", "--as", "create")
    assert code == 1
    assert out == (
        "body.yaml:1:1: error PM503[no-standard-node] no num_gpus: every cluster needs at least "
        "one standard node; set num_gpus (8 GPUs a node)\n"
        "body.yaml:1:23: error PM502[preemptible-without-project] num_preemptible_gpus 8 needs "
        "a project: add project_id\n")


def test_stdin(runner: CliRunner) -> None:
    code, out, _ = check(runner, "-", stdin="tg beta clusters update c-1 --num-gpus 0\n")
    assert (code, out) == (1, "<stdin>:1:40: error PM503[no-standard-node] --num-gpus 0: every "
                              "cluster needs at least one standard node (preemptible nodes are "
                              "added to it, never alone)\n")


@pytest.mark.parametrize(("text", "message"), [
    ('{"apiVersion": "v1", "kind": "List", "items": []}',
     "x.json:1:1: a Kubernetes object, not a cluster request (lint it with `pmanifest lint`)"),
    ('{"replicas": 3}', "x.json:1:1: no field of a cluster request or read (num_gpus, "
                        "num_preemptible_gpus, project_id, ...)"),
    ("tg beta clusters list\n", "x.json:1:1: expected `tg beta clusters create ...` or `tg beta "
                                "clusters update ID ...`"),
    ("\xff", "x.json:1:1: file is not valid UTF-8 text"),
])
def test_bad_input_is_one_line_and_exit_2(runner: CliRunner, tmp_path: Path, text: str,
                                          message: str) -> None:
    (tmp_path / "x.json").write_bytes(text.encode("latin-1"))
    assert check(runner, "x.json", "--format", "json", "--output", "r.json") == (
        2, "", message + "\n")
    assert not (tmp_path / "r.json").exists()


def test_a_report_never_replaces_an_input(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('{"num_gpus": 8}')
    code, out, err = check(runner, "c.json", "--format", "json", "--output", "c.json")
    assert (code, out) == (2, "")
    assert err == ("c.json: --output is one of the inputs: writing there would destroy it; "
                   "choose another path\n")
    assert (tmp_path / "c.json").read_text() == '{"num_gpus": 8}'


_FIELDS = st.sampled_from(["name", "cluster_type", "num_gpus", "num_preemptible_gpus",
                           "project_id", "desired_preemptible_gpus",
                           "allocated_preemptible_gpus", "cluster_id", "gpu_type", "kind"])
_VALUES = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=False) | st.text(max_size=8)
           | st.sampled_from(["SLURM", "slurm", "KUBERNETES", "H100_SXM", "8", "-8"])
           | st.lists(st.integers(), max_size=2))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_FIELDS, _VALUES, max_size=8),
       st.sampled_from([None, "create", "update", "read"]))
def test_any_request_body_gives_findings_or_one_line(body: dict[str, object],
                                                     kind: str | None) -> None:
    args = ["cluster", "check", "-", "--format", "json"] + (["--as", kind] if kind else [])
    result = CliRunner().invoke(main, args, input=json.dumps(body))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    if result.exit_code in (0, 1):
        json.loads(result.stdout)
    else:
        assert result.exit_code == 2, result.stderr
        assert result.stdout == "" and result.stderr.count("\n") == 1


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_FIELDS, _VALUES, max_size=8), st.integers(0, 20), st.integers(0, 20))
def test_any_cluster_against_a_workload_never_crashes(
    body: dict[str, object], gpus: int, replicas: int
) -> None:
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "cluster.json").write_text(json.dumps(body))
        Path(tmp, "m.yaml").write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n"
            f"  replicas: {replicas}\n  selector: {{matchLabels: {{a: b}}}}\n  template:\n"
            "    metadata: {labels: {a: b}}\n    spec:\n      nodeName: gpu-dp-1\n"
            "      containers:\n        - name: c\n          image: x\n"
            f"          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n")
        result = runner.invoke(main, ["lint", str(Path(tmp, "m.yaml")), "--cluster",
                                      str(Path(tmp, "cluster.json"))])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 1, 2), result.stderr
