"""From a position inside a script to the file position through the YAML scalar that holds
the script."""

from __future__ import annotations

from collections.abc import Sequence

from pmanifest.kube.document import Document
from pmanifest.kube.workloads import get
from pmanifest.loader.positions import Path, Pos, ScalarInfo
from pmanifest.shell.facts import Loc


def script_pos(doc: Document, path: Path, loc: Loc) -> Pos:
    """The 1-based file position of ``loc`` inside the string at ``path``: exact for literal
    block scalars and one-line plain or quoted scalars, else the scalar's start."""
    info = doc.positions.scalars.get(path)
    start = doc.positions.value_at(path)
    value = get(doc.data, path)
    if info is None or not isinstance(value, str):
        return start
    lines = doc.source_lines
    script_lines = value.split("\n")
    if loc.row >= len(script_lines):
        return info.pos
    if info.style == "|":
        file_row = info.pos.line + loc.row  # 0-based index of the content line
        indent = _block_indent(lines, info.pos.line)
        if indent is None or file_row >= len(lines):
            return info.pos
        text = lines[file_row]
        if text[indent:].rstrip("\r") != script_lines[loc.row].rstrip("\r"):
            return info.pos
        return Pos(file_row + 1, indent + loc.column + 1)
    if info.style in (None, "'", '"') and "\n" not in value:
        columns = _flow_columns(lines, info, value)
        if columns is not None and loc.column < len(columns):
            return Pos(info.pos.line, columns[loc.column])
    return info.pos


def _block_indent(lines: Sequence[str], indicator_line: int) -> int | None:
    for text in lines[indicator_line:]:
        if text.strip():
            return len(text) - len(text.lstrip(" "))
    return None


def _flow_columns(lines: Sequence[str], info: ScalarInfo, value: str) -> list[int] | None:
    """1-based file column of each character of a one-line flow scalar, when the source
    decodes exactly to ``value``."""
    if not 1 <= info.pos.line <= len(lines):
        return None
    text = lines[info.pos.line - 1]
    col = info.pos.column - 1
    if info.style is None:
        return list(range(col + 1, col + 1 + len(value))) if text[col:].startswith(value) else None
    quote = info.style
    i = col + 1
    out: list[int] = []
    decoded = ""
    while i < len(text) and len(decoded) < len(value):
        ch = text[i]
        if quote == "'" and text.startswith("''", i):
            decoded, i = decoded + "'", i + 2
            out.append(i - 1)
            continue
        if quote == '"' and ch == "\\" and i + 1 < len(text):
            simple = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", " ": " "}
            if text[i + 1] not in simple:
                return None
            decoded, i = decoded + simple[text[i + 1]], i + 2
            out.append(i - 1)
            continue
        if ch == quote:
            break
        decoded += ch
        i += 1
        out.append(i)
    return out if decoded == value else None

