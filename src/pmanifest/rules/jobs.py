"""Rules: jobs (see policies/rules-*.yaml for their metadata)."""

from __future__ import annotations
