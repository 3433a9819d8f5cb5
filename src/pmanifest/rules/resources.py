"""Rules: what a pod asks of its node besides placement (see policies/rules-placement.yaml).

PM106 reads the QoS class as Kubernetes computes it (:func:`pmanifest.kube.resources.pod_qos`)
and GPUs as the capacity checks count them (:func:`pmanifest.kube.resources.pod_gpus`), so a
GPU pod here is a GPU pod there.
"""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.kube.resources import (
    BEST_EFFORT,
    CPU_PER_GPU,
    MEMORY_PER_GPU_GI,
    container_gpus,
    gpu_requests,
    pod_gpus,
    pod_qos,
)
from pmanifest.kube.workloads import mapping
from pmanifest.rules import Context, Fix, Hit, rule


@rule("PM106")
def gpu_pod_best_effort(ctx: Context) -> Iterator[Hit]:
    w = ctx.workload
    gpus, _ = pod_gpus(w)
    if gpus <= 0 or pod_qos(w.pod, w.container_keys) != BEST_EFFORT:
        return
    for container in w.containers():
        count, _ = container_gpus(container.data, container.path)
        if not count:
            continue
        resources = (*container.path, "resources")
        requests = container.data["resources"].get("requests")
        fix = None
        if requests is None or isinstance(requests, dict):
            fix = Fix((*resources, "requests"), {**mapping(requests), **gpu_requests(count)})
        yield Hit(resources,
                  f"{w.title} pods use {gpus} GPU{'s' if gpus > 1 else ''} but no container "
                  "requests or limits CPU or memory, so their QoS class is BestEffort: the "
                  "first pods the kubelet evicts under memory pressure, and the first the OOM "
                  f"killer picks, on the node that holds the GPUs; request CPU and memory for "
                  f"container {container.name!r} (e.g. {CPU_PER_GPU} CPU and "
                  f"{MEMORY_PER_GPU_GI}Gi a GPU)", fix=fix)
        return
