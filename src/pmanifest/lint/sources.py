"""Where lint input comes from: files, directories (recursively) and stdin.

Directories yield ``*.yaml``/``*.yml`` files in sorted order, skipping hidden directories.
Directories behind symbolic links are walked after every real one, so a directory is linted
under its real name; a link to one already linted is reported and skipped, as are symlink
loops, dangling links and unreadable entries (problems, not fatal). A path named on the
command line that does not exist is an input error (exit 2).

Every input is read with a cap (``MAX_INPUT_BYTES``): regular files, FIFOs (``<(helm
template ...)``) and stdin. Devices and sockets are refused unread: ``/dev/zero`` never ends.

The config's ``exclude:`` patterns (relative to the config's directory) and ``--exclude``'s
(relative to the current directory) apply to what a directory walk finds and, by default, to
the paths named on the command line too (pre-commit names every staged file; an excluded one
is skipped, as ruff's ``--force-exclude`` does). ``--no-force-exclude`` lints named paths
whatever the patterns say. Directory walks also skip what git ignores (``gitignored``), unless
``--no-gitignore``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.errors import InputError
from pmanifest.io.reading import Identity, Unreadable, read_limited, read_stdin

if TYPE_CHECKING:
    from pmanifest.kube.kustomized import Built
    from pmanifest.lint.gitignored import GitIgnored

SUFFIXES = (".yaml", ".yml")


class Source(NamedTuple):
    """An input read whole: its name as findings show it, its bytes."""

    name: str  # as shown in findings
    raw: bytes
    identity: Identity | None = None  # of the file read (outputs must not replace it)


class Problem(NamedTuple):
    """An input that could not be read, and why."""

    name: str
    message: str
    named: bool = False  # named on the command line: fatal (exit 2), not a warning


def check_paths(paths: tuple[str, ...]) -> None:
    """Refuse missing paths before anything is linted."""
    for path in paths:
        if path != "-" and not os.path.lexists(path):
            raise InputError("no such file or directory", path)


class FileRef(NamedTuple):
    """A file found but not read yet (so a worker process can read it itself)."""

    path: str
    named: bool = False  # named on the command line (not found by walking a directory)
    patch_of: str | None = None  # the kustomization that names this file as a patch
    # a kustomization names this file as a resource: what its builds add to the objects
    built: Built | None = None
    assertion: str | None = None  # the test harness file that reads it as an assertion

    def read(self) -> Source | Problem:
        found = _read(self.path)
        if self.named and isinstance(found, Problem):
            return Problem(found.name, found.message, named=True)
        return found


class Exclude(NamedTuple):
    """The config's ``exclude:`` glob patterns, relative to the config file's directory (or
    the current directory), ``--exclude``'s (``given``: relative to the current directory),
    and whether they apply to named paths (``force``)."""

    patterns: tuple[str, ...] = ()
    base: FsPath | None = None
    force: bool = True
    given: tuple[str, ...] = ()  # --exclude GLOB (repeatable)

    def matches(self, name: str, via_link: bool = False) -> bool:
        return (bool(self.patterns) and _matches(name, self.patterns, self.base, via_link)) \
            or (bool(self.given) and _matches(name, self.given, FsPath.cwd(), via_link))

    def named_excluded(self, paths: tuple[str, ...]) -> list[str]:
        """The paths named on the command line that the patterns skip."""
        return [p for p in paths if p != "-" and self.force and self.matches(p)]


def _matches(name: str, patterns: tuple[str, ...], base: FsPath | None, via_link: bool) -> bool:
    candidates = {name, name.removeprefix("./"), os.path.normpath(name)}
    if base is not None:
        with contextlib.suppress(ValueError):
            candidates.add(os.path.relpath(name, base).replace(os.sep, "/"))
            if via_link:  # reached through a symbolic link: its real path matches too
                real = os.path.relpath(os.path.realpath(name), base)
                candidates.add(real.replace(os.sep, "/"))
    return any(fnmatch.fnmatch(c, pattern) for c in candidates for pattern in patterns)


def iter_inputs(
    paths: tuple[str, ...], stdin_name: str = "<stdin>", exclude: Exclude | None = None,
    gitignore: bool = True,
) -> Iterator[FileRef | Source | Problem]:
    """Every input in a fixed order: files as references, stdin already read; directory
    walks skip what git ignores (``gitignore``)."""
    if exclude is None:
        exclude = Exclude()
    ignored: GitIgnored | None = None
    if gitignore and any(p != "-" and os.path.isdir(p) for p in paths):
        from pmanifest.lint.gitignored import GitIgnored  # only for directory walks

        ignored = GitIgnored()
    skipped = set(exclude.named_excluded(paths))
    for path in paths:
        if path in skipped:
            continue
        if path == "-":
            try:
                yield Source(stdin_name, *read_stdin())
            except Unreadable as exc:
                yield Problem(stdin_name, f"cannot read: {exc.reason}", named=True)
        elif os.path.isdir(path):
            yield from _walk(path, exclude, ignored)
        else:
            yield FileRef(path, named=True)


def _walk(root: str, exclude: Exclude, ignored: GitIgnored | None) -> Iterator[FileRef | Problem]:
    walk = _Walk(exclude, ignored)
    yield from walk.tree(root, os.path.islink(root))
    while walk.links:  # directories behind links, once every real one is done
        yield from walk.tree(walk.links.pop(0), True)


@dataclass
class _Walk:
    """One directory walk, without recursion (a tree may be deeper than Python's stack)."""

    exclude: Exclude
    ignored: GitIgnored | None = None  # what git ignores is skipped (None: --no-gitignore)
    seen: dict[tuple[int, int], str] = field(default_factory=dict)  # -> name linted under
    links: list[str] = field(default_factory=list)  # symbolic links to directories, in order

    def tree(self, top: str, via_link: bool) -> Iterator[FileRef | Problem]:
        stack: list[Iterator[os.DirEntry[str]]] = []
        yield from self.enter(top, stack)
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
            else:
                yield from self.entry(entry, stack, via_link)

    def enter(self, directory: str, stack: list[Iterator[os.DirEntry[str]]]
              ) -> Iterator[Problem]:
        try:
            found = os.stat(directory)
            key = (found.st_dev, found.st_ino)
            if key in self.seen:
                yield Problem(directory, self.already(directory, self.seen[key]))
                return
            self.seen[key] = directory
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            yield Problem(directory, f"cannot read directory: {exc.strerror}")
            return
        stack.append(iter(entries))

    def entry(self, entry: os.DirEntry[str], stack: list[Iterator[os.DirEntry[str]]],
              via_link: bool) -> Iterator[FileRef | Problem]:
        name = entry.path
        if entry.name.startswith(".") or self.exclude.matches(name, via_link):
            return
        try:
            is_link, is_dir, is_file = entry.is_symlink(), entry.is_dir(), entry.is_file()
        except OSError as exc:
            yield Problem(name, f"cannot read: {exc.strerror}")
            return
        if self.git_ignores(entry, is_dir):
            return
        if is_dir and is_link:
            self.links.append(name)
        elif is_dir:
            yield from self.enter(name, stack)
        elif entry.name.endswith(SUFFIXES):
            if is_file:
                yield FileRef(name)
            elif not is_link:  # read, a FIFO would wait for a writer, a device never end
                yield Problem(name, "not a regular file (a FIFO, a device or a socket); "
                              "skipped")
            elif os.path.exists(name):
                yield Problem(name, "symbolic link to something that is not a file; skipped")
            else:
                yield Problem(name, "dangling symbolic link; skipped")

    def git_ignores(self, entry: os.DirEntry[str], is_dir: bool) -> bool:
        """Is a directory or manifest git ignores to be skipped (not with --no-gitignore)?"""
        return self.ignored is not None and (is_dir or entry.name.endswith(SUFFIXES)) \
            and self.ignored.ignored(entry.path, is_dir)

    @staticmethod
    def already(directory: str, first: str) -> str:
        """Why a directory seen before is skipped, in true words."""
        if not os.path.islink(directory):
            return f"the same directory as {first}, which is linted under that name; skipped"
        real = os.path.realpath(directory)
        parent = os.path.realpath(os.path.dirname(directory))
        if parent == real or parent.startswith(real.rstrip(os.sep) + os.sep):
            return "symlink loop; directory skipped"
        return f"symbolic link to {first}, which is linted under that name; skipped"


def _read(path: str) -> Source | Problem:
    try:
        raw, identity = read_limited(path)
    except IsADirectoryError:
        return Problem(path, "is a directory")
    except Unreadable as exc:
        return Problem(path, f"cannot read: {exc.reason}")
    return Source(path, raw, identity)
