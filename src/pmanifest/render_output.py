"""Where ``pmanifest render`` output goes: stdout, a file (atomically), or a drift check."""

from __future__ import annotations

import difflib

from pmanifest.atomic import (
    STDOUT,
    check_writable,
    identity,
    refuse_inputs,
    write_bytes,
    write_files,
)
from pmanifest.errors import InputError

FORMATS = ("yaml", "json")


def destination(
    output: str | None, output_format: str | None, check: str | None, spec: str = STDOUT
) -> tuple[str, str]:
    """(target path or "-", format) from ``-o`` and ``--format``; refuses unwritable paths
    before anything is rendered. ``-o yaml``/``-o json`` keep kubectl's meaning."""
    if output is None:
        return STDOUT, output_format or "yaml"
    if output in FORMATS:
        if output_format is not None and output_format != output:
            raise InputError(f"-o {output} contradicts --format {output_format}")
        return STDOUT, output
    if output == STDOUT:
        return STDOUT, output_format or "yaml"
    if check is not None:
        raise InputError("--check compares with a file; it cannot be combined with -o FILE")
    check_writable(output, "-o")
    if spec != STDOUT:
        found = identity(spec)
        if found is not None:
            refuse_inputs([output], {found: spec}, "-o")
    return output, output_format or ("json" if output.endswith(".json") else "yaml")


def write_output(rendered: str, target: str) -> None:
    if target == STDOUT:
        write_bytes(rendered.encode("utf-8"))
    else:
        write_files({target: rendered}, "rendered manifests")


def check_drift(rendered: str, committed_path: str) -> str:
    """A unified diff from the committed file to today's render ("" when identical)."""
    from pmanifest.sources import Unreadable, read_limited

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
    lines = difflib.unified_diff(
        committed.splitlines(keepends=True), rendered.splitlines(keepends=True),
        fromfile=f"{committed_path} (committed)", tofile=f"{committed_path} (rendered now)",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
