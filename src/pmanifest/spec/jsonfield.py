"""One field of the spec's JSON Schema: every field carries a description and, where it has
one, its default (for ``pmanifest schema`` and editors)."""

from __future__ import annotations

from typing import Any


def field(schema: dict[str, Any], description: str, default: Any = None) -> dict[str, Any]:
    """A field: its schema plus the description and default every field carries."""
    out = dict(schema)
    out["description"] = description
    if default is not None:
        out["default"] = default
    return out
