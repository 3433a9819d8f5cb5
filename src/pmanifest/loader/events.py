"""Where the builder's parser events come from, and what a plain scalar is.

libyaml's parser (PyYAML's C loader) reads every document. It refuses one thing valid JSON may
hold: a UTF-16 surrogate pair written as two escapes (``"\\ud83d\\ude00"``, what JSON encoders
write for a character above U+FFFF). A document that fails on such an escape is read again by
PyYAML's own (pure Python) parser, which decodes each escape to a lone surrogate; the events
then carry the pairs joined into the characters they encode, and an unpaired surrogate is an
error at its scalar.
"""

from __future__ import annotations

import re
from typing import Any, cast

import yaml
from yaml.events import ScalarEvent

from pmanifest.io.limits import MAX_INTEGER_DIGITS, bounded_integer
from pmanifest.loader.scalars import MAY_RESOLVE, resolve
from pmanifest.loader.scalars import value as plain_value

try:
    FAST_LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    FAST_LOADER = yaml.SafeLoader

TAG = "tag:yaml.org,2002:"
PLAIN_TAGS = {TAG + "str", TAG + "timestamp", TAG + "binary"}
CONSTRUCTED_TAGS = {TAG + "int", TAG + "float", TAG + "bool", TAG + "null"}
STR = TAG + "str"
INT = TAG + "int"
BOOL = TAG + "bool"
MERGE = TAG + "merge"

_RESOLVED: dict[str, str] = {}
_MAY_RESOLVE = MAY_RESOLVE | {""}
_CACHE_LIMIT = 4096


def resolve_plain(value: str, implicit: Any) -> str:
    """The implicit tag of an untagged scalar, as kubectl gives it (``pmanifest.loader.
    scalars``). Only a plain scalar whose first character can start a non-string (a digit,
    ``t``rue, ``n``ull, ...) is looked at; those results are cached (manifests repeat their
    words), in a small bounded cache."""
    if not implicit[0]:
        return STR  # quoted: a string whatever it looks like
    if (value[:1] if value else "") not in _MAY_RESOLVE:
        return STR
    found = _RESOLVED.get(value)
    if found is None:
        found = resolve(value)
        if len(_RESOLVED) >= _CACHE_LIMIT:
            _RESOLVED.clear()
        _RESOLVED[value] = found
    return found


def resolve_kustomize(value: str, implicit: Any) -> str:
    """The implicit tag ``kubectl kustomize`` gives an untagged scalar: kubectl's, but YAML
    1.2's booleans only (``yes``, ``no``, ``on``, ``off`` are strings to it)."""
    tag = resolve_plain(value, implicit)
    if tag == BOOL and value.lower() not in ("true", "false"):
        return STR
    return tag


def plain_scalar(tag: str, text: str) -> Any:
    """The value of a plain scalar ``resolve_plain`` gave ``tag`` (an integer: bounded)."""
    if tag == INT:
        if text.isdigit() and text.isascii() and text[0] != "0" and \
                len(text) <= MAX_INTEGER_DIGITS:  # the common case: decimal, within bounds
            return int(text)
        return bounded_integer(text, lambda _: plain_value(tag, text))
    return plain_value(tag, text)


def is_merge_key(event: Any) -> bool:
    """Is this scalar, as a mapping key, the merge key (a plain ``<<``, or tagged so)? As a
    value a plain ``<<`` is a string (kubectl's reading; YAML 1.1 gives it the merge tag)."""
    if event.tag is None:
        return bool(event.implicit[0]) and event.value == "<<"
    return bool(event.tag == MERGE)


def as_key(value: Any, text: str) -> Any:
    """A scalar as a mapping key: floats, booleans and null stay the text they were written as
    (``1.5``, ``yes``, ``null``: what kubectl's decoder makes of them), strings and integers
    are themselves."""
    return text if isinstance(value, float | bool) or value is None else value


# -- surrogate pairs -------------------------------------------------------------------------

# Patterns, compiled by ``re`` on first use (only a document libyaml refused needs them: a
# pattern with characters above U+00FF costs about 2.5 M instructions to compile)
_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
_SURROGATE = "[\ud800-\udfff]"
_PAIR = "([\ud800-\udbff])([\udc00-\udfff])"
_BAD_ESCAPE = "found invalid Unicode character escape code"


def needs_python_parser(exc: yaml.MarkedYAMLError, chunk: str) -> bool:
    """libyaml refused an escape, and the document has surrogate escapes: read it again."""
    return exc.problem == _BAD_ESCAPE and re.search(_SURROGATE_ESCAPE, chunk) is not None


def _joined(match: re.Match[str]) -> str:
    high, low = match.group(1), match.group(2)
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + ord(low) - 0xDC00)


class SurrogateLoader(yaml.SafeLoader):
    """PyYAML's Python parser, with surrogate pairs in scalars joined (only an escape can make
    a surrogate: the text itself was decoded strictly from UTF-8)."""

    def get_event(self) -> Any:
        try:
            event = super().get_event()  # type: ignore[no-untyped-call]
        except ValueError:  # chr() of an escape above U+10FFFF; libyaml refuses it too
            raise yaml.scanner.ScannerError(None, None, _BAD_ESCAPE, self.get_mark()) from None
        if type(event) is ScalarEvent and re.search(_SURROGATE, event.value):
            value = re.sub(_PAIR, _joined, event.value)
            lone = re.search(_SURROGATE, value)
            if lone is not None:
                raise yaml.scanner.ScannerError(
                    None, None, f"unpaired UTF-16 surrogate escape \\u{ord(lone.group()):04x} "
                    "in a double-quoted string (JSON writes a character above U+FFFF as a "
                    "pair)", cast(yaml.Mark, event.start_mark))
            event.value = value
        return event
