"""GPUs per node for a cluster's ``gpu_type``.

Together documents no per-type table. It requires ``num_preemptible_gpus`` to be a multiple of 8 and
its example asks for 8 GPUs of one node; Together's cluster concepts page describes every GPU
worker node with 8 GPUs. So every type counts 8 GPUs per node until a type is known to differ;
``KNOWN`` is where such a type would go (it is empty on purpose: no documented exception).
"""

from __future__ import annotations

DEFAULT_GPUS_PER_NODE = 8
KNOWN: dict[str, int] = {}


def gpus_per_node(gpu_type: str | None) -> int:
    if gpu_type is None:
        return DEFAULT_GPUS_PER_NODE
    return KNOWN.get(gpu_type, DEFAULT_GPUS_PER_NODE)
