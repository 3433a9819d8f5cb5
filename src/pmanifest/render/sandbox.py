"""Templates are code (``--templates`` brings the user's own): they run in Jinja's immutable
sandbox, within budgets, and their failures are the template author's errors.

- Time: each object a render makes has ``RENDER_SECONDS`` for its template, compiling it and
  what it includes included (so a render's budget grows with its spec, never one template's);
  a timer (SIGALRM, in the main thread of a POSIX process) interrupts a template that runs
  past it.
- Output: one template renders at most ``MAX_OUTPUT`` characters (the API server stores less
  than that in one object).
- Memory: while templates compile and run, the process may grow by at most
  ``MEMORY_HEADROOM`` (RLIMIT_AS, on Linux); past it a template fails with MemoryError instead
  of exhausting the machine.
- Single operations the timer cannot interrupt (one multiplication or power of huge numbers,
  repeating a string a billion times) are refused before they run.
- Nothing of a template runs while it is compiled, outside these budgets: Jinja's optimizer
  (constant folding) is off, and ``finalize`` takes the evaluation context, which keeps the
  compiler from evaluating constant output (``{{ ('x'|center(2999999999))|length }}`` would
  otherwise build 3 GB before any budget applies). A huge width (``center``, ``format``,
  ``%``, ``ljust``) then meets the memory budget when the template runs.
- The immutable sandbox has no in-place growth (``list.append``, ``dict.update``).

A failure inside a template becomes a TemplateError naming the innermost user template and its
line (exit 2); one that only built-in templates are involved in is a bug and is re-raised.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

from pmanifest.errors import TemplateError
from pmanifest.io.limits import MAX_TEMPLATE_INT_BITS as MAX_INT_BITS
from pmanifest.io.limits import MAX_TEMPLATE_OUTPUT as MAX_OUTPUT
from pmanifest.io.limits import TEMPLATE_MEMORY_HEADROOM as MEMORY_HEADROOM
from pmanifest.io.limits import TEMPLATE_SECONDS as RENDER_SECONDS

_FIX = "; fix the template"


class OutOfBudget(Exception):
    """A template went past a budget (an Exception, so Jinja adds the template's line)."""


class _Expired(OutOfBudget):
    def __init__(self) -> None:
        super().__init__(f"template ran longer than {RENDER_SECONDS:g} s (the time budget of "
                         "one object)")


def sandbox_class() -> type:
    """Jinja's immutable sandbox, with the operations that could run unbounded refused."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Sandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "+"})

        def __init__(self, **options: Any) -> None:
            from jinja2 import pass_eval_context

            finalize = options.pop("finalize", None)
            if finalize is not None:
                options["finalize"] = pass_eval_context(
                    lambda eval_ctx, value: finalize(value))
            super().__init__(optimized=False, **options)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

    return Sandbox


def _bits(value: int) -> int:
    return abs(value).bit_length()


def _check_binop(operator: str, left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int):
        _check_numbers(operator, left, right)
    else:
        _check_sequences(operator, left, right)


def _check_numbers(operator: str, left: int, right: int) -> None:
    if operator == "**" and right > 0 and right * max(_bits(left) - 1, 0) > MAX_INT_BITS:
        raise OutOfBudget(f"a power that large is refused (more than {MAX_INT_BITS} bits)")
    if operator == "*" and _bits(left) + _bits(right) > MAX_INT_BITS:
        raise OutOfBudget(f"a product that large is refused (more than {MAX_INT_BITS} bits)")


def _check_sequences(operator: str, left: Any, right: Any) -> None:
    sized = [v for v in (left, right) if isinstance(v, str | list | tuple)]
    if operator == "*" and len(sized) == 1:
        count = right if sized[0] is left else left
        if isinstance(count, int) and len(sized[0]) * count > MAX_OUTPUT:
            raise OutOfBudget("repeating a sequence past the output budget is refused")
    if operator == "+" and len(sized) == 2 and len(left) + len(right) > MAX_OUTPUT:
        raise OutOfBudget("joining sequences past the output budget is refused")


def render_bounded(load: Callable[[], Any], context: dict[str, Any], deadline: float) -> str:
    """The text of the template ``load()`` compiles (or takes from the cache), compiled and
    rendered within the time left before ``deadline`` (monotonic), the output budget and the
    memory headroom: a template of a million expressions takes long to compile, too."""
    parts: list[str] = []
    size = 0
    with _memory_limit(), _timer(deadline - time.monotonic()):
        for chunk in load().generate(**context):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise OutOfBudget(f"template output is larger than {MAX_OUTPUT >> 20} MiB "
                                  "(more than Kubernetes stores in one object)")
            parts.append(chunk)
    return "".join(parts)


@contextlib.contextmanager
def _timer(seconds: float) -> Iterator[None]:
    if seconds <= 0:
        raise _Expired()
    in_main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not in_main:
        yield  # pragma: no cover - Windows, or rendering from a thread: output budget only
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Expired()

    previous = signal.signal(signal.SIGALRM, expire)
    # repeats until cancelled, in case one interruption is swallowed somewhere
    started = time.monotonic()
    other_delay, other_interval = signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if other_delay > 0:  # someone else's timer (a test runner's): give it back
            left = max(other_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, other_interval)


@contextlib.contextmanager
def _memory_limit() -> Iterator[None]:
    """RLIMIT_AS at the current size plus MEMORY_HEADROOM (Linux: the size is in /proc)."""
    try:
        import resource

        with open("/proc/self/statm") as handle:
            size = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):  # pragma: no cover - not Linux
        yield
        return
    limit = size + MEMORY_HEADROOM
    if soft != resource.RLIM_INFINITY and soft <= limit:
        yield  # already tighter
        return
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _template_frames(tb: TracebackType | None) -> Iterator[tuple[str, int]]:
    """(file, line) of each template frame of a traceback, outermost first (Jinja rewrites
    them to carry the template's own name and line)."""
    while tb is not None:
        frame = tb.tb_frame
        if "__jinja_exception__" in frame.f_globals:
            yield frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next


def template_failure(exc: BaseException, filename: str,
                     is_user: Callable[[str], bool]) -> TemplateError | None:
    """The template author's error for an exception from rendering ``filename``: at the
    innermost user template frame (or ``filename`` itself, when it is a user template and no
    frame says more). None when no user template is involved: that is a bug."""
    every = list(_template_frames(exc.__traceback__))
    frames = [f for f in every if is_user(f[0])]
    line: int | None = None
    if frames:
        filename, line = frames[-1]
    elif not is_user(filename):
        return None
    return TemplateError(_describe(exc, len(every)) + _FIX, filename, line)


_CALLS_DEEP = 20  # template frames on the stack: past this, templates or macros call themselves


def _describe(exc: BaseException, frames: int = 0) -> str:
    from jinja2 import TemplateError as JinjaError

    if isinstance(exc, OutOfBudget):
        return str(exc)
    if isinstance(exc, RecursionError) and frames > _CALLS_DEEP:
        return ("template failed: it includes itself (or templates include each other, or a "
                "macro calls itself) without end")
    if isinstance(exc, RecursionError):  # deep data, in a filter or the output's YAML
        return ("template failed: it builds data nested too deep to handle (a list or map "
                "inside itself thousands of levels deep)")
    if isinstance(exc, MemoryError):
        return (f"template used more than {MEMORY_HEADROOM >> 20} MiB of memory (the memory "
                "budget of a render)")
    message = str(exc).rstrip(".")
    if isinstance(exc, JinjaError):
        return f"template failed: {message}"
    return f"template failed: {type(exc).__name__}: {message}"
