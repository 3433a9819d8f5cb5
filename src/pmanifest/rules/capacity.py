"""Capacity rules (``applies="input"``): with ``lint --cluster FILE``, do the workloads of the
whole run fit the cluster? Each rule reports one kind of shortfall of the capacity model
(:mod:`pmanifest.cluster.capacity`), at the workload it names: its GPU limit for a pod larger than a
node, else its pod count (``replicas``, ``parallelism``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from pmanifest.rules import InputContext, InputHit, rule


@functools.cache
def rules_by_kind() -> dict[str, str]:
    """The rule of each kind of shortfall (the capacity model is imported when it is used:
    a lint run without --cluster registers these checks but never runs them)."""
    from pmanifest.cluster.capacity import (
        ALLOCATED_SHORT,
        POD_TOO_LARGE,
        ROLLOUT,
        STANDARD_SHORT,
        TARGET_SHORT,
    )

    return {POD_TOO_LARGE: "PM510", STANDARD_SHORT: "PM511", ROLLOUT: "PM512",
            TARGET_SHORT: "PM513", ALLOCATED_SHORT: "PM514"}


def _of_rule(ctx: InputContext, rule_id: str, at: str = "pods") -> Iterator[InputHit]:
    rules = rules_by_kind()
    for shortfall in ctx.shortfalls:
        if rules.get(shortfall.kind) == rule_id:
            yield InputHit(shortfall.demand, shortfall.message, at)


@rule("PM510")
def pod_larger_than_node(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_rule(ctx, "PM510", at="gpus")


@rule("PM511")
def standard_capacity_exceeded(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_rule(ctx, "PM511")


@rule("PM512")
def rollout_cannot_surge(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_rule(ctx, "PM512")


@rule("PM513")
def preemptible_demand_over_target(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_rule(ctx, "PM513")


@rule("PM514")
def preemptible_demand_over_allocation(ctx: InputContext) -> Iterator[InputHit]:
    yield from _of_rule(ctx, "PM514")
