"""Writing results to stdout, where the environment can say no: a full disk or device
(``> /dev/full``), a closed descriptor (``>&-``). That is the environment, not a bug: a
PmanifestError ("cannot write output: ...", exit 2). A reader that went away (``| head``)
stays a BrokenPipeError, which the CLI ends quietly."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import click

from pmanifest.errors import PmanifestError


def echo(text: str, nl: bool = True) -> None:
    """``click.echo`` to stdout, flushed (nothing to write needs no stdout)."""
    if not text and not nl:
        return
    with _writing():
        click.echo(text, nl=nl)
        sys.stdout.flush()


def write_bytes(data: bytes) -> None:
    """Bytes to stdout, flushed."""
    if not data:
        return
    with _writing():
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


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
    with contextlib.suppress(AttributeError, OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    return PmanifestError(f"cannot write output: {exc.strerror or exc}")
