"""Unrendered placeholders: a scalar that is wholly ``${NAME}`` or ``$NAME`` (envsubst and
other shell-style templating) or ``{{ ... }}`` (a quoted Helm or Go template action) is a value
not written yet, substituted before the file is applied. Where the schema wants a number or a
boolean it is no type error (the rendered value decides); a file that holds a shell-style one
is linted as it is and the run says so. A real string (``"8080"``, ``eighty``) is still an
error, and so is ``$(NAME)``: that is Kubernetes' own dependent variable expansion, done in env
values, commands and args only, never in a typed field.
"""

from __future__ import annotations

import re
from typing import Any

from pmanifest.loader.documents import Broken, Loaded

_NAME = r"[A-Za-z_]\w*"
# ${NAME}, with a shell default or check (:-, -, :=, =, :?, ?, :+, +), or $NAME
_BODY = rf"\$\{{{_NAME}(?::?[-=?+][^}}\n]*)?\}}|\${_NAME}"
# (patterns as strings, compiled by re on first use: only a document with a placeholder, or a
# type error, needs them)
WHOLE = rf"(?:{_BODY}|\{{\{{[^\n]*\}}\}})"
_SHELL = _BODY


def is_placeholder(value: Any) -> bool:
    """Is ``value`` a string that is wholly one placeholder?"""
    return isinstance(value, str) and re.fullmatch(WHOLE, value.strip()) is not None


_START = re.compile(r"\$[{A-Za-z_]")  # a placeholder starts (found fast: a literal $)
_BEFORE = r"""[:\-\[{,][ \t]*["']?$"""  # ... where a value starts, after it (a string, as above)


def may_hold(text: str) -> bool:
    """Can a document of ``text`` hold a value that is wholly a shell-style placeholder (a
    cheap test before the walk: a value that starts with one)?"""
    for match in _START.finditer(text):
        start = match.start()
        if re.search(_BEFORE, text[max(0, start - 8):start]) is not None:
            return True
    return False


def holds(item: Loaded | Broken) -> bool:
    """Does a document hold a value that is wholly a shell-style placeholder (a quoted
    ``{{ }}`` is not looked for: Argo Workflows substitute theirs when they run)?"""
    if not isinstance(item, Loaded) or not item.dollar:  # (its text has no $ at all)
        return False
    stack = [item.data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and "$" in node and re.fullmatch(_SHELL, node.strip()):
            return True
    return False
