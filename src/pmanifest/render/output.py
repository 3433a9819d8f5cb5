"""Where ``pmanifest render`` output goes: stdout, a file (atomically), or a drift check."""

from __future__ import annotations

import click

from pmanifest.errors import InputError
from pmanifest.io.reading import Identity
from pmanifest.io.writing import (
    STDOUT,
    Target,
    input_identities,
    plan_outputs,
    write_targets,
)

FORMATS = ("yaml", "json")


def output_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-o yaml|json`` exactly, as kubectl's: ``JSON``, ``yml`` or a file name is a usage
    error (exit 2) that says where a file goes, never a file named ``JSON``."""
    if value is not None and value not in FORMATS:
        raise click.BadParameter(f"{value!r} is not an output format: use yaml or json (a "
                                 "file goes to -O/--output-file FILE)", ctx, param)
    return value


def complete_format(ctx: click.Context, param: click.Parameter, text: str) -> list[str]:
    return [f for f in FORMATS if f.startswith(text)]


def destination(
    output_file: str | None, output_format: str | None, check: str | None,
    inputs: tuple[str, ...] = (), templates_dir: str | None = None,
) -> tuple[str, str]:
    """(target path or "-", format) from ``-O FILE`` and ``-o yaml|json``; refuses unwritable
    paths, and one that is a file the render reads (``inputs``: the spec, --cluster; a file
    of ``templates_dir``), before anything is rendered."""
    if output_file is None or output_file == STDOUT:
        return STDOUT, output_format or "yaml"
    if check is not None:
        raise InputError("--check compares with a file; it cannot be combined with -O FILE")
    read = input_identities(inputs)
    if templates_dir is not None:
        for key, name in _template_files(templates_dir).items():
            read.setdefault(key, name)
    plan_outputs([Target("-O", output_file)], read)
    return output_file, output_format or ("json" if output_file.endswith(".json") else "yaml")


def _template_files(directory: str) -> dict[Identity, str]:
    """The files of a --templates directory (templates are read by plain file name)."""
    import os

    try:
        with os.scandir(directory) as entries:
            names = [os.path.join(directory, e.name) for e in entries]
    except OSError:  # not a directory: the render says so
        return {}
    return input_identities(names)


def write_output(rendered: str, target: str) -> None:
    write_targets({Target("-O", target): rendered}, {}, "rendered manifests")


def check_drift(rendered: str, committed_path: str) -> str:
    """A unified diff from the committed file to today's render ("" when identical)."""
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        raw, _ = read_limited(committed_path)
    except Unreadable as exc:
        raise InputError(f"cannot read the rendered file: {exc.reason}", committed_path) from None
    except OSError as exc:  # a directory
        raise InputError(f"cannot read the rendered file: {exc.strerror or exc}",
                         committed_path) from None
    committed = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if committed == rendered:
        return ""
    from pmanifest.io.terminal import file_lines

    return drift_diff(file_lines(committed), file_lines(rendered),
                      f"{committed_path} (committed)", f"{committed_path} (rendered now)")


def drift_diff(old: list[str], new: list[str], fromfile: str, tofile: str) -> str:
    """A unified diff from ``old`` to ``new``. The lines both share at the start and the end
    are set aside first (in linear time); when what differs is longer than
    ``MAX_DIFF_LINES`` on either side, it is one hunk that replaces all of it (a valid patch,
    not the shortest: difflib's matching takes minutes on a reordered file of 60,000
    lines), else difflib finds the smallest changes."""
    from pmanifest.io.limits import MAX_DIFF_LINES

    head = 0
    most = min(len(old), len(new))
    while head < most and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < most - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if max(len(old), len(new)) - head - tail <= MAX_DIFF_LINES:
        import difflib  # only for render --check with a drifted file

        lines = list(difflib.unified_diff(old, new, fromfile=fromfile, tofile=tofile))
    else:
        lines = _one_hunk(old, new, head, tail, fromfile, tofile)
    from pmanifest.io.terminal import shown_diff

    return shown_diff(lines)


def _one_hunk(old: list[str], new: list[str], head: int, tail: int, fromfile: str,
              tofile: str, context: int = 3) -> list[str]:
    """The unified diff of one hunk replacing ``old[head:-tail]`` by ``new[head:-tail]``."""
    start = max(head - context, 0)
    old_end, new_end = len(old) - tail, len(new) - tail
    after = min(tail, context)

    def span(count: int) -> str:
        return f"{start + 1 if count else start},{count}"

    old_count, new_count = old_end + after - start, new_end + after - start
    return [f"--- {fromfile}\n", f"+++ {tofile}\n",
            f"@@ -{span(old_count)} +{span(new_count)} @@\n",
            *(" " + line for line in old[start:head]),
            *("-" + line for line in old[head:old_end]),
            *("+" + line for line in new[head:new_end]),
            *(" " + line for line in old[old_end:old_end + after])]
