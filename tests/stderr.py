"""What a test of render reads on stderr: render lints what it writes and warns on stderr
(``file:line:col: warning: PMxxx[slug] ...``). That the rendered output lints clean is the
round-trip tests' business (tests/test_round_trip.py, tests/render/test_lint_round_trip.py,
the round trip of each profile); a test about anything else keeps only the warnings of the
rules it is about, so a new rule changes no expectation of theirs."""

from __future__ import annotations

import re

LINT_WARNING = re.compile(r"^[^\n]*:\d+:\d+: warning: (PM\d{3})\[[a-z0-9-]+\] ")


def render_stderr(text: str, rules: tuple[str, ...] = ()) -> str:
    """``text`` without the lint warnings of rules other than ``rules``."""
    kept = []
    for line in text.splitlines(keepends=True):
        found = LINT_WARNING.match(line)
        if found is None or found.group(1) in rules:
            kept.append(line)
    return "".join(kept)

