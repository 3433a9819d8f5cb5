"""What git ignores, for lint's directory walks (``--no-gitignore`` turns this off).

Inside a git repository (a directory with a ``.git`` above the path, as git finds it), a path
is ignored as git would ignore it: the patterns of ``.git/info/exclude``, then of every
``.gitignore`` from the repository's root down to the path's directory, each relative to its
own directory, the last one that matches deciding (a deeper ``!pattern`` re-includes). The
patterns are read by ``pathspec``'s ``GitIgnoreSpec`` (git's own wildmatch rules: ``build/``
only matches directories, ``/top.yaml`` only at its file's level, ``**``, ``!``). A directory
that is ignored is not entered, so nothing under it comes back, as in git. Outside a
repository no ``.gitignore`` counts (git, ripgrep and pre-commit agree). The user's global
excludes file (``core.excludesFile``) is not read: it is no part of the repository, so a
gate would pass on one machine and fail on another.

Files named on the command line are linted whatever git ignores: the user asked for them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pmanifest.io.reading import Unreadable, read_limited

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".gitignore"
MAX_IGNORE_BYTES = 1 << 20  # a .gitignore larger than this is not one


class GitIgnored:
    """One walk's view of git's ignore rules: the files are read once per directory."""

    def __init__(self) -> None:
        self._roots: dict[str, str | None] = {}  # directory -> its repository's root
        self._specs: dict[str, GitIgnoreSpec | None] = {}  # ignore file -> its patterns

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Does git ignore ``path`` (found in a walk; a directory when ``is_dir``)?"""
        full = os.path.abspath(path)
        parent = os.path.dirname(full)
        root = self._root(parent)
        if root is None:
            return False
        decided: bool | None = None
        for base, spec in self._chain(root, parent):
            relative = os.path.relpath(full, base).replace(os.sep, "/")
            found = spec.check_file(relative + "/" if is_dir else relative).include
            if found is not None:
                decided = found
        return bool(decided)

    def _chain(self, root: str, directory: str) -> list[tuple[str, GitIgnoreSpec]]:
        """(base, patterns) in the order git applies them, for paths in ``directory``."""
        chain = []
        exclude = self._spec(os.path.join(root, ".git", "info", "exclude"))
        if exclude is not None:
            chain.append((root, exclude))
        relative = os.path.relpath(directory, root)
        parts = [] if relative == "." else relative.split(os.sep)
        for depth in range(len(parts) + 1):
            base = os.path.join(root, *parts[:depth])
            spec = self._spec(os.path.join(base, IGNORE_FILE))
            if spec is not None:
                chain.append((base, spec))
        return chain

    def _root(self, directory: str) -> str | None:
        """The root of the git repository ``directory`` is in (None: in none)."""
        if directory not in self._roots:
            if os.path.exists(os.path.join(directory, ".git")):
                self._roots[directory] = directory
            else:
                parent = os.path.dirname(directory)
                self._roots[directory] = None if parent == directory else self._root(parent)
        return self._roots[directory]

    def _spec(self, path: str) -> GitIgnoreSpec | None:
        if path not in self._specs:
            self._specs[path] = _read_spec(path)
        return self._specs[path]


def _read_spec(path: str) -> GitIgnoreSpec | None:
    """The patterns of one ignore file (None: there is none, or it cannot be read, which
    git treats the same way)."""
    if not os.path.isfile(path):
        return None
    try:
        raw, _ = read_limited(path, MAX_IGNORE_BYTES, regular_only=True)
    except (Unreadable, OSError):
        return None
    from pathspec import GitIgnoreSpec  # only where a repository has ignore files

    lines = raw.decode("utf-8", errors="replace").splitlines()
    return GitIgnoreSpec.from_lines(lines) if lines else None
