"""Properties of the checkpoint-interval formula and the lost-work model at their edges."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmanifest.cluster.checkpoint_math import (
    daly_interval,
    job_mean_time,
    lost_fraction,
    young_interval,
)

SECONDS = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)
# 0 (free) or at least a microsecond: subnormal durations underflow sqrt() to 0
CHECKPOINT = st.just(0.0) | st.floats(min_value=1e-6, max_value=3600.0)
NODES = st.integers(min_value=1, max_value=4096)


def test_the_seed_figures() -> None:
    # 90 s checkpoint, one preemption per node every 60 h, a job on 4 nodes: every 15 h.
    mean = job_mean_time(60 * 3600.0, 4)
    assert mean == 15 * 3600.0
    assert young_interval(90.0, mean) == pytest.approx(math.sqrt(2 * 90 * 15 * 3600))  # 3117 s
    assert lost_fraction(young_interval(90.0, mean), 90.0, mean) == pytest.approx(0.0565, abs=5e-4)


@given(CHECKPOINT, SECONDS)
def test_interval_is_zero_only_for_a_free_checkpoint(checkpoint: float, mean: float) -> None:
    interval = young_interval(checkpoint, mean)
    assert interval >= 0.0
    assert (interval == 0.0) == (checkpoint == 0.0)


@given(CHECKPOINT, CHECKPOINT, SECONDS)
def test_interval_grows_with_the_checkpoint_cost(a: float, b: float, mean: float) -> None:
    low, high = sorted((a, b))
    assert young_interval(low, mean) <= young_interval(high, mean)


@given(CHECKPOINT, SECONDS, SECONDS)
def test_interval_grows_with_the_time_between_interruptions(
    checkpoint: float, a: float, b: float
) -> None:
    low, high = sorted((a, b))
    assert young_interval(checkpoint, low) <= young_interval(checkpoint, high)


@given(CHECKPOINT, SECONDS, NODES)
def test_more_nodes_shrink_the_interval_by_their_square_root(
    checkpoint: float, per_node: float, nodes: int
) -> None:
    one = young_interval(checkpoint, job_mean_time(per_node, 1))
    many = young_interval(checkpoint, job_mean_time(per_node, nodes))
    assert many == pytest.approx(one / math.sqrt(nodes), rel=1e-9, abs=1e-12)


@given(CHECKPOINT)
def test_no_preemption_means_no_periodic_checkpoint(checkpoint: float) -> None:
    """No events: the mean time between interruptions is unbounded, so is the interval,
    and nothing is lost to checkpoints taken infinitely rarely."""
    interval = young_interval(checkpoint, math.inf)
    assert interval == (math.inf if checkpoint > 0 else 0.0)
    assert lost_fraction(interval, checkpoint, math.inf) == 0.0


@given(st.floats(min_value=0.0, max_value=1e12, allow_nan=False), CHECKPOINT,
       st.floats(min_value=0.0, max_value=1e12, allow_nan=False))
def test_lost_fraction_is_a_fraction_everywhere(
    interval: float, checkpoint: float, mean: float
) -> None:
    assert 0.0 <= lost_fraction(interval, checkpoint, mean) <= 1.0


@given(st.floats(min_value=1e-3, max_value=1e7), CHECKPOINT)
def test_a_node_preempted_continuously_loses_everything(
    interval: float, checkpoint: float
) -> None:
    """Every node preempted all the time (mean time 0): no work survives."""
    assert lost_fraction(interval, checkpoint, 0.0) == 1.0
    assert young_interval(checkpoint, 0.0) == 0.0


@given(st.floats(min_value=1.0, max_value=1e6), CHECKPOINT, CHECKPOINT, SECONDS)
def test_a_dearer_checkpoint_never_loses_less(
    interval: float, a: float, b: float, mean: float
) -> None:
    low, high = sorted((a, b))
    assert lost_fraction(interval, low, mean) <= lost_fraction(interval, high, mean) + 1e-12


@given(st.floats(min_value=1.0, max_value=1e6), CHECKPOINT, SECONDS, SECONDS)
def test_rarer_interruptions_never_lose_more(
    interval: float, checkpoint: float, a: float, b: float
) -> None:
    low, high = sorted((a, b))
    assert (lost_fraction(interval, checkpoint, high)
            <= lost_fraction(interval, checkpoint, low) + 1e-12)


@given(st.floats(min_value=1e-2, max_value=3600.0), st.floats(min_value=2.0, max_value=1e6),
       st.floats(min_value=0.05, max_value=20.0))
def test_young_interval_is_near_optimal_while_the_checkpoint_is_cheap(
    checkpoint: float, ratio: float, factor: float
) -> None:
    """For C <= M/2 no other interval loses less than 97 % of what Young's loses."""
    mean = checkpoint * ratio
    young = young_interval(checkpoint, mean)
    assert lost_fraction(young, checkpoint, mean) <= 1.03 * lost_fraction(
        young * factor, checkpoint, mean)


@given(st.floats(min_value=1e-2, max_value=100.0), st.floats(min_value=1e4, max_value=1e9))
def test_loss_at_young_matches_the_first_order_figure(checkpoint: float, ratio: float) -> None:
    """While C << M the loss at Young's interval is sqrt(2 C / M) to within 1 %."""
    mean = checkpoint * ratio
    loss = lost_fraction(young_interval(checkpoint, mean), checkpoint, mean)
    assert loss == pytest.approx(math.sqrt(2 * checkpoint / mean), rel=0.01)


@pytest.mark.parametrize("call", [
    lambda: job_mean_time(3600.0, 0),
    lambda: job_mean_time(-1.0, 1),
    lambda: young_interval(-1.0, 10.0),
    lambda: young_interval(math.inf, 10.0),
    lambda: young_interval(1.0, math.nan),
    lambda: lost_fraction(-1.0, 1.0, 10.0),
])
def test_nonsense_is_refused(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


@given(st.floats(min_value=1e-2, max_value=3600.0), st.floats(min_value=0.5, max_value=1e6),
       st.floats(min_value=0.05, max_value=20.0))
def test_daly_interval_is_near_optimal_and_never_worse_than_young(
    checkpoint: float, ratio: float, factor: float
) -> None:
    """Daly's higher-order interval loses no more than Young's, and no other interval loses
    less than 99.9 % of what it loses, even where the checkpoint is dear (C up to 2M)."""
    mean = checkpoint * ratio
    daly = daly_interval(checkpoint, mean)
    young = young_interval(checkpoint, mean)
    assert 0.0 < daly <= young
    at_daly = lost_fraction(daly, checkpoint, mean)
    assert at_daly <= lost_fraction(young, checkpoint, mean) + 1e-12
    assert at_daly <= 1.001 * lost_fraction(daly * factor, checkpoint, mean)


def test_daly_interval_at_its_edges() -> None:
    """Daly's published form: sqrt(2CM)(1 + sqrt(C/2M)/3 + C/18M) - C below C = 2M, M above;
    unbounded (or 0 for a free checkpoint) with no interruption."""
    assert daly_interval(90.0, 3600.0) == pytest.approx(
        math.sqrt(2 * 90 * 3600) * (1 + math.sqrt(90 / 7200) / 3 + 90 / (18 * 3600)) - 90)
    assert daly_interval(300.0, 100.0) == 100.0
    assert daly_interval(200.0, 100.0) == 100.0
    assert daly_interval(0.0, 100.0) == 0.0
    assert daly_interval(90.0, math.inf) == math.inf
    assert daly_interval(0.0, math.inf) == 0.0
    assert daly_interval(90.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        daly_interval(-1.0, 100.0)
