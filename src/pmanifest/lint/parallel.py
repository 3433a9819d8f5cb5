"""Lint many files in parallel processes, with output identical to a sequential run.

Inputs are cut into batches in their fixed order; each worker reads and lints its batch and
``imap`` returns the batches in order, so findings come out in exactly the order (and bytes) of
``--jobs 1``. Small inputs are linted in-process: starting workers costs more than it saves.
Workers are at most one per ``MIN_FILES_PER_WORKER`` inputs and ``JOBS_PER_CPU`` per CPU,
whatever ``--jobs`` asks. Workers ignore SIGINT: on Ctrl-C the parent alone stops, ends them
and exits (130), without a traceback from each.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from pmanifest.io.reading import Identity
from pmanifest.lint.engine import FileResult, LintOptions, lint_file
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
    labels = item.selector_labels if isinstance(item, FileRef) else None
    result = lint_file(source.raw, source.name, options, patch_of, labels)
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
    with _pool(workers) as pool:
        for results in pool.imap(functools.partial(_lint_batch, options=options), batches):
            yield from results


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[Any]:
    """A pool of forked workers (they inherit the loaded rules, policies and compiled schemas)
    that ignore SIGINT from their first instruction: the disposition is set before the fork."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are not ours to arrange
        previous = None
    try:
        pool = context.Pool(workers)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    try:
        yield pool
        pool.close()
    finally:
        pool.terminate()  # after close: ends idle workers; on Ctrl-C or an error: ends them all
        pool.join()
