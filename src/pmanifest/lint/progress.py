"""A progress bar over files on a terminal's stderr, for long lint runs.

It is only ever drawn on a terminal: :func:`wanted` says no for a pipe, a file, a dumb terminal
and CI (``CI`` set: some runners give jobs a pseudo-terminal, and a log full of carriage
returns helps nobody). A short run never shows it: it appears once ``delay`` seconds have
passed, is redrawn at most ten times a second, and is erased when the run ends, before any
finding is printed, so the terminal keeps only the findings and the summary.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

WIDTH = 30  # characters of the bar itself
DELAY = 0.5  # seconds before the bar appears
INTERVAL = 0.1  # seconds between redraws
ERASE = "\r\x1b[K"


def colour_wanted(choice: str) -> bool:
    """``--color auto|always|never``: auto colours stdout only on a terminal without NO_COLOR."""
    import sys

    if choice != "auto":
        return choice == "always"
    stdout = sys.stdout  # None when started with descriptor 1 closed
    return stdout is not None and stdout.isatty() and not os.environ.get("NO_COLOR")


def wanted(stream: TextIO) -> bool:
    """Is ``stream`` a terminal a person watches (not a pipe, a file or a CI log)?"""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return terminal and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


class Progress:
    """``[#####.....]  120/3000 files`` on ``stream``, redrawn as files are done."""

    def __init__(self, stream: TextIO, total: int, delay: float = DELAY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.delay = delay
        self._now = clock
        self._start = self._now()
        self._last = float("-inf")
        self.shown = False

    def advance(self) -> None:
        """One more file done; redraw when it is time to."""
        self.done += 1
        now = self._now()
        if self.done >= self.total or now - self._start < self.delay \
                or now - self._last < INTERVAL:
            return
        self._last = now
        self.shown = True
        self.stream.write(ERASE + self.line())
        self.stream.flush()

    def line(self) -> str:
        filled = WIDTH * self.done // max(self.total, 1)
        return f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} files"

    def close(self) -> None:
        """Erase the bar (if it was drawn)."""
        if self.shown:
            self.stream.write(ERASE)
            self.stream.flush()
            self.shown = False
