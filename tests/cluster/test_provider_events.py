"""``cluster events`` reads the interruption and preemption events of every provider it has a
profile for (Karpenter's, GKE's, AKS's, Together's, Kubernetes' own), as their code emits
them (see pmanifest/cluster/reasons.py), and accounts for every event of a file: kept as a
node event, counted as something else, or reported as not understood. None is dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"
EVENT_FILES = sorted(EXAMPLES.glob("*events.json"))


def report(path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["cluster", "events", str(path), "--format", "json",
                                       *args])
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def preempted(payload: dict[str, Any]) -> dict[str, list[str]]:
    return {n["node"]: [e["reason"] for e in n["events"] if e["kind"] == "preemption"]
            for n in payload["nodes"] if n["preemptions"]}


def event(kind: str, name: str, reason: str, time: str, message: str = "",
          api: str = "v1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.{reason}"},
            "involvedObject": {"apiVersion": api, "kind": kind, "name": name},
            "reason": reason, "message": message, "firstTimestamp": time, "type": "Warning"}


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda p: p.name)
def test_every_event_of_a_file_is_accounted_for(path: Path) -> None:
    payload = report(path)
    [source] = payload["sources"]
    items = json.loads(path.read_text())["items"]
    assert source["read"] == len(items)
    kept = sum(len(n["events"]) for n in payload["nodes"])
    duplicates = sum(1 for note in payload["notes"] if "counted once" in note)
    assert kept + duplicates + sum(payload["folded"].values()) + \
        sum(source["others"].values()) + sum(source["notUnderstood"].values()) == len(items)


def test_one_karpenter_interruption_is_four_events_and_one_preemption() -> None:
    """SpotInterrupted on the NodeClaim, the Node and a Pod, then TerminatingOnInterruption:
    all four are read (they used to be three dropped and one unknown)."""
    payload = report(EXAMPLES / "karpenter-events.json")
    assert preempted(payload) == {
        "ip-10-0-12-34.us-west-2.compute.internal": ["SpotInterrupted"],
        "ip-10-0-77-9.us-west-2.compute.internal": ["SpotInterrupted"]}
    nodes = {n["node"]: [(e["reason"], e["kind"]) for e in n["events"]]
             for n in payload["nodes"]}
    assert nodes["ip-10-0-12-34.us-west-2.compute.internal"] == [
        ("SpotInterrupted", "preemption"), ("TerminatingOnInterruption", "ended")]
    # Karpenter's own consolidation removes a node: not a preemption
    assert nodes["ip-10-0-40-1.us-west-2.compute.internal"] == [("DisruptionTerminating",
                                                                 "ended")]
    assert payload["sources"][0]["others"] == {
        "SpotInterrupted about Karpenter NodeClaims (the same as their Node's)": 2,
        "SpotInterrupted about Pods (their node's own event counts)": 1,
        "TerminatingOnInterruption about Karpenter NodeClaims (the same as their Node's)": 1,
        "DisruptionTerminating about Karpenter NodeClaims (the same as their Node's)": 1,
        "SpotRebalanceRecommendation about Nodes (not about their life)": 1}


def test_gke_preemptions_are_graceful_shutdowns_not_scale_downs() -> None:
    payload = report(EXAMPLES / "gke-events.json", "--profile", "gke")
    assert preempted(payload) == {"gke-ml-spot-pool-4f1a2b3c-q8w4": ["Shutdown"],
                                  "gke-ml-spot-pool-4f1a2b3c-x9z1": ["Shutdown"]}
    # k2m7 was removed by the cluster autoscaler before its kubelet shut it down
    k2m7 = next(n for n in payload["nodes"] if n["node"].endswith("k2m7"))
    assert [(e["reason"], e["kind"]) for e in k2m7["events"]] == [("ScaleDown", "ended")]
    assert payload["folded"] == {"RemovingNode": 1, "Shutdown": 1}
    assert any("read from the kubelet's graceful node shutdown" in n for n in payload["notes"])


def test_aks_preempt_scheduled() -> None:
    payload = report(EXAMPLES / "aks-events.json", "--profile", "aks")
    assert preempted(payload) == {"aks-gpuspot-31415926-vmss000002": ["PreemptScheduled"],
                                  "aks-gpuspot-31415926-vmss000005": ["PreemptScheduled"]}
    assert payload["sources"][0]["others"] == {
        "NodeNotSchedulable about Nodes (not about their life)": 1,
        "RebootScheduled about Nodes (not about their life)": 1}


def test_what_is_not_understood_is_counted_and_said(tmp_path: Path) -> None:
    items = [event("Node", "n1", "SpotInterrupted", "2025-03-04T10:00:00Z"),
             event("Node", "n1", "NodeQuarantined", "2025-03-04T10:01:00Z"),
             event("Node", "n2", "NodeQuarantined", "2025-03-04T10:02:00Z"),
             event("Node", "n2", "Shutdown", "2025-03-04T10:03:00Z",
                   "Shutdown manager detected shutdown cancellation"),
             event("Node", "n3", "TerminateScheduled", "2025-03-04T10:04:00Z"),
             event("Deployment", "web", "ScalingReplicaSet", "2025-03-04T10:05:00Z")]
    (tmp_path / "ev.json").write_text(json.dumps({"kind": "List", "items": items}))
    payload = report(tmp_path / "ev.json")
    source = payload["sources"][0]
    assert source["notUnderstood"] == {"NodeQuarantined": 2}
    assert source["others"] == {"Shutdown about Nodes (not about their life)": 1,
                                "about Deployments": 1}
    assert preempted(payload) == {"n1": ["SpotInterrupted"]}
    assert f"{tmp_path / 'ev.json'}: 2 node events not understood, not counted: " \
           "NodeQuarantined x2" in " ".join(payload["notes"])
    text = CliRunner().invoke(main, ["cluster", "events", str(tmp_path / "ev.json")],
                              env={"COLUMNS": "200"}).stdout
    assert "  not understood, not counted: NodeQuarantined x2\n" in text


def test_a_cluster_read_with_a_reason_not_known(tmp_path: Path) -> None:
    (tmp_path / "read.json").write_text(json.dumps({"node_lifecycle_events": [
        {"node_name": "gpu-preemptible-dp-1", "reason": "TogetherNodeAdded",
         "timestamp": "2025-03-04T00:00:00Z"},
        {"node_name": "gpu-preemptible-dp-1", "reason": "TogetherNodeRepaired",
         "timestamp": "2025-03-04T01:00:00Z"}]}))
    payload = report(tmp_path / "read.json")
    assert payload["sources"][0]["notUnderstood"] == {"TogetherNodeRepaired": 1}
    assert [e["reason"] for e in payload["nodes"][0]["events"]] == ["TogetherNodeAdded"]


def test_preemption_notices_of_two_kinds_on_one_node_are_one_preemption(
        tmp_path: Path) -> None:
    items = [event("Node", "gpu-preemptible-dp-1", "TogetherPreemptionNotified",
                   "2025-03-04T10:00:00Z"),
             event("Node", "gpu-preemptible-dp-1", "Shutdown", "2025-03-04T10:00:20Z",
                   "Shutdown manager detected shutdown event")]
    (tmp_path / "ev.json").write_text(json.dumps({"kind": "List", "items": items}))
    assert report(tmp_path / "ev.json")["preemptions"] == 1
