"""Lint many files in parallel processes, with output identical to a sequential run.

Inputs are cut into batches in their fixed order; each worker reads and lints its batch and
the results are taken in that order, so findings come out in exactly the order (and bytes)
of ``--jobs 1``. Small inputs are linted in-process: starting workers costs more than it saves.
Workers are at most one per ``MIN_FILES_PER_WORKER`` inputs and ``JOBS_PER_CPU`` per CPU,
whatever ``--jobs`` asks.

The parent always ends, and always ends its workers, without a traceback from any of them:

- Ctrl-C: workers ignore SIGINT; the parent alone stops, ends them and exits 130.
- SIGTERM to the parent (or to the whole group): workers die of it quietly (its default
  action); the parent raises ``Terminated``, ends them and exits 143.
- A worker that dies (the out-of-memory killer's SIGKILL, a crash): ``concurrent.futures``
  sees its process end at once (a ``multiprocessing.Pool`` would wait for its result for
  ever); the parent ends the others and exits 2 with one line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any, NamedTuple

from pmanifest.errors import PmanifestError, Terminated
from pmanifest.io.reading import Identity
from pmanifest.lint.collected import FileResult
from pmanifest.lint.engine import LintOptions, lint_file
from pmanifest.lint.sources import FileRef, Problem, Source

MIN_FILES_PER_WORKER = 32
BATCH = 16
MAX_JOBS = 8  # the default's bound
JOBS_PER_CPU = 2  # the bound of --jobs: more processes than this only compete


class Linted(NamedTuple):
    """A linted input, as a worker process returns it."""

    name: str
    result: FileResult
    identity: Identity | None = None  # of the file read

def _cpus() -> int:
    """The number of CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs() -> int:
    """The number of CPUs this process may use, bounded."""
    return max(1, min(_cpus(), MAX_JOBS))


def worker_count(jobs: int, inputs: int) -> int:
    """Processes to start for ``inputs`` inputs when ``jobs`` are asked for (<= 1: none)."""
    return min(jobs, inputs // MIN_FILES_PER_WORKER, JOBS_PER_CPU * _cpus())


def _lint_one(item: FileRef | Source | Problem, options: LintOptions) -> Linted | Problem:
    source = item.read() if isinstance(item, FileRef) else item
    if isinstance(source, Problem):
        return source
    patch_of = item.patch_of if isinstance(item, FileRef) else None
    built = item.built if isinstance(item, FileRef) else None
    assertion = isinstance(item, FileRef) and item.assertion is not None
    result = lint_file(source.raw, source.name, options, patch_of, built, assertion)
    return Linted(source.name, result, source.identity)


def _lint_batch(batch: list[FileRef | Source | Problem],
                options: LintOptions) -> list[Linted | Problem]:  # in a worker
    return [_lint_one(item, options) for item in batch]


def lint_inputs(items: Iterable[FileRef | Source | Problem], options: LintOptions,
                jobs: int) -> Iterator[Linted | Problem]:
    if jobs <= 1:
        for item in items:
            yield _lint_one(item, options)
        return
    pending = list(items)
    workers = worker_count(jobs, len(pending))
    if workers <= 1:
        for item in pending:
            yield _lint_one(item, options)
        return
    batches = [pending[i:i + BATCH] for i in range(0, len(pending), BATCH)]
    with _pool(workers) as submit:
        for results in submit(functools.partial(_lint_batch, options=options), batches):
            yield from results


WORKER_DIED = ("a lint worker process ended abruptly (killed: the out-of-memory killer sends "
               "SIGKILL); nothing was reported; run again with fewer --jobs")


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[Any]:
    """Forked workers (they inherit the loaded rules, policies and compiled schemas), all
    started at the first submit, with SIGINT ignored and SIGTERM at its default from their
    first instruction (the dispositions are set around the fork); then SIGTERM raises
    ``Terminated`` in the parent. Yields ``submit(function, items)``: the results in order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    previous: dict[int, Any] = {}

    def submit(function: Any, items: list[Any]) -> Iterator[Any]:
        # the first submit forks every worker (fork context): only that is done with the
        # workers' dispositions, so a Ctrl-C while the rest is submitted reaches the parent
        with _dispositions({signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: signal.SIG_DFL},
                           previous):
            futures = [executor.submit(function, item) for item in items[:1]]  # forks here
        futures += [executor.submit(function, item) for item in items[1:]]
        with contextlib.suppress(ValueError):  # (not the main thread: not ours to arrange)
            previous.setdefault(signal.SIGTERM, signal.signal(signal.SIGTERM, _terminated))
        try:
            for future in futures:
                yield future.result()
        except BrokenProcessPool:
            raise PmanifestError(WORKER_DIED) from None

    try:
        yield submit
    except BaseException:  # an error, a signal, a dead worker, the consumer gone: end them all
        for child in multiprocessing.active_children():
            child.terminate()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)  # (a finished run: they just exit)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _dispositions(wanted: dict[int, Any], previous: dict[int, Any]) -> Iterator[None]:
    """Signal dispositions set for a while (what they were kept in ``previous`` too)."""
    before: dict[int, Any] = {}
    try:
        for signum, handler in wanted.items():
            before[signum] = signal.signal(signum, handler)
            previous.setdefault(signum, before[signum])
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
