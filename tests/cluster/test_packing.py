"""Exact node packing of GPU pods, checked against brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmanifest.cluster.packing import fits, min_nodes
from tests.hypothesis_profiles import examples


def brute_min_nodes(pods: list[int], per_node: int) -> int:
    """Every way to put each pod on a node already opened or on a new one."""
    best = len(pods)

    def place(i: int, loads: list[int]) -> None:
        nonlocal best
        if len(loads) >= best:
            return
        if i == len(pods):
            best = len(loads)
            return
        for n, load in enumerate(loads):
            if load + pods[i] <= per_node:
                loads[n] += pods[i]
                place(i + 1, loads)
                loads[n] -= pods[i]
        place(i + 1, [*loads, pods[i]])

    place(0, [])
    return best


def test_beats_first_fit_decreasing() -> None:
    # FFD: 4+3 | 3+2+2 | 2 -> three nodes; exactly: 4+2+2 | 3+3+2 -> two.
    assert min_nodes([2, 2, 2, 3, 3, 4], 8) == 2
    assert fits([2, 2, 2, 3, 3, 4], 2, 8) is True


def test_a_sum_is_not_enough() -> None:
    assert min_nodes([5, 5, 5], 8) == 3
    assert fits([5, 5, 5], 2, 8) is False  # 15 GPUs <= 16, but one pod per node


def test_partial_node_and_pods_larger_than_a_node() -> None:
    assert fits([8, 4], 1, 8, partial=4) is True
    assert fits([8, 5], 1, 8, partial=4) is False
    assert fits([9], 4, 8) is False
    assert fits([], 0, 8) is True
    assert fits([0, 0], 0, 8) is True  # pods without GPUs need none


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=8), max_size=9))
def test_min_nodes_is_exact(pods: list[int]) -> None:
    assert min_nodes(pods, 8) == brute_min_nodes(pods, 8)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), max_size=7),
       st.integers(min_value=0, max_value=4), st.integers(min_value=0, max_value=3))
def test_fits_agrees_with_the_fewest_nodes(pods: list[int], nodes: int, partial: int) -> None:
    expected = brute_min_nodes([*pods], 4) <= nodes if not partial else any(
        brute_min_nodes(rest, 4) <= nodes
        for mask in itertools.product((0, 1), repeat=len(pods))
        if sum(p for p, m in zip(pods, mask, strict=True) if m) <= partial
        for rest in [[p for p, m in zip(pods, mask, strict=True) if not m]])
    assert fits(pods, nodes, 4, partial) is expected


def test_large_inputs_stay_fast_and_exact_where_bounds_settle_them() -> None:
    assert fits([8] * 500 + [1] * 300, 600, 8) is True
    assert fits([3] * 1000, 499, 8) is False  # two 3-GPU pods a node: 500 nodes
    assert fits([3] * 1000, 500, 8) is True
    assert min_nodes([3] * 1000 + [2] * 1000, 8) == 625  # 3+3+2 on 500 nodes, 2+2+2+2 on 125
    assert min_nodes([4, 3, 3] * 300 + [2, 2, 2] * 300, 8) == 600


def test_out_of_budget_is_undecided_not_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    from pmanifest.cluster import packing

    monkeypatch.setattr(packing, "BUDGET", 3)
    hard = [2, 2, 2, 3, 3, 4] * 3  # first-fit decreasing misses the optimum of 6 nodes
    assert packing.min_nodes(hard, 8) is None
    assert packing.fits(hard, 6, 8) is None
    assert packing.fits(hard, 5, 8) is False  # the bound still settles this one
    monkeypatch.setattr(packing, "BUDGET", 200_000)
    assert packing.min_nodes(hard, 8) == 6


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.integers(min_value=1, max_value=8), st.integers(0, 6), max_size=4),
       st.integers(min_value=0, max_value=6), st.integers(min_value=0, max_value=7))
def test_counts_agree_with_pods_one_by_one(counts: dict[int, int], nodes: int,
                                           partial: int) -> None:
    from pmanifest.cluster.packing import fits_counts

    pods = [size for size, n in counts.items() for _ in range(n)]
    assert fits_counts(counts, nodes, 8, partial) == fits(pods, nodes, 8, partial)


def test_counts_of_any_size_are_decided_by_bounds() -> None:
    from pmanifest.cluster.packing import fits_counts

    assert fits_counts({4: 10**9}, 2**70, 8) is True  # a node each
    assert fits_counts({4: 10**9}, 2, 8) is False  # more GPUs than the nodes hold
    assert fits_counts({3: 10**6, 2: 10**6}, 10**6, 8) is True  # each size apart: 1/2 + 1/4
    assert fits_counts({5: 10**6}, 10**6 - 1, 8) is False  # no two share a node
    # 3+3+2 on every node would fit exactly, but 30,000 pods are too many to pack one by one
    assert fits_counts({3: 20_000, 2: 10_000}, 10_000, 8) is None
