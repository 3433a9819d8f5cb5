"""The one error boundary of the command line: user and environment mistakes become one line
and exit 2, signals end the run quietly with the code a shell reports for them, bugs exit 3
with a request to report them.

Exit codes: 0 clean, 1 findings at or above --fail-on (lint) or drift (render --check),
2 usage/config/spec/input error (one line on stderr, nothing on stdout), 3 internal error;
and, as shells report a program a signal ended (grep and git die of SIGPIPE): 130 interrupted
(Ctrl-C), 141 stdout's reader went away (``| head``), 143 terminated (SIGTERM). A stderr that
cannot be written (closed, full, a closed pipe) loses the messages, never changes the code.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

import click

from pmanifest import __version__
from pmanifest.errors import PmanifestError, Terminated
from pmanifest.io.writing import ClosedStdout, echo, say, to_null, unwritable

EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for grep or git in `| head`
EXIT_TERMINATED = 143  # 128 + SIGTERM


def settled() -> None:
    """What the run has loaded so far (modules, their tables, compiled schemas) lives as long
    as the process: move it out of the cyclic garbage collector's reach (``gc.freeze``), so
    that a later collection, the one at exit too, scans only what the run makes since. Called
    as a run starts and once a command has imported what it works with; rescanning them was
    about 4% of the instructions of a short run."""
    gc.freeze()
    gc.set_threshold(10000, 10, 10)


def _reader_gone() -> NoReturn:
    """stdout's reader went away: nothing more to say, and nothing left to flush at exit."""
    to_null(1)
    raise click.exceptions.Exit(EXIT_BROKEN_PIPE)


def _show_help(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """click's --help, written as every command writes stdout: a full or closed stdout is
    "cannot write output" (exit 2), not a traceback or nothing at all."""
    if value and not ctx.resilient_parsing:
        try:
            echo(ctx.get_help(), color=ctx.color)
        except BrokenPipeError:
            _reader_gone()
        ctx.exit()


def show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--version, written as every command writes stdout (click's own would exit 1 when the
    reader of a pipe has gone, and say nothing when stdout is full)."""
    if value and not ctx.resilient_parsing:
        try:
            echo(f"pmanifest, version {__version__}")
        except BrokenPipeError:
            _reader_gone()
        ctx.exit()


def option_or_file(argv: list[str]) -> str | None:
    """The first argument before ``--`` that reads as an option but names an existing file
    (``--config=lax.yaml``, staged in a repository and handed over by a tool that appends
    file names without ``--``): which it is meant as is not ours to guess."""
    for arg in argv:
        if arg == "--":
            return None
        if arg.startswith("-") and arg != "-" and os.path.lexists(arg):
            return arg
    return None


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM raises Terminated for the run (from the main thread): what it was writing is
    cleaned up as for any error (the one writer removes its temp files), then it exits 143
    quietly. The disposition before is restored (one process may run several)."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread: signals are not ours to arrange
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Command(click.Command):
    """A subcommand whose --help is written like any other output."""

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.callback = _show_help
        return option


class Group(click.Group):
    """A group of subcommands (``pmanifest cluster``), --help written like any output."""

    command_class = Command

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.callback = _show_help
        return option


Group.group_class = Group


class Boundary(click.Group):
    """The one error boundary: user mistakes become one line and exit 2, bugs exit 3."""

    command_class = Command
    group_class = Group

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.callback = _show_help
        return option

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if sys.stdout is None:  # started with descriptor 1 closed (>&-)
            sys.stdout = ClosedStdout()
        if sys.stderr is None:  # started with descriptor 2 closed (2>&-): messages are lost,
            to_null(2)  # and no file the run opens may take descriptor 2
        given = kwargs.get("args", args[0] if args else None)
        ambiguous = option_or_file(sys.argv[1:] if given is None else list(given))
        if ambiguous is not None:
            say(f"pmanifest: {ambiguous!r} is an option and the name of a file here: put -- "
                "before the file names (a pre-commit hook's args: end with --)")
            sys.exit(EXIT_USAGE)
        # Every integer read is at most MAX_INTEGER_DIGITS long (io.limits, checked before it
        # is converted); what the checks compute from them (a sum, a product of a count and
        # a size) may be a little longer, and must print: Python's own limit on converting
        # integers to text guards programs that convert unbounded input, which none here does.
        sys.set_int_max_str_digits(0)
        settled()
        try:
            with _terminable():
                return super().main(*args, **kwargs)
        except Terminated:  # while click parsed (invoke ends a run's own)
            sys.exit(EXIT_TERMINATED)
        except OSError as exc:  # click's own output (usage errors) could not be written
            if exc.errno == errno.EPIPE:
                to_null(1)
                sys.exit(EXIT_BROKEN_PIPE)
            say(f"pmanifest: {unwritable(exc)}")
            sys.exit(EXIT_USAGE)
        except PmanifestError as exc:  # --help or --version could not be written
            say(f"pmanifest: {exc}")
            sys.exit(EXIT_USAGE)

    def invoke(self, ctx: click.Context) -> Any:
        from pmanifest.io.reading import forget_reads

        forget_reads()  # a run starts with nothing read (one process may run several)
        try:
            return super().invoke(ctx)
        except PmanifestError as exc:
            say(str(exc) if exc.file else f"pmanifest: {exc}")
            ctx.exit(EXIT_USAGE)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:  # the reader went away (| head); nothing more to say
            _reader_gone()
        except KeyboardInterrupt:  # Ctrl-C: the user knows; no traceback, no "Aborted!"
            ctx.exit(EXIT_INTERRUPTED)
        except Terminated:  # SIGTERM (lint --jobs waits for workers with a handler for it)
            ctx.exit(EXIT_TERMINATED)
        except Exception as exc:
            say(f"pmanifest: internal error: {type(exc).__name__}: {exc} "
                "(this is a bug in pmanifest; please report it with the input that caused it)")
            ctx.exit(EXIT_INTERNAL)
