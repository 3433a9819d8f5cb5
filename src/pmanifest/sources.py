"""Where lint input comes from: files, directories (recursively) and stdin.

Directories yield ``*.yaml``/``*.yml`` files in sorted order, skipping hidden directories.
Symlink loops, dangling links and unreadable entries are reported as problems, not fatal.
A path named on the command line that does not exist is an input error (exit 2).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path as FsPath

from pmanifest.atomic import Identity
from pmanifest.errors import InputError

SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Source:
    name: str  # as shown in findings
    raw: bytes
    identity: Identity | None = None  # of the file read (outputs must not replace it)


@dataclass(frozen=True)
class Problem:
    name: str
    message: str
    named: bool = False  # named on the command line: fatal (exit 2), not a warning


def check_paths(paths: tuple[str, ...]) -> None:
    """Refuse missing paths before anything is linted."""
    for path in paths:
        if path != "-" and not os.path.lexists(path):
            raise InputError("no such file or directory", path)


@dataclass(frozen=True)
class FileRef:
    """A file found but not read yet (so a worker process can read it itself)."""

    path: str
    named: bool = False  # named on the command line (not found by walking a directory)

    def read(self) -> Source | Problem:
        found = _read(self.path)
        if self.named and isinstance(found, Problem):
            return Problem(found.name, found.message, named=True)
        return found


def iter_inputs(
    paths: tuple[str, ...], stdin_name: str = "<stdin>", exclude: tuple[str, ...] = (),
    base: FsPath | None = None,
) -> Iterator[FileRef | Source | Problem]:
    """Every input in a fixed order: files as references, stdin already read."""
    for path in paths:
        if path == "-":
            yield Source(stdin_name, sys.stdin.buffer.read(), _identity(sys.stdin.buffer))
        elif os.path.isdir(path):
            yield from _walk(path, exclude, base)
        else:
            yield FileRef(path, named=True)


def _excluded(name: str, exclude: tuple[str, ...], base: FsPath | None) -> bool:
    if not exclude:
        return False
    candidates = {name, name.removeprefix("./")}
    if base is not None:
        with contextlib.suppress(ValueError):
            candidates.add(os.path.relpath(name, base).replace(os.sep, "/"))
    return any(fnmatch.fnmatch(c, pattern) for c in candidates for pattern in exclude)


def _walk(
    root: str, exclude: tuple[str, ...], base: FsPath | None
) -> Iterator[FileRef | Problem]:
    seen: set[tuple[int, int]] = set()

    def visit(directory: str) -> Iterator[FileRef | Problem]:
        try:
            stat = os.stat(directory)
        except OSError as exc:
            yield Problem(directory, f"cannot read directory: {exc.strerror}")
            return
        key = (stat.st_dev, stat.st_ino)
        if key in seen:
            yield Problem(directory, "symlink loop; directory skipped")
            return
        seen.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            yield Problem(directory, f"cannot read directory: {exc.strerror}")
            return
        for entry in entries:
            name = os.path.join(directory, entry.name)
            if entry.name.startswith(".") or _excluded(name, exclude, base):
                continue
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                yield Problem(name, f"cannot read: {exc.strerror}")
                continue
            if is_dir:
                yield from visit(name)
            elif entry.name.endswith(SUFFIXES):
                if is_file:
                    yield FileRef(name)
                elif entry.is_symlink():
                    yield Problem(name, "dangling symbolic link; skipped")

    yield from visit(root)


def _identity(handle: object) -> Identity | None:
    """(device, inode) of an open regular file, None for a pipe, a terminal or no file."""
    import stat

    try:
        found = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def _read(path: str) -> Source | Problem:
    try:
        with open(path, "rb") as handle:
            return Source(path, handle.read(), _identity(handle))
    except IsADirectoryError:
        return Problem(path, "is a directory")
    except OSError as exc:
        return Problem(path, f"cannot read: {exc.strerror}")
