"""Reading one input, bounded: every file pmanifest reads (manifests, specs, templates,
cluster requests, event files) comes through here.

Regular files, FIFOs (``<(helm template ...)``) and streams (stdin) are read up to
``MAX_INPUT_BYTES``; a bigger input is refused, never read whole. Character and block devices
and sockets are refused unread: ``/dev/zero`` never ends.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
from typing import BinaryIO

from pmanifest.errors import InputError

# The most read from one input: far above any manifest (the API server stores at most
# ~1.5 MiB per object), far below what would exhaust memory.
MAX_INPUT_BYTES = 64 * 1024 * 1024
TOO_BIG = f"more than {MAX_INPUT_BYTES >> 20} MiB (the most pmanifest reads from one input)"
Identity = tuple[int, int]  # (st_dev, st_ino) of an existing file
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def shipped(package: str, *parts: str) -> str:
    """The path of a file shipped inside one of pmanifest's packages (``shipped(
    "pmanifest.policies", "profiles.yaml")``). pip installs a wheel as files, so the file sits
    next to the package's ``__init__``; ``importlib.resources`` would find the same file but
    costs start-up (it imports tempfile, shutil, zipfile and their compressors)."""
    module = importlib.import_module(package)
    if module.__file__ is None:
        raise InputError(f"{package} is not installed as files; reinstall pmanifest with pip")
    return os.path.join(os.path.dirname(module.__file__), *parts)


def source_checkout() -> str | None:
    """The root of the source checkout pmanifest runs from (``src/pmanifest`` two levels
    below it, ``policies/`` beside ``src/``: an editable install), None when it is installed
    from a wheel. Where the developer tools write."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(os.path.dirname(package))
    if os.path.basename(os.path.dirname(package)) != "src" or \
            not os.path.isdir(os.path.join(root, "policies")):
        return None
    return root


def fingerprint(raw: bytes) -> str:
    """Length and CRC-32 of a file's bytes: enough to tell that a file was edited since
    something was made from it (a snapshot, a precompiled template), which is all it is for:
    it is no defence against tampering, and hashlib would cost start-up."""
    import zlib

    return f"{len(raw)}:{zlib.crc32(raw):08x}"


class Unreadable(Exception):
    """An input that cannot be read: the reason, in words that follow "cannot read: "."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_limited(path: str, limit: int = MAX_INPUT_BYTES,
                 regular_only: bool = False) -> tuple[bytes, Identity | None]:
    """The bytes of a regular file or FIFO (``regular_only``: a regular file) and its
    identity; Unreadable for anything else (a directory raises IsADirectoryError), or beyond
    ``limit`` bytes."""
    try:
        found = os.stat(path)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    for test, kind in _KINDS:
        if test(found.st_mode):
            raise Unreadable(f"{kind}, not a file")
    if regular_only and stat.S_ISFIFO(found.st_mode):
        raise Unreadable("a FIFO, not a file")
    if stat.S_ISREG(found.st_mode) and found.st_size > limit:
        raise Unreadable(TOO_BIG if limit == MAX_INPUT_BYTES else f"more than {limit} bytes")
    try:
        with open(path, "rb") as handle:
            raw, found_identity = read_stream(handle, limit), identity_of(handle)
    except IsADirectoryError:
        raise
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    if found_identity is not None:
        _READ.setdefault(found_identity, path)
    return raw, found_identity


# Every regular file this process read, identity -> name as given: no output may replace one
# (atomic.write_targets asks, so a file found while the run went on counts as much as one
# named on the command line).
_READ: dict[Identity, str] = {}


def forget_reads() -> None:
    """Start a new run: nothing read yet."""
    _READ.clear()


def read_so_far() -> dict[Identity, str]:
    """The regular files read so far by this process (identity -> name as given)."""
    return dict(_READ)


def read_stream(stream: BinaryIO, limit: int = MAX_INPUT_BYTES) -> bytes:
    """All of an open stream (stdin, a pipe), or Unreadable beyond ``limit`` bytes."""
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise Unreadable(TOO_BIG if limit == MAX_INPUT_BYTES else f"more than {limit} bytes")
    return raw


def identity_of(handle: object) -> Identity | None:
    """(device, inode) of an open regular file, None for a pipe, a terminal or no file."""
    try:
        found = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def read_input(path: str, name: str) -> bytes:
    """The bytes of the input ``path`` (``-``: stdin), bounded; InputError "cannot read: ..."
    naming it as ``name`` otherwise (a directory, a device, a missing file, too big)."""
    try:
        return read_stream(sys.stdin.buffer) if path == "-" else read_limited(path)[0]
    except Unreadable as exc:
        raise InputError(f"cannot read: {exc.reason}", name) from None
    except OSError as exc:  # a directory
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
