"""Kubernetes quantities compared exactly, as the API server compares requests and limits."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmanifest.kube.resources import quantity
from pmanifest.render.spec.resources import is_extended


@pytest.mark.parametrize(("text", "value"), [
    ("8", Decimal(8)), (8, Decimal(8)), ("500m", Decimal("0.5")), ("1.5", Decimal("1.5")),
    ("64Gi", Decimal(64 * 2**30)), ("1k", Decimal(1000)), ("1e3", Decimal(1000)),
    ("1E-3", Decimal("0.001")), (".5", Decimal("0.5")), ("100n", Decimal("1E-7")),
    ("2Ei", Decimal(2 * 2**60)), ("+3", Decimal(3)), ("1e999999", Decimal("1e999999")),
])
def test_quantity(text: str | int, value: Decimal) -> None:
    assert quantity(text) == value


def test_not_a_quantity() -> None:
    with pytest.raises(ValueError, match="not a quantity"):
        quantity("64 GB")


@given(st.integers(0, 10**6), st.sampled_from([("Ki", 2**10), ("Mi", 2**20), ("k", 10**3),
                                               ("M", 10**6), ("m", Decimal("0.001"))]))
def test_suffix_scales_exactly(n: int, suffix: tuple[str, int | Decimal]) -> None:
    assert quantity(f"{n}{suffix[0]}") == n * suffix[1]


@pytest.mark.parametrize(("name", "extended"), [
    ("nvidia.com/gpu", True), ("amd.com/gpu", True), ("rdma/hca", True),
    ("hugepages-2Mi", True), ("cpu", False), ("memory", False), ("ephemeral-storage", False),
    ("kubernetes.io/batch-cpu", False), ("example.kubernetes.io/x", False),
])
def test_extended_resources(name: str, extended: bool) -> None:
    assert is_extended(name) is extended
