"""Container resources as Kubernetes reads them: quantities, the GPU resource, a pod's QoS
class, and the CPU and memory render requests for each GPU when a spec gives none.

The QoS class follows ``ComputePodQOS`` (kubernetes/kubernetes, pkg/apis/core/helper/qos):
only CPU and memory count, with a quantity above zero; every container and init container
counts (sidecars too), ephemeral containers do not; a container's missing request is the API
server's default, its limit; pod-level ``resources`` (PodLevelResources, beta from 1.34) decide
alone when they set CPU or memory. BestEffort: no CPU or memory request or limit anywhere.
Guaranteed: every container limits both, and the summed requests equal the summed limits.
Burstable: anything between. So a pod that limits only ``nvidia.com/gpu`` is BestEffort: the
first the kubelet evicts under memory pressure, and its processes the first the kernel's OOM
killer picks (oom_score_adj 1000).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pmanifest.kube.kinds import POD_CONTAINERS
from pmanifest.kube.podtemplates import find
from pmanifest.loader.positions import Path

if TYPE_CHECKING:
    from pmanifest.kube.workloads import Workload

GPU = "nvidia.com/gpu"
# Extended resources of accelerators, by prefix: NVIDIA GPUs (whole, shared, MIG slices), AMD
# and Intel GPUs (and Intel NPUs and FPGAs), AWS Trainium and Inferentia (neuron, neuroncore,
# neurondevice), TPUs, Gaudi.
ACCELERATOR_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "gpu.intel.com/",
                        "npu.intel.com/", "fpga.intel.com/", "aws.amazon.com/neuron",
                        "google.com/tpu", "cloud-tpus.google.com/", "habana.ai/")
# Any other extended resource whose own name (after its domain) is a GPU, vGPU, TPU or NPU,
# and nothing more: a DRA extended resource a DeviceClass maps (``example.com/gpu``); a name
# that only starts like one (``example.com/gpu-like``) is not.
_DEVICE_NAME = re.compile(r"(?:v?gpu|tpu|npu)s?$")
# Devices asked for outside ``resources``: a GPU-sharing scheduler's pod annotations (KAI and
# Run:ai: a fraction of one GPU, or an amount of its memory) and a controller's device request
# on its object (KServe's managed DRA: a claim of the DeviceClass the annotation names).
ACCELERATOR_ANNOTATIONS = ("gpu-fraction", "gpu-memory", "serving.kserve.io/exp-dra-device-class")
BEST_EFFORT, BURSTABLE, GUARANTEED = "BestEffort", "Burstable", "Guaranteed"
QOS_RESOURCES = ("cpu", "memory")
# What render requests for each GPU when the spec gives no CPU or memory of its own: a floor
# that makes a GPU pod Burstable, not a sizing. 4 cores and 32 GiB a GPU is a third of the CPU
# and a quarter of the memory of the smallest common 8-GPU node (96 vCPU, 1152 GiB: p4d, ND
# A100 v4), so the requests of a pod sized for its GPUs fit any such node beside its system
# reservations and DaemonSets, and a 4-GPU node of 48 vCPU and 192 GiB too.
CPU_PER_GPU = 4
MEMORY_PER_GPU_GI = 32
_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
                     r"([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# exact arithmetic whatever the exponent a quantity is written with (1e999999 included)
_CONTEXT = decimal.Context(prec=80, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                           traps=[decimal.InvalidOperation])


def quantity(value: str | int) -> decimal.Decimal:
    """A Kubernetes quantity (``500m``, ``64Gi``, ``1e3``, ``8``) as an exact number; a
    ValueError for anything else."""
    match = _NUMBER.match(str(value)) if not isinstance(value, bool) else None
    if match is None:
        raise ValueError(f"not a quantity: {value!r}")
    number, suffix = decimal.Decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return _CONTEXT.multiply(number, decimal.Decimal(1024) ** _BINARY[suffix])
    exponent = _DECIMAL[suffix] if suffix in _DECIMAL else int(suffix[1:])
    return _CONTEXT.scaleb(number, exponent)


def gpu_requests(gpus: int) -> dict[str, str]:
    """The CPU and memory render requests for a pod of ``gpus`` GPUs without its own."""
    return {"cpu": str(CPU_PER_GPU * gpus), "memory": f"{MEMORY_PER_GPU_GI * gpus}Gi"}


def _amounts(section: Any) -> dict[str, decimal.Decimal | str]:
    """The CPU and memory of a requests or limits mapping that are above zero (a value that is
    no quantity counts as set: the schema reports it, and no class is claimed from it)."""
    out: dict[str, decimal.Decimal | str] = {}
    if not isinstance(section, dict):
        return out
    for name in QOS_RESOURCES:
        if name not in section or section[name] is None:
            continue
        try:
            amount = quantity(section[name])
        except (ValueError, TypeError, decimal.InvalidOperation):
            out[name] = repr(section[name])
            continue
        if amount > 0:
            out[name] = amount
    return out


def _defaulted(resources: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(requests, limits) above zero, a missing request defaulted to its limit as the API
    server does."""
    resources = resources if isinstance(resources, dict) else {}
    limits = _amounts(resources.get("limits"))
    requests = {**limits, **_amounts(resources.get("requests"))}
    return requests, limits


def _add(total: dict[str, Any], amounts: dict[str, Any]) -> None:
    for name, amount in amounts.items():
        previous = total.get(name)
        if isinstance(amount, str) or isinstance(previous, str):
            total[name] = amount if previous is None else f"{previous}+{amount}"
        else:
            total[name] = amount if previous is None else previous + amount


def _containers(pod: dict[str, Any],
                container_keys: tuple[tuple[str, bool, bool], ...]) -> Iterator[dict[str, Any]]:
    for key, is_list, _ in container_keys:
        value = pod.get(key)
        for container in (value if isinstance(value, list) else ()) if is_list else (value,):
            if isinstance(container, dict):
                yield container


def pod_qos(pod: dict[str, Any],
            container_keys: tuple[tuple[str, bool, bool], ...] = POD_CONTAINERS) -> str:
    """The QoS class Kubernetes gives a pod with this spec (see the module's docstring);
    ``container_keys``: where its kind keeps containers (an Argo template's ``container``, an
    OME component's ``runner``)."""
    pod_level = pod.get("resources")
    if isinstance(pod_level, dict) and (_amounts(pod_level.get("requests"))
                                        or _amounts(pod_level.get("limits"))):
        requests, limits = _defaulted(pod_level)
        guaranteed = all(name in limits for name in QOS_RESOURCES)
    else:
        requests, limits, guaranteed = {}, {}, True
        for container in _containers(pod, container_keys):
            mine, capped = _defaulted(container.get("resources"))
            _add(requests, mine)
            _add(limits, capped)
            guaranteed = guaranteed and all(name in capped for name in QOS_RESOURCES)
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and requests.keys() == limits.keys() and all(
            requests[name] == limits[name] for name in requests):
        return GUARANTEED
    return BURSTABLE


# --- GPUs: what the capacity checks count and PM106 asks about --------------------------------

def whole_count(value: Any) -> int | None:
    """A count written as an integer or a string of digits, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def container_gpus(container: dict[str, Any], path: Path) -> tuple[int, Path]:
    """GPUs of one container (its limit, else its request), and where the count is written."""
    resources = container.get("resources")
    for section in ("limits", "requests"):
        amounts = resources.get(section) if isinstance(resources, dict) else None
        count = whole_count(amounts.get(GPU)) if isinstance(amounts, dict) else None
        if count is not None:
            return count, (*path, "resources", section, GPU)
    return 0, ()


def pod_gpus(workload: Workload) -> tuple[int, Path]:
    """GPUs the scheduler reserves for one pod, and where the deciding count is written: the
    app containers and sidecars (init containers with ``restartPolicy: Always``) together, or
    the largest other init container if that is more."""
    running, running_path = 0, workload.pod_path
    init_max, init_path = 0, workload.pod_path
    for container in workload.containers():
        count, path = container_gpus(container.data, container.path)
        if not count:
            continue
        sidecar = container.init and container.data.get("restartPolicy") == "Always"
        if container.init and not sidecar:
            if count > init_max:
                init_max, init_path = count, path
        else:
            running += count
            if path and running_path == workload.pod_path:
                running_path = path
    return (init_max, init_path) if init_max > running else (running, running_path)


# --- accelerators: what decides a placement finding's impact ---------------------------------

def requests_accelerator(workload: Workload, dependents: bool = False) -> bool:
    """Does a pod of ``workload`` ask for an accelerator (:func:`pod_requests_accelerator`)?
    ``dependents``: or another pod of the same document, which depends on it (a Ray head's
    GPU workers: a coordinator's impact is the pods it takes down). The one answer every rule
    asks."""
    data = workload.doc.data
    if pod_requests_accelerator(workload.pod, workload.container_keys) or \
            _annotated(data, (*workload.owner, "metadata")) or \
            _annotated(data, workload.meta_path):
        return True
    return dependents and any(pod_requests_accelerator(found.pod, found.template.containers)
                              or _annotated(data, found.meta_path)
                              for found in find(data) if found.pod is not workload.pod)


def _annotated(data: Any, meta_path: Path) -> bool:
    """Does the metadata at ``meta_path`` ask for a device by annotation
    (``ACCELERATOR_ANNOTATIONS``, with a value that is not empty or zero)?"""
    meta: Any = data
    for key in meta_path:
        if isinstance(key, str) and isinstance(meta, dict):
            meta = meta.get(key)
        elif isinstance(key, int) and isinstance(meta, list) and 0 <= key < len(meta):
            meta = meta[key]
        else:
            return False
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return isinstance(annotations, dict) and any(
        str(annotations.get(key, "")).strip() not in ("", "0", "None")
        for key in ACCELERATOR_ANNOTATIONS)


def pod_requests_accelerator(pod: dict[str, Any],
                             container_keys: tuple[tuple[str, bool, bool], ...]) -> bool:
    """Does a pod spec ask for an accelerator: an accelerator's extended resource
    (``ACCELERATOR_PREFIXES``) above zero in any container's limits or requests (a container
    at ``container_keys``, or a container-like mapping in the pod with ``resources``: a
    KServe predictor's ``model``), a DRA resource claim (the pod's ``resourceClaims``, a
    container's ``resources.claims``), or a Spark pod's ``gpu``?"""
    if pod.get("resourceClaims") or isinstance(pod.get("gpu"), dict):
        return True
    containers: list[Any] = [v for v in pod.values() if isinstance(v, dict) and "resources" in v]
    for key, is_list, _ in container_keys:
        value = pod.get(key)
        containers += value if is_list and isinstance(value, list) else [value]
    return any(isinstance(c, dict) and _accelerated(c.get("resources")) for c in containers)


def _accelerated(resources: Any) -> bool:
    if not isinstance(resources, dict):
        return False
    if resources.get("claims"):
        return True
    for section in ("limits", "requests"):
        amounts = resources.get(section)
        for name, amount in amounts.items() if isinstance(amounts, dict) else ():
            if isinstance(name, str) and _device(name) and _above_zero(amount):
                return True
    return False


def _device(name: str) -> bool:
    """Is an extended resource an accelerator: one of ``ACCELERATOR_PREFIXES``, or a name
    whose own part names a GPU, vGPU, TPU or NPU (``_DEVICE_NAME``)?"""
    domain, slash, own = name.rpartition("/")
    return name.startswith(ACCELERATOR_PREFIXES) or bool(
        slash and domain and _DEVICE_NAME.match(own.lower()))


def _above_zero(amount: Any) -> bool:
    """A quantity above zero, or a value that is no quantity (the schema reports it)."""
    try:
        return quantity(amount) > 0
    except (ValueError, TypeError, decimal.InvalidOperation):
        return True
