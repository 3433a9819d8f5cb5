"""Output: nothing the user has is lost, half-written or replaced by something else.

A regular file (or a new path) is written to a temp file beside it, flushed to disk, then
renamed into place with ``os.replace``; a symbolic link is followed, so the link stays and its
target gets the new bytes. A character device or a FIFO (``/dev/null``, ``/dev/stdout``, a
shell's ``>(...)``) is written to directly, never replaced. Anything else (a directory, a
block device, a socket) is refused before any work is done, and so is an output that is one
of the inputs of the run (``Identity``: device and inode, so links and other spellings of the
same file count). On any failure the temp files are removed and every target keeps its bytes.

Stdout can say no too: a full disk or device (``> /dev/full``), a closed descriptor (``>&-``).
That is the environment, not a bug: a PmanifestError ("cannot write output: ...", exit 2). A
reader that went away (``| head``) stays a BrokenPipeError, which the CLI ends quietly.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, NamedTuple

import click

from pmanifest.errors import ConfigError, InputError, PmanifestError
from pmanifest.io.reading import Identity, read_so_far
from pmanifest.io.terminal import shown

STDOUT = "-"


class Target(NamedTuple):
    """One thing a run writes: the option that named it and its path (``-``: stdout, for
    every option that takes a path). An ``update`` is the new version of a file the run read
    to make it (``lint --fix`` of a manifest, ``--write-baseline`` over the baseline): what
    the run read along the way does not refuse it, the inputs the caller names still do."""

    flag: str
    path: str
    update: bool = False


def plan_outputs(targets: Sequence[Target], inputs: Mapping[Identity, str]) -> None:
    """Refuse, before any work is done, what the targets cannot mean together: two of them
    on stdout, a path that cannot be written, one file named twice (any spelling: the same
    path, a symbolic or a hard link), a file that is one of the ``inputs``."""
    on_stdout: Target | None = None
    seen: dict[object, Target] = {}
    for target in targets:
        if target.path == STDOUT:
            if on_stdout is not None:
                raise ConfigError(f"{target.flag} - would share stdout with "
                                  f"{on_stdout.flag}; give {target.flag} a file path")
            on_stdout = target
            continue
        check_writable(target.path, target.flag)
        key = _target_key(target.path)
        if key is not None and key in seen:
            first = seen[key]
            also = "" if first.path == target.path else f" (as {first.flag} {first.path})"
            raise ConfigError(f"{target.flag} {target.path} is given twice{also}: the first "
                              "output would be lost; give each its own file")
        if key is not None:
            seen[key] = target
        refuse_inputs([target.path], inputs, target.flag)


def _target_key(path: str) -> object:
    """What makes two spellings of an output the same file: its identity when it exists,
    else its real path; None for a character device (``/dev/null`` may take several)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    if stat.S_ISCHR(found.st_mode):
        return None
    return found.st_dev, found.st_ino


Text = str | Iterator[str]  # what is written: whole, or in pieces as they are made


def write_targets(texts: Mapping[Target, Text], inputs: Mapping[Identity, str],
                  what: str = "output") -> None:
    """Write every target's text: the files first (atomically, together, none of them an
    input: ``inputs`` and whatever the run read since it was planned), then stdout."""
    files = {t.path: text for t, text in texts.items() if t.path != STDOUT}
    for target in texts:
        if target.path != STDOUT:
            read = inputs if target.update else {**read_so_far(), **inputs}
            refuse_inputs([target.path], read, target.flag)
    write_files(files, what)
    for target, text in texts.items():
        if target.path == STDOUT:
            for piece in [text] if isinstance(text, str) else _gathered(text):
                write_bytes(piece.encode("utf-8"))




def identity(path: str) -> Identity | None:
    """The identity of the file ``path`` names (links followed), None if there is none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def input_identities(paths: Iterable[str]) -> dict[Identity, str]:
    """The identities of the files a run reads (``-``: stdin, when it is a regular file, as
    ``< file`` makes it), each with its name as given; the first name of a file wins."""
    found: dict[Identity, str] = {}
    for path in paths:
        key: Identity | None = None
        if path != STDOUT:
            key = identity(path)
        else:
            try:
                status = os.fstat(sys.stdin.fileno())
            except (AttributeError, OSError, ValueError):
                continue
            if stat.S_ISREG(status.st_mode):
                key = (status.st_dev, status.st_ino)
        if key is not None:
            found.setdefault(key, "stdin" if path == STDOUT else path)
    return found


def _streamed(path: str) -> bool:
    """Is ``path`` a character device or a FIFO (written to, never replaced)?"""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def check_writable(path: str, flag: str = "--output") -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if path == STDOUT:
        return
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write {flag}: {getattr(exc, 'strerror', None) or exc}",
                         path) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"is a directory; {flag} needs a file path", path)
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)
                                 or stat.S_ISFIFO(mode)):
        raise InputError(f"is not a regular file, a character device or a FIFO; {flag} "
                         "needs a file path", path)
    directory = os.path.dirname(os.path.realpath(path)) or "."
    if mode is None and not os.path.isdir(directory):
        raise InputError(f"directory {os.path.dirname(path) or '.'} does not exist", path)


def refuse_inputs(outputs: Iterable[str], inputs: Mapping[Identity, str],
                  flag: str = "--output") -> None:
    """Refuse an output that is one of the inputs (``identity -> name as given``)."""
    for path in outputs:
        if path == STDOUT or _streamed(path):
            continue
        found = identity(path)
        if found is not None and found in inputs:
            same = inputs[found]
            also = "" if os.path.abspath(same) == os.path.abspath(path) else f" ({same})"
            raise InputError(f"{flag} is one of the inputs{also}: writing there would destroy "
                             "it; choose another path", path)


def write_files(files: Mapping[str, Text], what: str = "output") -> None:
    """Write every ``path -> text``: devices and FIFOs directly, files atomically (all
    renames happen after all writes)."""
    staged: list[tuple[str, str]] = []  # (temp file, path as given)
    current = ""
    try:
        for path, text in files.items():
            current = path
            if not _streamed(path):
                staged.append((_stage(path, text), path))
        for path, text in files.items():
            current = path
            if _streamed(path):
                with open(path, "w", encoding="utf-8", newline="\n") as handle:
                    _write(handle, text)
        for temp, path in staged:
            current = path
            os.replace(temp, os.path.realpath(path))
    except BaseException as exc:
        for temp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {what}: {exc.strerror or exc}", current) from exc
        raise


def sync_generated(folder: str, files: dict[str, str], suffix: str) -> list[str]:
    """Make ``folder`` hold exactly ``files`` (name -> text) among its files ending in
    ``suffix``: those that differ are written (atomically, together), those no longer made are
    removed. What changed, as lines to print (``wrote PATH``, ``removed PATH``)."""
    os.makedirs(folder, exist_ok=True)
    changed: dict[str, str] = {}
    for name, text in files.items():
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as handle:
                same = handle.read() == text
        except OSError:
            same = False
        if not same:
            changed[path] = text
    write_files(changed, "a generated file")
    said = []
    for name in sorted(set(os.listdir(folder)) - set(files)):
        if name.endswith(suffix):
            os.remove(os.path.join(folder, name))
            said.append(f"removed {os.path.join(folder, name)}")
    return said + [f"wrote {path}" for path in changed]


def _write(handle: IO[str], text: Text) -> None:
    if isinstance(text, str):
        handle.write(text)
    else:
        handle.writelines(text)


def _stage(path: str, text: Text) -> str:
    """``text`` in a temp file beside the (real) target, on disk; returns the temp name."""
    import tempfile  # only when a file is written (not for a run that prints to stdout)

    target = os.path.realpath(path)
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp",
                                dir=os.path.dirname(target) or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            os.fchmod(handle.fileno(), _mode_for(target))  # mkstemp's 0600 is not ours
            _write(handle, text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


def _mode_for(path: str) -> int:
    """Keep an existing file's permissions; a new file gets the umask's default."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# -- stderr ------------------------------------------------------------------------------------

def say(message: str) -> None:
    """One line on stderr (an error, a warning, a summary), through the one escaper: what it
    quotes from input (a file name, a value, a line feed in either) never acts on the
    terminal, and the message stays one line. A stderr that cannot be written (full, a pipe
    nobody reads, closed) loses the message and no more: the run's exit code stands."""
    try:
        click.echo(shown(message), err=True)
    except (OSError, ValueError):
        to_null(2)


def to_null(fd: int) -> None:
    """Point descriptor ``fd`` (1 or 2) at the null device: what a stream of it still holds
    or is still given goes nowhere, and the interpreter's last flush cannot fail at exit."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


# -- stdout ------------------------------------------------------------------------------------

def echo(text: Text, nl: bool = True, color: bool | None = None) -> None:
    """``click.echo`` to stdout, flushed (nothing to write needs no stdout); ``color=True``
    keeps ANSI colours even in a pipe. ``text`` may come in pieces (each whole lines: a
    report as it is made), written as they come."""
    if not text and not nl:
        return
    with _writing():
        pieces = _pieces(text) if isinstance(text, str) else _gathered(text)
        for piece in pieces:  # a long report is not encoded all at once
            click.echo(piece, nl=False, color=color)
        click.echo("", nl=nl, color=color)
        sys.stdout.flush()


ECHO_PIECE = 1 << 16  # characters of text encoded and written at a time


def _gathered(chunks: Iterator[str]) -> Iterator[str]:
    """Whole-line ``chunks`` gathered into pieces of about ``ECHO_PIECE`` characters."""
    gathered: list[str] = []
    size = 0
    for chunk in chunks:
        gathered.append(chunk)
        size += len(chunk)
        if size >= ECHO_PIECE:
            yield "".join(gathered)
            gathered, size = [], 0
    if gathered:
        yield "".join(gathered)


def _pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about ``ECHO_PIECE`` characters, cut after a newline (a colour
    escape, which click strips off a pipe, never spans two pieces)."""
    start = 0
    while len(text) - start > ECHO_PIECE:
        cut = text.rfind("\n", start, start + ECHO_PIECE) + 1
        if cut <= start:  # one line longer than a piece: its end
            cut = text.find("\n", start + ECHO_PIECE) + 1 or len(text)
        yield text[start:cut]
        start = cut
    yield text[start:] if start else text


def write_bytes(data: bytes) -> None:
    """Bytes to stdout, flushed."""
    if not data:
        return
    with _writing():
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


class ClosedStdout:
    """What stands for stdout when the process started with descriptor 1 closed (Python then
    sets ``sys.stdout`` to None, and click's own output, --help and --version, would vanish
    without a word): every write fails as a write to a closed descriptor does."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, binary: bool = False) -> None:
        if not binary:
            self.buffer = ClosedStdout(binary=True)

    def write(self, data: object) -> int:
        raise OSError(9, "stdout is closed")  # EBADF

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(9, "stdout is closed")

    def flush(self) -> None:
        pass  # nothing was ever buffered

    def writable(self) -> bool:
        return True


@contextlib.contextmanager
def _writing() -> Iterator[None]:
    if sys.stdout is None:  # started with descriptor 1 closed
        raise PmanifestError("cannot write output: stdout is closed")
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise unwritable(exc) from None


def unwritable(exc: OSError) -> PmanifestError:
    """The error for a failed write to stdout. What stayed in the buffer is dropped (stdout now
    goes to the null device), so the interpreter's last flush cannot fail again at exit."""
    to_null(1)
    return PmanifestError(f"cannot write output: {exc.strerror or exc}")
