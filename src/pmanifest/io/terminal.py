"""The one escaper: every piece of text bound for a terminal or a log that may hold input (a
file name, a node name, a value quoted in a message) goes through ``shown``, in every command
and every reporter.

Input can hold what a terminal acts on: escape sequences (ESC, and the 8-bit CSI of C1),
carriage returns and line feeds that forge or hide lines, other C0 and C1 controls, DEL, the
Unicode line and paragraph separators, and the bidirectional controls that reorder what is
shown ("Trojan source"). ``shown`` writes each as a visible escape, as Python writes it in a
string (``\\x1b``, ``\\r``, ``\\n``, ``\\u2028``), and leaves all other text alone; text
without any costs one scan. ``shown_lines`` does the same but keeps line feeds, for
multi-line text (``explain``'s examples). JSON output escapes them as JSON does
(``json_text``): the same data, nothing raw.
"""

from __future__ import annotations

import functools
import re

# C0 controls, DEL and C1 controls, the line and paragraph separators, and the bidirectional
# formatting characters (marks, embeddings, overrides, isolates). Every one of them is what
# ``str.isprintable`` calls unprintable (Unicode's Cc, Cf, Zl, Zp), so printable text skips the
# pattern, which is compiled only on first use: a pattern with characters above U+00FF costs
# about 2.5 M instructions to compile, paid by every run that loaded it.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_UNSAFE_KEEP_LF = \
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"


@functools.cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every character a terminal could act on written as a visible escape
    (line feeds too: the result is one line)."""
    if text.isprintable():
        return text
    unsafe = _pattern(_UNSAFE)
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_escape, text)


def shown_lines(text: str) -> str:
    """``shown``, keeping line feeds (for multi-line text)."""
    if all(line.isprintable() for line in text.split("\n")):
        return text
    unsafe = _pattern(_UNSAFE_KEEP_LF)
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_escape, text)


def file_lines(text: str) -> list[str]:
    """The lines of a file's text as diff and patch see them, each with its line feed: split
    at line feeds only (``str.splitlines`` also splits at CR, VT, FF, U+2028 and more, which
    made one line of a file two in a diff)."""
    lines = text.split("\n")
    ended = [line + "\n" for line in lines[:-1]]
    return [*ended, lines[-1]] if lines[-1] else ended


def shown_diff(lines: list[str]) -> str:
    """The lines of a unified diff (``render --check``, ``lint --diff``) as text for a
    terminal: through ``shown_lines`` (the files compared are input: an escape sequence or a
    carriage return in them is shown, not acted on), a last line without a newline marked as
    diff marks it."""
    return shown_lines("".join(line if line.endswith("\n")
                               else line + "\n\\ No newline at end of file\n"
                               for line in lines))


# what json.dumps(ensure_ascii=False) leaves raw in a string and a terminal could act on (in
# ASCII text: DEL alone)
_JSON_RAW = "[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"


def json_text(text: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` with DEL, the C1 controls, the
    line separators and the bidirectional controls written as ``\\uXXXX`` escapes: the same
    JSON value (they can only stand inside its strings), nothing raw on a terminal."""
    if text.isascii() and "\x7f" not in text:
        return text
    raw = _pattern(_JSON_RAW)
    if raw.search(text) is None:
        return text
    return raw.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
