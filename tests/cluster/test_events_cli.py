"""Exact behaviour of ``pmanifest cluster events``: output, edge cases, errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmanifest.cli.main import main
from tests.hypothesis_profiles import examples

ROOT = Path(__file__).resolve().parents[2]
READ = "examples/cluster/cluster-read.json"
KUBECTL = "examples/cluster/kubectl-events.json"

EXPECTED_READ = """\
source: examples/cluster/cluster-read.json (cluster read, 11 events; time field:
  timestamp)
  preemptible GPUs: target 32, allocated 24
window: 2025-03-02T06:12:40Z to 2025-03-04T14:02:09Z (55.8 h, the events' own
  span)

node                      compute      preemptions  observed  preempted at
gpu-preemptible-dp-4k7xq  preemptible            1    41.1 h  2025-03-03T23:19:45Z
gpu-preemptible-dp-8m2vd  preemptible            1    14.9 h  2025-03-02T21:07:33Z
gpu-preemptible-dp-c9r5t  preemptible            1    29.5 h  2025-03-03T11:48:02Z
gpu-preemptible-dp-h3w6n  preemptible            0    47.8 h  -
gpu-preemptible-dp-p5z2k  preemptible            1    35.5 h  2025-03-04T14:02:09Z
gpu-preemptible-dp-t8b1m  preemptible            0     9.1 h  -

preemptions: 4 on 4 nodes; 289.7 preemptible node-hours observed
mean time between preemptions per node: 72.4 h

checkpoint sizing: a 90 s checkpoint, a job on 4 preemptible nodes, profile
  together
  drain window: fits (90 s of 290 s: grace period cap 300 s - supervisor margin
    10 s); a checkpoint at the notice keeps the work
  mean time between interruptions of the job: 18.1 h (per node / 4)
  periodic checkpoint: every 56 min (Daly's higher-order optimum; Young's sqrt(2
    x 90 s x 18.1 h) = 57 min)
  expected GPU time lost: 5.2 % (checkpoints and work done again; restart time
    not counted)
  (periodic checkpoints bound the loss when a checkpoint at the notice fails)

notes:
  - 2 live preemptible nodes without an event in the window
    (allocated_preemptible_gpus 24 in examples/cluster/cluster-read.json, 8 GPUs
    a node) counted as up all along
  - the mean rests on 4 preemptions: it is rough (its relative error is about
    1/sqrt(4))
  - the API keeps node_lifecycle_events for 72 hours and this window is 55.8 h:
    save reads regularly and pass them together for a longer history
"""


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: prose is wrapped to 80 columns
    return CliRunner()


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return CliRunner()


def events(runner: CliRunner, *args: str, stdin: str | None = None) -> Result:
    return runner.invoke(main, ["cluster", "events", *args], input=stdin)


def read_with(items: list[dict[str, object]], **extra: object) -> str:
    return json.dumps({"cluster_name": "c", **extra, "node_lifecycle_events": items}, indent=1)


def ev(node: str, reason: str, time: str | None) -> dict[str, object]:
    event: dict[str, object] = {"node_name": node, "reason": reason}
    if time is not None:
        event["timestamp"] = time
    return event


P = "TogetherPreemptionNotified"
A = "TogetherNodeAdded"


# --- the examples -------------------------------------------------------------------------------

def test_cluster_read_example_exact_text(in_repo: CliRunner) -> None:
    result = events(in_repo, READ, "--nodes", "4")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == EXPECTED_READ


def test_cluster_read_example_json(in_repo: CliRunner) -> None:
    result = events(in_repo, READ, "--nodes", "4", "--format", "json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["window"] == {"start": "2025-03-02T06:12:40Z", "end": "2025-03-04T14:02:09Z",
                                 "seconds": 200969.0, "given": False}
    assert [(n["node"], n["preemptions"]) for n in payload["nodes"]] == [
        ("gpu-preemptible-dp-4k7xq", 1), ("gpu-preemptible-dp-8m2vd", 1),
        ("gpu-preemptible-dp-c9r5t", 1), ("gpu-preemptible-dp-h3w6n", 0),
        ("gpu-preemptible-dp-p5z2k", 1), ("gpu-preemptible-dp-t8b1m", 0)]
    assert (payload["preemptions"], payload["countedPreemptions"], payload["unseenNodes"]) == (
        4, 4, 2)
    # the six nodes' up time (640,812 s) + 2 unseen nodes x the 200,969 s window
    assert payload["exposureSeconds"] == 640812 + 2 * 200969
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 1042750 / 4
    sizing = payload["sizing"]
    assert sizing["jobMeanSecondsBetweenInterruptions"] == pytest.approx(1042750 / 16, abs=1e-3)
    job = 1042750 / 16
    young = (2 * 90 * job) ** 0.5
    daly = young * (1 + (90 / (2 * job)) ** 0.5 / 3 + 90 / (18 * job)) - 90
    # Daly's is the recommended interval, with both labelled beside it
    assert sizing["intervalSeconds"] == sizing["dalyIntervalSeconds"] == pytest.approx(
        daly, abs=1e-3)
    assert sizing["youngIntervalSeconds"] == pytest.approx(young, abs=1e-3)
    assert (sizing["fitsDrainWindow"], sizing["drainWindowSeconds"], sizing["basis"]) == (
        True, 300, "estimate")


MEASURED = ("window", "nodes", "preemptions", "timedPreemptions", "countedPreemptions",
            "exposureSeconds", "unseenNodes", "meanSecondsBetweenPreemptionsPerNode", "basis")


@pytest.mark.parametrize("files", [[READ], [KUBECTL], [READ, KUBECTL]])
def test_the_profile_never_changes_what_the_events_measure(in_repo: CliRunner,
                                                           files: list[str]) -> None:
    """--profile sizes the checkpoint (its grace period cap); the nodes, exposure and mean time
    between preemptions come from the events alone, whichever profile is named. It once
    counted a Together node that was never preempted only under the together profile (its
    name prefix), so gke and aks gave another mean from the same read."""
    from pmanifest.kube.profile import profile_names

    measured = {}
    for name in profile_names():
        payload = json.loads(events(in_repo, *files, "--profile", name, "--format",
                                    "json").stdout)
        measured[name] = {key: payload[key] for key in MEASURED}
    assert len(profile_names()) >= 4
    together = measured["together"]
    assert all(m == together for m in measured.values()), {
        n: m["meanSecondsBetweenPreemptionsPerNode"] for n, m in measured.items()}
    if files == [READ]:  # never-preempted nodes are counted as observed preemptible nodes
        assert together["meanSecondsBetweenPreemptionsPerNode"] == 1042750 / 4
        assert {n["node"]: n["compute"] for n in together["nodes"]}[
            "gpu-preemptible-dp-h3w6n"] == "preemptible"


def test_a_standard_node_stays_out_of_the_exposure_under_every_profile(
        runner: CliRunner, tmp_path: Path) -> None:
    """The positive around it: a standard node's events (its name a standard prefix) add no
    preemptible exposure under any profile, and an unknown name only counts once preempted."""
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("cpu-node-7", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "2025-03-04T06:00:00Z"),
    ]))
    for name in ("together", "gke", "aks", "karpenter"):
        payload = json.loads(events(runner, "read.json", "--profile", name,
                                    "--format", "json").stdout)
        computes = {n["node"]: (n["compute"], n["observedSeconds"]) for n in payload["nodes"]}
        assert computes == {"gpu-preemptible-dp-1": ("preemptible", 6 * 3600.0),
                            "gpu-dp-1": ("standard", None),
                            "cpu-node-7": ("unknown", None)}, name
        assert payload["exposureSeconds"] == 6 * 3600.0


def test_kubectl_example_keeps_only_preemptions_of_nodes(in_repo: CliRunner) -> None:
    result = events(in_repo, KUBECTL, "--format", "json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["sources"][0]["kind"] == "kubectl events"
    assert [(n["node"], [e["reason"] for e in n["events"]]) for n in payload["nodes"]] == [
        ("gpu-preemptible-dp-p5z2k", [P]), ("gpu-preemptible-dp-t8b1m", [P]),
        ("gpu-preemptible-dp-x6j3r", [P])]
    # the first preemption opens the window: the mean divides 38:18 + 48:54 (min:s) by 2
    assert payload["countedPreemptions"] == 2
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == (2298 + 2934) / 2


def test_reads_and_kubectl_lists_merge_one_event_per_node_and_reason(in_repo: CliRunner) -> None:
    result = events(in_repo, READ, KUBECTL, "--format", "json")
    payload = json.loads(result.stdout)
    assert payload["preemptions"] == 6  # p5z2k's is in both
    assert payload["notes"][0] == (
        "examples/cluster/kubectl-events.json:34: TogetherPreemptionNotified for "
        "gpu-preemptible-dp-p5z2k again (also at examples/cluster/cluster-read.json:22); "
        "counted once, as the API deduplicates by node and reason")
    # at the read's last event (14:02:09) t8b1m and x6j3r were up: 3 live - 2 = 1 unseen
    assert payload["unseenNodes"] == 1


# --- edge cases ---------------------------------------------------------------------------------

def test_no_events(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([]))
    result = events(runner, "read.json")
    assert result.exit_code == 0
    assert result.stdout == """\
source: read.json (cluster read, 0 events; time field: none found)
window: none (no usable timestamp)

no node events

preemptions: 0 on 0 nodes; 0.0 preemptible node-hours observed
mean time between preemptions per node: cannot be estimated (see notes)

checkpoint sizing: a 90 s checkpoint, a job on 1 preemptible node, profile
  together
  drain window: fits (90 s of 290 s: grace period cap 300 s - supervisor margin
    10 s); a checkpoint at the notice keeps the work
  periodic checkpoint: needs a mean time between preemptions

notes:
  - no events: nothing to estimate
  - no node event in the 72 hours the API keeps node_lifecycle_events
"""


def test_one_event_has_no_interval(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([ev("gpu-preemptible-dp-1", P,
                                                      "2025-03-04T10:00:00Z")]))
    payload = json.loads(events(runner, "read.json", "--format", "json").stdout)
    assert (payload["preemptions"], payload["meanSecondsBetweenPreemptionsPerNode"]) == (1, None)
    assert payload["window"]["seconds"] == 0.0
    assert "a single timed event: no interval to measure" in payload["notes"][0]


def test_one_event_with_since_gives_a_mean(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([ev("gpu-preemptible-dp-1", P,
                                                      "2025-03-04T10:00:00Z")]))
    result = events(runner, "read.json", "--format", "json",
                    "--since", "2025-03-04T04:00:00Z", "--until", "2025-03-04T12:00:00+00:00")
    payload = json.loads(result.stdout)
    assert payload["countedPreemptions"] == 1
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 6 * 3600.0
    assert payload["window"]["given"] is True


@pytest.mark.parametrize("bound", ["--since", "--until"])
def test_one_open_bound_and_no_timed_event_is_a_report(runner: CliRunner, tmp_path: Path,
                                                        bound: str) -> None:
    """--since (or --until) alone with no usable timestamp: the window stays open on one side
    (this was an AssertionError, exit 3)."""
    (tmp_path / "read.json").write_text(json.dumps({"node_lifecycle_events": [
        {"node_name": "gpu-preemptible-dp-1", "reason": P}]}))
    result = runner.invoke(main, ["cluster", "events", "read.json", bound,
                                  "2025-01-01T00:00:00Z"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[1] == "window: none (no usable timestamp)"


def test_events_without_usable_timestamp_are_counted_not_timed(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "2025-03-04T10:00:00Z"),
        ev("gpu-preemptible-dp-2", P, "yesterday"),
        ev("gpu-preemptible-dp-3", P, None),
        ev("gpu-preemptible-dp-4", P, "2025-03-04T08:00:00"),  # no offset: ambiguous
    ]))
    payload = json.loads(events(runner, "read.json", "--format", "json").stdout)
    assert (payload["preemptions"], payload["timedPreemptions"]) == (4, 1)
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 10 * 3600.0
    assert "3 preemptions without a usable timestamp: counted, but not in the mean time" in (
        payload["notes"])


@pytest.mark.parametrize("time", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+01:00",
                                  "1969-12-31T23:59:59Z", "2025-02-30T10:00:00Z"])
def test_times_off_the_calendar_are_not_usable(
    runner: CliRunner, tmp_path: Path, time: str
) -> None:
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, time)]))
    result = events(runner, "read.json", "--format", "json", "--plot", "t.svg")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["timedPreemptions"] == 0


def test_a_window_of_millennia_still_plots(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "1970-01-01T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "8999-12-31T23:59:59.999999Z")]))
    result = events(runner, "read.json", "--plot", "t.svg")
    assert (result.exit_code, result.stderr) == (0, "")
    assert (tmp_path / "t.svg").read_text().count("<line") < 20


def test_no_timestamp_at_all(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([ev("gpu-preemptible-dp-1", P, None)]))
    result = events(runner, "read.json")
    assert result.exit_code == 0
    assert "window: none (no usable timestamp)\n" in result.stdout
    assert ("read.json: no field of node_lifecycle_events holds an RFC 3339 time; name it "
            "with --time-field") in " ".join(result.stdout.split())  # wrapped to 80 columns
    assert "no event has a usable timestamp: counts only, no mean time" in result.stdout
    assert "72 hours" not in result.stdout


def test_every_node_preempted(runner: CliRunner, tmp_path: Path) -> None:
    """Two nodes added, both preempted, none live: the exposure ends at each preemption."""
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-2", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "2025-03-04T06:00:00Z"),
        ev("gpu-preemptible-dp-2", P, "2025-03-04T10:00:00Z"),
    ], allocated_preemptible_gpus=0, desired_preemptible_gpus=16))
    payload = json.loads(events(runner, "read.json", "--format", "json", "--nodes", "2").stdout)
    assert payload["exposureSeconds"] == 16 * 3600.0
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 8 * 3600.0
    assert payload["sizing"]["jobMeanSecondsBetweenInterruptions"] == 4 * 3600.0


def test_no_preemption_bounds_the_mean_from_below(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-2", A, "2025-03-04T06:00:00Z"),
    ]))
    result = events(runner, "read.json")
    assert "mean time between preemptions per node: more than 2.0 h (no preemption " in (
        result.stdout)
    assert ("  periodic checkpoint: at least 18 min apart (Daly's higher-order optimum;\n"
            "    Young's sqrt(2 x 90 s x 2.0 h) = 19 min)") in result.stdout
    assert "  expected GPU time lost: at most 15.0 %" in result.stdout


def test_duplicates_are_counted_once_keeping_the_earliest(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "read.json").write_text(read_with([
        ev("gpu-preemptible-dp-1", A, "2025-03-04T00:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "2025-03-04T09:00:00Z"),
        ev("gpu-preemptible-dp-1", P, "2025-03-04T08:00:00Z"),
    ]))
    payload = json.loads(events(runner, "read.json", "--format", "json").stdout)
    assert payload["preemptions"] == 1
    assert payload["nodes"][0]["observedSeconds"] == 8 * 3600.0
    assert payload["notes"][0] == (
        "read.json:14: TogetherPreemptionNotified for gpu-preemptible-dp-1 again (also at "
        "read.json:9); counted once, as the API deduplicates by node and reason")


def test_kubectl_count_and_event_time(runner: CliRunner, tmp_path: Path) -> None:
    item = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n.1"},
            "involvedObject": {"kind": "Node", "name": "gpu-preemptible-dp-9"},
            "reason": P, "eventTime": "2025-03-04T10:00:00.123456Z", "firstTimestamp": None,
            "series": {"count": 3, "lastObservedTime": "2025-03-04T10:02:00.000000Z"}}
    pod = {**item, "involvedObject": {"kind": "Pod", "name": "x"}}
    (tmp_path / "ev.json").write_text(json.dumps({"kind": "List", "items": [item, pod]}))
    payload = json.loads(events(runner, "ev.json", "--format", "json").stdout)
    assert payload["nodes"][0]["events"][0]["time"] == "2025-03-04T10:00:00.123456Z"
    assert any("seen 3 times by Kubernetes; counted once" in n for n in payload["notes"])
    # the Pod's event is counted, not taken for the node's
    assert payload["sources"][0]["others"] == {
        "TogetherPreemptionNotified about Pods (their node's own event counts)": 1}
    nameless = {**item, "involvedObject": {"kind": "Node"}}
    (tmp_path / "ev.json").write_text(json.dumps({"kind": "List", "items": [nameless]}))
    payload = json.loads(events(runner, "ev.json", "--format", "json").stdout)
    assert any(n.startswith("ev.json:1: TogetherPreemptionNotified not about a named Node")
               for n in payload["notes"])


def test_retention_note_only_while_the_window_is_short(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "a.json").write_text(read_with([ev("gpu-preemptible-dp-1", A,
                                                   "2025-03-01T00:00:00Z")]))
    (tmp_path / "b.json").write_text(read_with([ev("gpu-preemptible-dp-1", P,
                                                   "2025-03-04T12:00:00Z")]))
    short = events(runner, "b.json").stdout
    long = events(runner, "a.json", "b.json").stdout
    assert "the API keeps node_lifecycle_events for 72 hours" in short
    assert "the API keeps node_lifecycle_events for 72 hours" not in long
    assert "window: 2025-03-01T00:00:00Z to 2025-03-04T12:00:00Z (84.0 h" in long


def test_yaml_and_stdin(runner: CliRunner) -> None:
    text = ("node_lifecycle_events:\n"
            "  - {node_name: gpu-preemptible-dp-1, reason: TogetherNodeAdded, at: "
            "'2025-03-04T00:00:00Z'}\n"
            "  - {node_name: gpu-preemptible-dp-1, reason: TogetherPreemptionNotified, at: "
            "'2025-03-04T05:00:00Z'}\n")
    result = events(runner, "-", "--format", "json", stdin=text)
    payload = json.loads(result.stdout)
    assert payload["sources"][0]["file"] == "<stdin>"
    assert payload["sources"][0]["timeField"] == "at"
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 5 * 3600.0


def test_named_fields_and_unix_seconds(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps({"node_lifecycle_events": [
        {"node": "gpu-preemptible-dp-1", "reason": A, "ts": 1741046400},
        {"node": "gpu-preemptible-dp-1", "reason": P, "ts": 1741050000.5},
    ]}))
    result = events(runner, "read.json", "--node-field", "node", "--time-field", "ts",
                    "--format", "json")
    payload = json.loads(result.stdout)
    assert payload["nodes"][0]["events"][1]["time"] == "2025-03-04T01:00:00.500000Z"
    assert payload["meanSecondsBetweenPreemptionsPerNode"] == 3600.5


def _drain_line(result: Result) -> str:
    """The drain window's line of the report, its wrapped continuation lines joined."""
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "drain window" in line)
    rest = itertools.takewhile(lambda line: line.startswith("    "), lines[at + 1:])
    return " ".join([lines[at], *(line.strip() for line in rest)])


@pytest.mark.parametrize(("args", "line"), [
    # render refuses expectedSeconds + marginSeconds above gracePeriodSeconds (at most the
    # profile's cap): a checkpoint at the notice has the cap less the supervisor's 10 s
    (["--checkpoint-seconds", "400"], "does NOT fit (400 s > 290 s: grace period cap 300 s - "
     "supervisor margin 10 s); a preemption loses the work since the last periodic checkpoint"),
    (["--checkpoint-seconds", "295"], "does NOT fit (295 s > 290 s: grace period cap 300 s - "
     "supervisor margin 10 s); a preemption loses the work since the last periodic checkpoint"),
    (["--checkpoint-seconds", "290"], "fits (290 s of 290 s: grace period cap 300 s - "
     "supervisor margin 10 s); a checkpoint at the notice keeps the work"),
    (["--checkpoint-seconds", "20", "--profile", "gke"], "does NOT fit (20 s > 5 s: grace "
     "period cap 15 s - supervisor margin 10 s); a preemption loses the work since the last "
     "periodic checkpoint"),
    (["--checkpoint-seconds", "5", "--profile", "gke"], "fits (5 s of 5 s: grace period cap "
     "15 s - supervisor margin 10 s); a checkpoint at the notice keeps the work"),
    (["--spec", "examples/distributed-torchrun.yaml"], "fits (90 s of 230 s: "
     "gracePeriodSeconds 240 - marginSeconds 10); a checkpoint at the notice keeps the work"),
])
def test_the_drain_window_fit_uses_renders_numbers(in_repo: CliRunner, args: list[str],
                                                    line: str) -> None:
    assert _drain_line(events(in_repo, READ, *args)) == "  drain window: " + line


def test_the_drain_window_fit_in_json(in_repo: CliRunner) -> None:
    gke = events(in_repo, READ, "--profile", "gke", "--format", "json")
    sizing = json.loads(gke.stdout)["sizing"]
    assert (sizing["drainWindowSeconds"], sizing["gracePeriodSeconds"], sizing["marginSeconds"],
            sizing["checkpointBudgetSeconds"], sizing["fitsDrainWindow"]) == (30, 15, 10, 5,
                                                                            False)


def test_a_specs_margin_and_grace_period_give_the_budget(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text((ROOT / READ).read_text())
    (tmp_path / "spec.yaml").write_text("""\
apiVersion: pmanifest/v1
workloads:
  - name: train
    image: x
    command: [python, train.py]
    checkpoint: {trigger: sigterm, mode: signal, gracePeriodSeconds: 120, marginSeconds: 30,
                 expectedSeconds: 90}
""")
    assert _drain_line(events(runner, "read.json", "--spec", "spec.yaml")) == (
        "  drain window: fits (90 s of 90 s: gracePeriodSeconds 120 - marginSeconds 30); a "
        "checkpoint at the notice keeps the work")
    assert _drain_line(events(runner, "read.json", "--spec", "spec.yaml",
                              "--checkpoint-seconds", "91")) == (
        "  drain window: does NOT fit (91 s > 90 s: gracePeriodSeconds 120 - marginSeconds 30); "
        "a preemption loses the work since the last periodic checkpoint")


# --- --spec: the checkpoint, nodes and profile of a spec's preemptible worker ------------------

TWO_WORKERS = """\
apiVersion: pmanifest/v1
cluster: {profile: gke}
workloads:
  - {name: api, role: serving, image: x}
  - name: train
    image: x
    command: [python, train.py]
    checkpoint: {trigger: sigterm, mode: signal, gracePeriodSeconds: 15, expectedSeconds: 5}
  - name: evals
    image: x
    command: [python, evals.py]
    checkpoint: {command: [flush], trigger: preStop, gracePeriodSeconds: 15}
"""


def test_spec_gives_checkpoint_and_nodes(in_repo: CliRunner) -> None:
    result = events(in_repo, READ, "--spec", "examples/finetune-sigterm.yaml")
    assert result.exit_code == 0, result.stderr
    assert ("checkpoint sizing: a 90 s checkpoint, a job on 1 preemptible node, profile\n"
            "  together\n  from examples/finetune-sigterm.yaml, workload finetune:\n"
            "    checkpoint.expectedSeconds 90; one pod per run\n") in result.stdout
    torchrun = events(in_repo, READ, "--spec", "examples/distributed-torchrun.yaml",
                      "--format", "json")
    sizing = json.loads(torchrun.stdout)["sizing"]
    assert (sizing["checkpointSeconds"], sizing["nodes"]) == (90, 4)
    assert sizing["from"] == ("examples/distributed-torchrun.yaml, workload trainer: no "
                              "checkpoint.expectedSeconds: 90 s, about what a checkpoint "
                              "of a ~10B-parameter model takes; "
                              "distributed.maxNodes 4")
    # the same figures as the flags give, but the spec's grace period (240 s, not the cap)
    flags = events(in_repo, READ, "--nodes", "4", "--format", "json")
    assert json.loads(flags.stdout)["sizing"] == {**sizing, "from": None,
                                                  "gracePeriodSeconds": 300,
                                                  "checkpointBudgetSeconds": 290}
    assert (sizing["gracePeriodSeconds"], sizing["checkpointBudgetSeconds"]) == (240, 230)


def test_spec_workload_profile_and_flags_that_override_it(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(TWO_WORKERS)
    (tmp_path / "read.json").write_text((ROOT / READ).read_text())
    result = events(runner, "read.json", "--spec", "spec.yaml", "--workload", "train",
                    "--format", "json")
    sizing = json.loads(result.stdout)["sizing"]
    assert (sizing["checkpointSeconds"], sizing["nodes"], sizing["profile"],
            sizing["drainWindowSeconds"], sizing["fitsDrainWindow"]) == (5, 1, "gke", 30, True)
    assert sizing["from"] == ("spec.yaml, workload train: checkpoint.expectedSeconds 5; "
                              "one pod per run")
    overridden = events(runner, "read.json", "--spec", "spec.yaml", "--workload", "train",
                        "--checkpoint-seconds", "45", "--nodes", "2", "--profile", "together",
                        "--format", "json")
    sizing = json.loads(overridden.stdout)["sizing"]
    assert (sizing["checkpointSeconds"], sizing["nodes"], sizing["profile"]) == (
        45, 2, "together")
    assert sizing["from"] == "spec.yaml, workload train: --checkpoint-seconds; --nodes"


@pytest.mark.parametrize(("args", "message"), [
    (["--spec", "spec.yaml"], "pmanifest: spec.yaml has 2 preemptible workloads (train, "
     "evals): name one with --workload"),
    (["--spec", "spec.yaml", "--workload", "trian"], "pmanifest: --workload 'trian': spec.yaml "
     "has no such workload (did you mean 'train'?)"),
    (["--spec", "spec.yaml", "--workload", "api"], "pmanifest: --workload 'api' runs on "
     "standard nodes in spec.yaml: it is not preempted; name a preemptible worker"),
    (["--workload", "train"], "pmanifest: --workload names a workload of --spec: give the "
     "spec too"),
    (["--spec", "nope.yaml"], "nope.yaml: cannot read the spec: No such file or directory; "
     "check the path"),
    (["--spec", "serving.yaml"], "pmanifest: serving.yaml has 0 preemptible workloads: "
     "nothing to size"),
])
def test_spec_errors(runner: CliRunner, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "spec.yaml").write_text(TWO_WORKERS)
    (tmp_path / "serving.yaml").write_text(
        "apiVersion: pmanifest/v1\nworkloads:\n  - {name: api, role: serving, image: x}\n")
    (tmp_path / "read.json").write_text((ROOT / READ).read_text())
    result = events(runner, "read.json", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_an_invalid_spec_is_reported_at_its_line(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(TWO_WORKERS.replace("expectedSeconds: 5",
                                                            "expectedSeconds: soon"))
    (tmp_path / "read.json").write_text((ROOT / READ).read_text())
    result = events(runner, "read.json", "--spec", "spec.yaml")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("spec.yaml:8:")
    assert result.stderr.count("\n") == 1


# --- errors: one line naming the file, exit 2, nothing on stdout -------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ('{"node_lifecycle_events": [\n  {"reason": "x",\n', "read.json:3:1: did not find expected "
     "node content; expected the JSON of a cluster read or of `kubectl get events -o json`"),
    ('{"cluster_name": "c"}', "read.json: neither a cluster read (no node_lifecycle_events) nor "
     "a list of Kubernetes events (kind: List of Event); expected the JSON of `tg beta clusters "
     "retrieve ID --json` or `kubectl get events -o json`"),
    ('{"node_lifecycle_events": {"a": 1}}', "read.json:1:27: node_lifecycle_events: expected a "
     "list, found a mapping"),
    ('{"node_lifecycle_events": [\n  "gpu-dp-1"\n]}', "read.json:2:3: node_lifecycle_events[0]: "
     "expected a mapping (an event), found a string"),
    ('{"node_lifecycle_events": [{"reason": "x", "a": "2025-03-04T00:00:00Z", '
     '"b": "2025-03-04T00:00:00Z"}]}', "read.json: node_lifecycle_events: several fields hold "
     "times (a, b); name the event's time with --time-field"),
    ('{"kind": "List", "items": [\n  42\n]}', "read.json:2:3: items[0]: expected a mapping (an "
     "Event), found a number"),
    ("", "read.json:1:1: file is empty; expected the JSON of a cluster read or of `kubectl get "
     "events -o json`"),
])
def test_bad_input(runner: CliRunner, tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "read.json").write_text(text)
    result = events(runner, "read.json", "--plot", "t.svg")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")
    assert not (tmp_path / "t.svg").exists()


def test_missing_file(runner: CliRunner) -> None:
    result = events(runner, "nope.json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "nope.json: cannot read: No such file or directory\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "monday"], "pmanifest: --since 'monday': expected an RFC 3339 time with an "
     "offset, e.g. 2025-03-04T18:00:00Z"),
    (["--since", "2025-03-04T00:00:00Z", "--until", "2025-03-03T00:00:00Z"],
     "pmanifest: --until 2025-03-03T00:00:00Z is not after --since 2025-03-04T00:00:00Z"),
    (["--profile", "nope"], "pmanifest: unknown profile 'nope'; known profiles: aks, gke, "
     "gke-autopilot, karpenter, together"),
    (["--plot", "."], ".: is a directory; --plot needs a file path"),
    (["--plot", READ], f"{READ}: --plot is one of the inputs: writing there would destroy it; "
     "choose another path"),
])
def test_bad_flags(in_repo: CliRunner, args: list[str], message: str) -> None:
    result = events(in_repo, READ, *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_bad_numbers_are_usage_errors(in_repo: CliRunner) -> None:
    for args in (["--nodes", "0"], ["--checkpoint-seconds", "0"]):
        result = events(in_repo, READ, *args)
        assert result.exit_code == 2
        assert result.stdout == ""


# --- any JSON shape: a report or one line and exit 2, never a traceback -------------------------

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.sampled_from(["", "gpu-preemptible-dp-1", "gpu-dp-2", P, A, "TogetherScaledDown",
                               "2025-03-04T10:00:00Z", "2025-02-30T10:00:00Z",
                               "2025-03-04T10:00:00.123456789+05:30", "9999-12-31T23:59:59-23:59",
                               "0001-01-01T00:00:00+01:00", "Node", "List", "Event"])
            | st.text(max_size=12))
_KEYS = st.sampled_from(["node_name", "reason", "timestamp", "kind", "name", "items",
                         "involvedObject", "eventTime", "firstTimestamp", "series", "count",
                         "lastObservedTime", "allocated_preemptible_gpus", "gpu_type"])
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(_KEYS, inner, max_size=5), max_leaves=20)
_EVENT_LISTS = st.lists(st.dictionaries(_KEYS, _SCALARS | st.dictionaries(_KEYS, _SCALARS)),
                        max_size=6)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["node_lifecycle_events", "items"]), _VALUES | _EVENT_LISTS,
       st.sampled_from([[], ["--time-field", "timestamp"], ["--since", "2025-03-04T00:00:00Z"]]))
def test_any_json_gives_a_report_or_one_line(key: str, value: object, args: list[str]) -> None:
    document = {key: value, "kind": "List"} if key == "items" else {key: value}
    result = CliRunner().invoke(main, ["cluster", "events", "-", "--format", "json", *args],
                                input=json.dumps(document))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    if result.exit_code == 0:
        json.loads(result.stdout)
    else:
        assert result.exit_code == 2, result.stderr
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("<stdin>")


def test_a_large_read_keeps_exact_lines(runner: CliRunner, tmp_path: Path) -> None:
    """Past 256 KB the loader looks positions up instead of tabling them: every event's line
    comes from one extra pass (the command prefetches them all)."""
    items = [ev(f"gpu-preemptible-dp-{n:04d}", A, f"2025-03-0{1 + n % 3}T00:00:00Z")
             for n in range(3000)]
    (tmp_path / "read.json").write_text(read_with(items))
    assert (tmp_path / "read.json").stat().st_size > 256 * 1024
    payload = json.loads(events(runner, "read.json", "--format", "json").stdout)
    last = payload["nodes"][-1]
    assert (last["node"], last["events"][0]["at"]) == ("gpu-preemptible-dp-2999",
                                                       f"read.json:{4 + 5 * 2999}")
