""""Did you mean ...?": the one helper every unknown name goes through (config keys, rule
names, profiles, spec keys and values, schema fields)."""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.6


def close_match(word: str, choices: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The choice closest to ``word``, or None when nothing is close enough."""
    import difflib  # only when a name is unknown (not on every run's start-up)

    found = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = CUTOFF) -> str:
    """`` (did you mean 'x'?)`` for an unknown name, or an empty string."""
    found = close_match(word, choices, cutoff)
    return f" (did you mean {found!r}?)" if found else ""
