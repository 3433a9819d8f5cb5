from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


@pytest.fixture(params=EXAMPLES, ids=[p.name for p in EXAMPLES])
def example(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path
