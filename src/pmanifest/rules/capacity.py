"""Capacity rules (``applies="input"``): with ``lint --cluster FILE``, do the workloads of the
whole run fit the cluster? Each rule reports one kind of shortfall of the capacity model
(:mod:`pmanifest.capacity`), at the workload it names: its GPU limit for a pod larger than a
node, else its pod count (``replicas``, ``parallelism``).
"""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.capacity import (
    ALLOCATED_SHORT,
    POD_TOO_LARGE,
    ROLLOUT,
    STANDARD_SHORT,
    TARGET_SHORT,
)
from pmanifest.rules import InputContext, InputHit, rule

RULES = {POD_TOO_LARGE: "PM510", STANDARD_SHORT: "PM511", ROLLOUT: "PM512",
         TARGET_SHORT: "PM513", ALLOCATED_SHORT: "PM514"}  # the rule of each shortfall


def _of_kind(ctx: InputContext, kind: str, at: str = "pods") -> Iterator[InputHit]:
    for shortfall in ctx.shortfalls:
        if shortfall.kind == kind:
            yield InputHit(shortfall.demand, shortfall.message, at)


@rule("PM510")
def pod_larger_than_node(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_kind(ctx, POD_TOO_LARGE, at="gpus")


@rule("PM511")
def standard_capacity_exceeded(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_kind(ctx, STANDARD_SHORT)


@rule("PM512")
def rollout_cannot_surge(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_kind(ctx, ROLLOUT)


@rule("PM513")
def preemptible_demand_over_target(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_kind(ctx, TARGET_SHORT)


@rule("PM514")
def preemptible_demand_over_allocation(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_kind(ctx, ALLOCATED_SHORT)
