"""Small builders of CEL text: literals, guarded field access, fresh comprehension variables.

Only what Kubernetes' CEL has (the standard definitions and macros): no extension library, so
every expression also runs under the CEL implementations of the package index.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_FRESH = itertools.count()


def string(text: str) -> str:
    """A CEL string literal; characters outside printable ASCII as ``\\uXXXX`` escapes."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "'" + "".join(out) + "'"


def strings(items: Iterable[str]) -> str:
    """A CEL list of string literals."""
    return "[" + ", ".join(string(item) for item in items) + "]"


def field(base: str, name: str) -> str:
    """``base.name``, or ``base['name']`` where the name is no CEL identifier."""
    if name.isidentifier() and name.isascii():
        return f"{base}.{name}"
    return f"{base}[{string(name)}]"


def present(base: str, path: Iterable[str]) -> str:
    """True when every step of ``path`` below ``base`` is present: ``has()`` at each level,
    since CEL (as Kubernetes runs it) errors on a field read below an absent one."""
    checks = []
    current = base
    for name in path:
        if name.isidentifier() and name.isascii():
            checks.append(f"has({current}.{name})")
        else:
            checks.append(f"{string(name)} in {current}")
        current = field(current, name)
    return " && ".join(checks) if checks else "true"


def at(base: str, path: Iterable[str]) -> str:
    """``base.a.b.c`` (read it only where :func:`present` holds)."""
    current = base
    for name in path:
        current = field(current, name)
    return current


def fresh(stem: str) -> str:
    """A comprehension variable no other one in the same expression shadows."""
    return f"{stem}{next(_FRESH)}"


def restart_names() -> None:
    """Number comprehension variables from 0 again (each export is the same text)."""
    global _FRESH
    _FRESH = itertools.count()


def any_of(parts: Iterable[str]) -> str:
    items = [f"({p})" for p in parts if p != "false"]
    return " || ".join(items) if items else "false"


def all_of(parts: Iterable[str]) -> str:
    items = [f"({p})" for p in parts if p != "true"]
    return " && ".join(items) if items else "true"
