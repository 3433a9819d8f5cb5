"""GPU demand of workloads, and the shortfalls against a cluster's capacity."""

from __future__ import annotations

from typing import Any

import pytest

from pmanifest.cluster.capacity import (
    ALLOCATED_SHORT,
    POD_TOO_LARGE,
    ROLLOUT,
    STANDARD_SHORT,
    TARGET_SHORT,
    Capacity,
    capacity_of,
    shortfalls,
)
from pmanifest.cluster.demand import EITHER, PREEMPTIBLE, STANDARD, Demand, demand_of
from pmanifest.cluster.request import parse_request
from pmanifest.kube.document import Document
from pmanifest.kube.profile import get_profile
from pmanifest.kube.workloads import workloads_of
from pmanifest.loader.positions import Positions

PREEMPTIBLE_SELECTOR = {"together.ai/compute-class": "preemptible"}
KEEP_OFF = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{
        "key": "together.ai/compute-class", "operator": "NotIn", "values": ["preemptible"]}]}]}}}


def pod(gpus: Any, placement: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {"containers": [container], **(placement or {}), **extra}


def deployment(name: str, replicas: int | None, gpus: Any, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"spec": pod(gpus, {"affinity": KEEP_OFF})}, **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": body}


def job(name: str, gpus: int, parallelism: int | None = None,
        completions: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"spec": pod(gpus, {"nodeSelector":
                                                            PREEMPTIBLE_SELECTOR})}}
    if parallelism is not None:
        body["parallelism"] = parallelism
    if completions is not None:
        body["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": body}


def demand(data: dict[str, Any]) -> Demand | None:
    doc = Document("m.yaml", 0, data, Positions())
    (workload,) = workloads_of(doc, get_profile())
    return demand_of(workload)


def capacity(standard: int | None = 16, target: int | None = 16,
             allocated: int | None = None) -> Capacity:
    return Capacity("cluster.json", "H100_SXM", 8, standard, target, allocated)


# --- demand --------------------------------------------------------------------------------------

def test_deployment_defaults_roll_with_one_surge_and_none_down() -> None:
    found = demand(deployment("chat", 2, 4))
    assert found is not None
    assert (found.label, found.pool, found.gpus, found.pods) == ("Deployment chat", STANDARD, 4, 2)
    assert (found.surge, found.unavailable) == (1, 0)  # 25 % of 2: up to 1, down to 0
    assert found.gpus_path == ("spec", "template", "spec", "containers", 0, "resources",
                               "limits", "nvidia.com/gpu")
    assert found.pods_path == ("spec", "replicas")


@pytest.mark.parametrize(("strategy", "replicas", "rollout"), [
    ({}, 4, (1, 1)), ({}, None, (1, 0)), ({"type": "Recreate"}, 3, (0, 0)),
    ({"rollingUpdate": {"maxSurge": 2, "maxUnavailable": "50%"}}, 3, (2, 1)),
    ({"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 1}}, 3, (0, 1)),
])
def test_rollout_numbers(strategy: dict[str, Any], replicas: int | None,
                         rollout: tuple[int, int]) -> None:
    spec = {"strategy": strategy} if strategy else {}
    found = demand(deployment("chat", replicas, "8", **spec))
    assert found is not None
    assert (found.surge, found.unavailable) == rollout


def test_jobs_count_parallelism_up_to_completions() -> None:
    assert (found := demand(job("train", 8, 4))) is not None
    assert (found.pool, found.pods, found.surge) == (PREEMPTIBLE, 4, 0)
    assert (found := demand(job("train", 8, 4, 2))) is not None and found.pods == 2
    assert (found := demand(job("train", 8))) is not None and found.pods == 1


def test_init_containers_and_sidecars_count_as_the_scheduler_does() -> None:
    data = deployment("chat", 1, 2)
    spec = data["spec"]["template"]["spec"]
    spec["initContainers"] = [
        {"name": "warm", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 4}}},
        {"name": "side", "image": "x", "restartPolicy": "Always",
         "resources": {"requests": {"nvidia.com/gpu": 1}}}]
    assert (found := demand(data)) is not None
    assert found.gpus == 4  # the init container alone (4) beats main + sidecar (3)
    assert found.gpus_path == ("spec", "template", "spec", "initContainers", 0, "resources",
                               "limits", "nvidia.com/gpu")


def test_unpinned_daemonsets_and_no_gpus() -> None:
    unpinned = deployment("chat", 1, 1)
    del unpinned["spec"]["template"]["spec"]["affinity"]
    assert (found := demand(unpinned)) is not None and found.pool == EITHER
    assert demand(deployment("web", 3, 0)) is None
    daemon = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
              "spec": {"template": {"spec": pod(1)}}}
    assert demand(daemon) is None


# --- shortfalls ----------------------------------------------------------------------------------

def demands(*docs: dict[str, Any]) -> list[Demand]:
    found = [demand(d) for d in docs]
    assert all(d is not None for d in found)
    return [d for d in found if d is not None]


def test_everything_fits() -> None:
    assert shortfalls(demands(deployment("chat", 2, 4), job("train", 8, 2)), capacity()) == []


def test_a_pod_larger_than_a_node() -> None:
    (found,) = shortfalls(demands(job("big", 16)), capacity())
    assert (found.kind, found.demand.label) == (POD_TOO_LARGE, "Job big")
    assert found.message == ("Job big: a pod asks for 16 GPUs but a H100_SXM node has 8: it can "
                             "never be scheduled")


def test_standard_pods_that_sum_but_do_not_pack() -> None:
    # 3 x 5 = 15 GPUs <= 16, but no node holds two of them (Recreate: no surge to add)
    (found,) = shortfalls(demands(deployment("chat", 3, 5, strategy={"type": "Recreate"})),
                          capacity())
    assert found.kind == STANDARD_SHORT
    assert found.message == (
        "Deployment chat: the pods kept off preemptible nodes need 15 GPUs (3 x 5 GPUs a pod) "
        "and do not pack (a pod's GPUs come from one node) on the 16 standard GPUs (2 nodes of "
        "8) of cluster.json")


def test_the_workload_that_overflows_is_named() -> None:
    docs = demands(deployment("a", 1, 8, strategy={"type": "Recreate"}),
                   deployment("b", 1, 8, strategy={"type": "Recreate"}),
                   deployment("c", 1, 8, strategy={"type": "Recreate"}))
    (found,) = shortfalls(docs, capacity(standard=16))
    assert found.demand.label == "Deployment c"


def test_a_rollout_without_room_to_surge() -> None:
    (found,) = shortfalls(demands(deployment("chat", 2, 8)), capacity(standard=16))
    assert (found.kind, found.demand.label) == (ROLLOUT, "Deployment chat")
    assert "adds 1 pod of 8 GPUs (maxSurge) before it removes any (maxUnavailable 0)" in (
        found.message)
    # four replicas may take one down first: the rollout progresses on 32 GPUs
    assert shortfalls(demands(deployment("chat", 4, 8)), capacity(standard=32)) == []


def test_preemptible_target_then_allocation() -> None:
    (over,) = shortfalls(demands(job("train", 8, 3)), capacity(target=16))
    assert over.kind == TARGET_SHORT
    assert over.message == ("Job train: the pods pinned to preemptible nodes need 24 GPUs (3 x 8 "
                            "GPUs a pod) at once, and cluster.json has a preemptible target of "
                            "16 GPUs (2 nodes of 8): some stay Pending")
    (short,) = shortfalls(demands(job("train", 8, 2)), capacity(target=16, allocated=8))
    assert short.kind == ALLOCATED_SHORT
    (none,) = shortfalls(demands(job("train", 8, 1)), capacity(target=0))
    assert "has no preemptible target (0 GPUs)" in none.message


def test_unknown_fields_skip_their_checks() -> None:
    assert shortfalls(demands(deployment("chat", 9, 8), job("t", 8, 9)),
                      capacity(standard=None, target=None)) == []


def test_capacity_from_each_form() -> None:
    read = parse_request('{"cluster_id": "c", "gpu_type": "H100_SXM", "num_gpus": 16, '
                         '"desired_preemptible_gpus": 32, "allocated_preemptible_gpus": 24}',
                         "read.json")
    assert capacity_of(read) == Capacity("read.json", "H100_SXM", 8, 16, 32, 24)
    update = parse_request("tg beta clusters update c --num-preemptible-gpus 16\n", "u.sh")
    assert capacity_of(update) == Capacity("u.sh", None, 8, None, 16, None)
