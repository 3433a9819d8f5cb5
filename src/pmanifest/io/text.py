"""Text for people: prose wrapped to the width of the terminal it is read on.

The width is that of stdout's terminal (``COLUMNS`` wins when set), 80 columns when stdout is
not a terminal (a pipe, a file, CI), and never more than ``MAX_WIDTH``: prose longer than that
on one line is hard to read on a wide terminal. Lines that are not prose (tables, examples,
manifests) are left as they are by the callers.
"""

from __future__ import annotations

import shutil
import textwrap

PIPE_WIDTH = 80  # stdout that is no terminal
MAX_WIDTH = 100  # the widest a paragraph is set, whatever the terminal
MIN_WIDTH = 40  # a narrower terminal still gets words, not a column of letters


def terminal_width() -> int:
    """The width to set prose to: the terminal's (``COLUMNS`` first), 80 in a pipe, within
    MIN_WIDTH..MAX_WIDTH."""
    found = shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    return max(MIN_WIDTH, min(found or PIPE_WIDTH, MAX_WIDTH))


def wrap(text: str, width: int, indent: str = "", hang: str | None = None) -> str:
    """Every line of ``text`` wrapped to ``width`` columns (a blank line stays one), each
    wrapped line indented by ``indent``, its continuation lines by ``hang`` (default
    ``indent``). Words are never broken: a word longer than the line (a URL) stands alone."""
    later = indent if hang is None else hang
    out = []
    for line in text.split("\n"):
        if not line.strip():
            out.append("")
            continue
        out.append(textwrap.fill(line.strip(), width, initial_indent=indent,
                                 subsequent_indent=later, break_long_words=False,
                                 break_on_hyphens=False))
    return "\n".join(out)
