"""Atomic file output: nothing the user has is lost or half-written.

Every file is written to a temp file beside its target, flushed to disk, then renamed into
place with ``os.replace``; on any failure (an OSError, or anything else raised mid-write) the
temp files are removed and every target keeps its previous bytes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from pmanifest.errors import InputError

STDOUT = "-"


def check_writable(path: str, flag: str = "--output") -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if path == STDOUT:
        return
    if os.path.isdir(path):
        raise InputError(f"is a directory; {flag} needs a file path", path)
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise InputError(f"directory {directory} does not exist", path)


def write_files(files: dict[str, str], what: str = "output") -> None:
    """Write every ``path -> text`` atomically; all renames happen after all writes."""
    staged: list[tuple[str, str]] = []
    current = ""
    try:
        for path, text in files.items():
            current = path
            fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                        dir=os.path.dirname(path) or ".")
            staged.append((temp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                os.fchmod(handle.fileno(), _mode_for(path))  # mkstemp's 0600 is not ours
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        for temp, path in staged:
            current = path
            os.replace(temp, path)
    except BaseException as exc:
        for temp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {what}: {exc.strerror or exc}", current) from exc
        raise


def _mode_for(path: str) -> int:
    """Keep an existing file's permissions; a new file gets the umask's default."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
