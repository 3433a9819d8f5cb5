"""The one reader: every file pmanifest reads comes through here (manifests, specs, stdin, the
config and ``pyproject.toml``, policy files, kustomizations and patches, templates, cluster and
event files, and its own shipped data: snapshots, profiles, templates, schemas).

- What: a regular file; a FIFO (``<(helm template ...)``) or stdin only where a command
  reads its inputs that way (``regular_only=False``). Character and block devices, sockets
  and directories are refused unread: ``/dev/zero`` never ends, a FIFO nobody writes never
  opens. The kind is checked on what was opened (``fstat``), so a file swapped for another
  between the check and the open is never read as the first.
- How much: at most ``MAX_INPUT_BYTES`` (or a smaller ``limit``); a bigger input is refused,
  never read whole.
- How often: once. Each file is opened once per read, without blocking unless it is a FIFO a
  command reads; what cannot be read again (a FIFO, stdin) is kept by whoever needs it twice.
- As text: UTF-8 (a BOM is dropped), no NUL byte, CRLF read as LF (``decode``).

``tests/test_one_reader.py`` finds every ``open``, ``read_text``, ``read_bytes`` and ``os.open``
of ``src/`` outside this package and fails unless it is on its allow-list with a reason.
"""

from __future__ import annotations

import errno
import importlib
import os
import stat
import sys
from typing import BinaryIO, cast

from pmanifest.errors import InputError
from pmanifest.io.limits import MAX_INPUT_BYTES, too_big

TOO_BIG = too_big(MAX_INPUT_BYTES)
Identity = tuple[int, int]  # (st_dev, st_ino) of an existing file
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20

__all__ = ["MAX_INPUT_BYTES", "TOO_BIG", "Identity", "NotText", "Unreadable", "decode",
           "fingerprint", "forget_reads", "identity_of", "read_input", "read_limited",
           "read_package_file", "read_shipped", "read_so_far", "read_stdin", "read_stream",
           "shipped"]


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


def read_shipped(package: str, *parts: str) -> bytes:
    """The bytes of a file shipped with pmanifest (or a package it uses): a regular file,
    bounded like any input; OSError when it is missing or not a file (a broken install)."""
    return read_package_file(shipped(package, *parts))


def read_package_file(path: str) -> bytes:
    """The bytes of a file of an installed package (pmanifest's or one it uses): a regular
    file, bounded like any input; OSError when it is missing or no file (a broken install)."""
    try:
        return read_limited(path, regular_only=True, record=False)[0]
    except Unreadable as exc:
        raise OSError(errno.EIO, exc.reason, path) from None


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


def _refuse(mode: int, regular_only: bool, path: str) -> None:
    """Unreadable for what is no file to read (IsADirectoryError for a directory)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    for test, kind in _KINDS:
        if test(mode):
            raise Unreadable(f"{kind}, not a file")
    if regular_only and stat.S_ISFIFO(mode):
        raise Unreadable("a FIFO, not a file")


def read_limited(path: str, limit: int = MAX_INPUT_BYTES, regular_only: bool = False,
                 record: bool = True) -> tuple[bytes, Identity | None]:
    """The bytes of a regular file or FIFO (``regular_only``: a regular file) and its
    identity (None for a FIFO); Unreadable for anything else (a directory raises
    IsADirectoryError), or beyond ``limit`` bytes. The file is opened once, and only a FIFO
    is opened in a way that waits (for its writer). ``record``: remember it as an input,
    which no output may replace."""
    try:
        named = os.stat(path)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    _refuse(named.st_mode, regular_only, path)
    fifo = stat.S_ISFIFO(named.st_mode)
    try:
        fd = os.open(path, _FLAGS if fifo else _FLAGS | os.O_NONBLOCK)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        found = os.fstat(fd)
        _refuse(found.st_mode, regular_only, path)
        if (found.st_dev, found.st_ino) != (named.st_dev, named.st_ino):
            raise Unreadable("it was replaced while being opened")
        if stat.S_ISREG(found.st_mode) and found.st_size > limit:
            raise Unreadable(too_big(limit))
        raw = _read_fd(fd, limit)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    found_identity = (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None
    if found_identity is not None and record:
        _READ.setdefault(found_identity, path)
    return raw, found_identity


def _read_fd(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        part = os.read(fd, min(_CHUNK, limit + 1 - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        raise Unreadable(too_big(limit))
    return b"".join(parts)


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
    """All of an open stream (a pipe), or Unreadable beyond ``limit`` bytes."""
    try:
        raw = stream.read(limit + 1)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    if raw is None:  # a non-blocking stream with nothing in it yet
        raise Unreadable("nothing to read yet (a non-blocking stream)")
    if len(raw) > limit:
        raise Unreadable(too_big(limit))
    return raw


def read_stdin(limit: int = MAX_INPUT_BYTES) -> tuple[bytes, Identity | None]:
    """What stdin holds and its identity (a regular file redirected in, else None);
    Unreadable when descriptor 0 is closed or not open for reading."""
    stream = sys.stdin
    if stream is None:  # started with descriptor 0 closed (<&-)
        raise Unreadable("stdin is closed")
    buffer = cast(BinaryIO, getattr(stream, "buffer", stream))
    try:
        raw = read_stream(buffer, limit)
    except Unreadable as exc:
        if exc.reason == os.strerror(errno.EBADF):  # open for writing only (0>file)
            raise Unreadable("stdin is not open for reading") from None
        raise
    except ValueError:  # closed by the program that started us
        raise Unreadable("stdin is closed") from None
    found = identity_of(buffer)
    if found is not None:
        _READ.setdefault(found, "stdin")
    return raw, found


def identity_of(handle: object) -> Identity | None:
    """(device, inode) of an open regular file, None for a pipe, a terminal or no file."""
    try:
        found = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def read_input(path: str, name: str, regular_only: bool = False,
               limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the input ``path`` (``-``: stdin), bounded; InputError "cannot read: ..."
    naming it as ``name`` otherwise (a directory, a device, a missing file, too big)."""
    try:
        return read_stdin(limit)[0] if path == "-" else read_limited(path, limit,
                                                                     regular_only)[0]
    except Unreadable as exc:
        raise InputError(f"cannot read: {exc.reason}", name) from None
    except OSError as exc:  # a directory
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None


# -- the encoding rules ----------------------------------------------------------------------

class NotText(Exception):
    """Bytes that are not text pmanifest reads: the problem and where (1-based)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def decode(raw: bytes) -> str:
    """Bytes to text: UTF-8 (a BOM is dropped), or NotText at the first bad byte or NUL; CRLF
    line ends read as LF."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotText("file is not valid UTF-8 text", line, column) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        raise NotText("file contains NUL bytes (binary data?)", line, 1)
    return text.replace("\r\n", "\n")
