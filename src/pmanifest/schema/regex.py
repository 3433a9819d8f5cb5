"""Patterns from untrusted schemas run on RE2, a linear-time engine: no pattern can backtrack
catastrophically, whatever the input. Python's ``re`` is kept for pmanifest's own patterns
and the shipped Kubernetes schemas."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

Search = Callable[[str], Any]


class PatternError(ValueError):
    """A pattern RE2 cannot compile."""


@functools.lru_cache(maxsize=1024)
def search(pattern: str) -> Search:
    """The ``search`` of ``pattern`` compiled by RE2 (linear time); PatternError if RE2
    cannot compile it."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of the error to stderr
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        raise PatternError(text) from None
    found: Search = compiled.search
    return found


def extra_keys(instance: dict[Any, Any], schema: Any) -> list[Any]:
    """Keys of ``instance`` that neither ``properties`` nor ``patternProperties`` cover."""
    if not isinstance(schema, dict):
        return list(instance)
    props = schema.get("properties", {})
    patterns = [search(p) for p in schema.get("patternProperties", {})]
    return [k for k in instance
            if k not in props and not any(p(str(k)) is not None for p in patterns)]
