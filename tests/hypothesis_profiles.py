"""How many examples each hypothesis test runs, in one place: the whole suite (CI, and any run
that does not deselect ``slow``) runs every test's full count, hypothesis' ``whole`` profile;
the developer's fast subset, ``pytest -m "not slow"``, runs a quarter of it (at least
``FAST_FLOOR``), the ``fast`` profile, which tests/conftest.py loads. A test that asks for a
count says it through ``examples(n)``, which scales it like the loaded profile scales
hypothesis' default of 100. ``--hypothesis-profile=whole`` runs the full counts in the fast
subset too."""

from __future__ import annotations

from hypothesis import settings

WHOLE = 100  # hypothesis' default max_examples: the unit a profile is a share of
FAST_SHARE = 4  # the fast subset runs one example in four
FAST_FLOOR = 10

settings.register_profile("whole", max_examples=WHOLE)
settings.register_profile("fast", max_examples=WHOLE // FAST_SHARE)


def examples(whole: int) -> int:
    """The max_examples of a test that runs WHOLE examples in the whole suite, under the loaded
    profile: WHOLE itself under ``whole``, a quarter (at least FAST_FLOOR, never more than
    WHOLE) under ``fast``."""
    loaded = settings.default.max_examples
    if loaded >= WHOLE:
        return whole
    return min(whole, max(FAST_FLOOR, whole * loaded // WHOLE))
