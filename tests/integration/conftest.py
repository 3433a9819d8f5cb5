"""Integration tests drive the real tools (pre-commit, kubectl) against the installed
``pmanifest``. Tests marked ``slow`` install things (pre-commit's hook environment from
PyPI); they always run, they just take a minute or two."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: runs real tools that install things (minutes)")
