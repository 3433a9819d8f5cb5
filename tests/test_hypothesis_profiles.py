"""The fast subset runs a share of each hypothesis test's examples and the whole suite all of
them (tests/hypothesis_profiles.py, loaded by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.hypothesis_profiles import FAST_FLOOR, examples


@pytest.fixture
def restore_profile() -> Iterator[None]:
    loaded = settings.get_current_profile_name()
    yield
    settings.load_profile(loaded)


@pytest.mark.usefixtures("restore_profile")
def test_the_whole_profile_runs_every_example_the_fast_one_a_quarter() -> None:
    settings.load_profile("whole")
    assert [examples(n) for n in (5, 40, 400)] == [5, 40, 400]
    settings.load_profile("fast")
    # a quarter, at least FAST_FLOOR, never more than the whole count
    assert [examples(n) for n in (5, 40, 400)] == [5, FAST_FLOOR, 100]


def test_only_a_run_that_deselects_slow_loads_the_fast_profile(
        request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--hypothesis-profile", None):
        pytest.skip("--hypothesis-profile decides")
    fast = "not slow" in str(request.config.getoption("markexpr") or "")
    assert settings.get_current_profile_name() == ("fast" if fast else "whole")
    assert settings.default.max_examples == (25 if fast else 100)
