"""The example files under examples/cluster/ are what they claim to be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmanifest.schema.kubernetes import validate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"


@pytest.mark.parametrize("version", ["1.25", "1.31", "1.37"])
@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*events.json")))
def test_kubectl_events_example_is_a_valid_v1_event_list(version: str, name: str) -> None:
    """Every item passes the strict core/v1 Event schema shipped by kubernetes-validate."""
    payload = json.loads((EXAMPLES / name).read_text())
    assert (payload["apiVersion"], payload["kind"]) == ("v1", "List")
    for item in payload["items"]:
        assert (item["apiVersion"], item["kind"]) == ("v1", "Event")
        assert validate(item, version) == []


def test_cluster_read_example_uses_only_documented_fields_and_the_two_assumed_ones() -> None:
    """Together documents desired/allocated_preemptible_gpus, status and
    node_lifecycle_events[].reason; the API reference the rest of the top level. Each event's
    node_name and timestamp are the two assumptions (see examples/cluster/README.md)."""
    payload = json.loads((EXAMPLES / "cluster-read.json").read_text())
    assert set(payload) == {"cluster_id", "cluster_name", "cluster_type", "region", "gpu_type",
                            "status", "num_gpus", "desired_preemptible_gpus",
                            "allocated_preemptible_gpus", "node_lifecycle_events"}
    reasons = {e["reason"] for e in payload["node_lifecycle_events"]}
    assert reasons == {"TogetherNodeAdded", "TogetherPreemptionNotified", "TogetherScaledDown"}
    assert all(set(e) == {"node_name", "reason", "timestamp"}
               for e in payload["node_lifecycle_events"])
