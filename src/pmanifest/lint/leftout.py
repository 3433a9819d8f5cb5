"""What a directory walk left out, counted only when a run found no Kubernetes object.

``pmanifest lint DIR`` does not walk hidden directories (``.github/``, ``.tekton/``: CI
definitions, not what the tree deploys) nor hidden files, and skips what the ``exclude:``
patterns and git ignore. When nothing else is left, "no *.yaml file in it" would be untrue: the
gate's message says how many YAML files each reason left out instead, so the user can name
them (a hidden path named on the command line is linted). The count walks the same trees
again, bounded (``MAX_LEFT_OUT_ENTRIES``); git's own ``.git`` directory is never entered.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.io.limits import MAX_LEFT_OUT_ENTRIES
from pmanifest.lint.sources import SUFFIXES, Exclude

if TYPE_CHECKING:
    from pmanifest.lint.gitignored import GitIgnored

HIDDEN, EXCLUDED, IGNORED = "hidden", "excluded", "ignored by git"


class LeftOut(NamedTuple):
    """YAML files a walk left out, by reason, and whether the count stopped at its bound."""

    counts: Counter[str]
    partial: bool = False

    def describe(self) -> str:
        """``3 in hidden directories or files, 1 excluded`` (empty: none)."""
        words = {HIDDEN: "in hidden directories or files", EXCLUDED: "excluded",
                 IGNORED: "ignored by git"}
        parts = [f"{self.counts[reason]} {words[reason]}" for reason in (HIDDEN, EXCLUDED,
                                                                           IGNORED)
                 if self.counts[reason]]
        if parts and self.partial:
            parts[-1] += " (at least: the count stopped)"
        return ", ".join(parts)


def left_out(paths: tuple[str, ...], exclude: Exclude, gitignore: bool) -> LeftOut:
    """The YAML files under the directories among ``paths`` that a walk skipped."""
    ignored: GitIgnored | None = None
    if gitignore:
        from pmanifest.lint.gitignored import GitIgnored

        ignored = GitIgnored()
    counts: Counter[str] = Counter()
    budget = MAX_LEFT_OUT_ENTRIES
    stack = [(p, "") for p in paths if p != "-" and os.path.isdir(p)]
    while stack:
        directory, why = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        budget -= len(entries)
        if budget < 0:
            return LeftOut(counts, partial=True)
        for entry in entries:
            found = _entry(entry, why, exclude, ignored)
            if found is not None and found[0]:
                stack.append((entry.path, found[1]))
            elif found is not None and found[1]:
                counts[found[1]] += 1
    return LeftOut(counts)


def _entry(entry: os.DirEntry[str], why: str, exclude: Exclude,
           ignored: GitIgnored | None) -> tuple[bool, str] | None:
    """(is a directory, why a walk skips it or ""), for a directory or a YAML file under one
    skipped for ``why`` (if any); None for what is neither, and for git's own .git."""
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        return None
    if (is_dir and entry.name == ".git") or (not is_dir and not entry.name.endswith(SUFFIXES)):
        return None
    return is_dir, why or _reason(entry, is_dir, exclude, ignored)


def _reason(entry: os.DirEntry[str], is_dir: bool, exclude: Exclude,
            ignored: GitIgnored | None) -> str:
    """Why a walk skips ``entry`` ("": it does not), in the walk's own order."""
    if entry.name.startswith("."):
        return HIDDEN
    if exclude.matches(entry.path):
        return EXCLUDED
    if ignored is not None and ignored.ignored(entry.path, is_dir):
        return IGNORED
    return ""
