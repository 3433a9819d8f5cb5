"""What an untagged plain scalar is, read as kubectl reads it.

kubectl turns a manifest into JSON with sigs.k8s.io/yaml, whose resolver (a go-yaml v2 fork)
is neither PyYAML's YAML 1.1 nor YAML 1.2's core schema. What it makes of a plain scalar,
checked against the real kubectl by ``tests/test_scalars.py``:

- null: empty, ``~``, ``null``, ``Null``, ``NULL``;
- booleans: ``true``/``false``, ``yes``/``no``, ``on``/``off`` (each also capitalised and
  upper case; not ``yEs``). kubectl reads ``y`` and ``n`` as booleans too; pmanifest reads them
  as strings, as YAML 1.1 emitters write them (PyYAML dumps the string ``n`` unquoted) and as
  ``kubectl kustomize`` reads them (which also reads ``yes``/``no``/``on``/``off`` as strings,
  as pmanifest does in a kustomization's resources: ``events.resolve_kustomize``);
- integers as Go's ``strconv.ParseInt(text, 0, 64)`` reads them once every ``_`` is dropped:
  ``0x1F``, ``0o17``, ``017`` (octal), ``0b101``, ``+12``, ``1_000`` (pmanifest keeps one above
  the 64-bit range exact, to say it does not fit; kubectl would send a float);
- floats: decimal with an optional exponent (``1e3``, ``.5``, ``1.``, ``08``), ``.inf``,
  ``.nan`` (which no JSON holds: kubectl refuses the document);
- everything else is a string, so ``=`` and ``<<`` (YAML 1.1's "value" and "merge" tags for
  PyYAML), sexagesimal ``1:20`` and timestamps (``2001-12-14`` stays as written) are strings.

kubectl then sends JSON, where a float with no fraction is written without one (``1e3`` and
``1.0`` arrive as 1000 and 1): pmanifest keeps them floats, which JSON Schema's "integer"
accepts. As a mapping key, ``<<`` is the merge key, as for kubectl.
"""

from __future__ import annotations

import math
import re
from typing import Any

TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (TAG + "str", TAG + "int", TAG + "float", TAG + "bool",
                               TAG + "null")

_WORDS: dict[str, tuple[str, Any]] = {}
for _words, _tagged in (("true yes on", (BOOL, True)), ("false no off", (BOOL, False)),
                        ("null", (NULL, None))):
    for _word in _words.split():
        for _spelling in (_word, _word.capitalize(), _word.upper()):
            _WORDS[_spelling] = _tagged
_WORDS["~"] = _WORDS[""] = (NULL, None)
for _sign, _value in (("", math.inf), ("+", math.inf), ("-", -math.inf)):
    for _spelling in (".inf", ".Inf", ".INF"):
        _WORDS[_sign + _spelling] = (FLOAT, _value)
for _spelling in (".nan", ".NaN", ".NAN"):
    _WORDS[_spelling] = (FLOAT, math.nan)
# booleans to kubectl's own decoder alone (read here as strings, as PyYAML writes them): a
# writer quotes them so that kubectl reads strings back
KUBECTL_BOOLEANS = frozenset({"y", "Y", "n", "N"})

# first characters of a plain scalar that can be anything but a string
MAY_RESOLVE = frozenset("+-0123456789.~yYnNtTfFoO")
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)\Z")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")  # what Go's ParseFloat takes after "."
_BASES = {"x": 16, "X": 16, "b": 2, "B": 2, "o": 8, "O": 8}


def resolve(text: str) -> str:
    """The tag kubectl gives the plain scalar ``text``."""
    word = _WORDS.get(text)
    if word is not None:
        return word[0]
    first = text[:1]
    if first == ".":
        return FLOAT if _DOT_FLOAT.match(text) else STR
    if first not in "+-0123456789":
        return STR
    plain = text.replace("_", "")
    if _GO_INT.match(plain):
        return INT
    return FLOAT if _YAML_FLOAT.match(plain) else STR


def value(tag: str, text: str) -> Any:
    """The value of the plain scalar ``text`` resolved to ``tag`` (``resolve``). Integers are
    exact (callers bound their size first); a float that overflows is infinite."""
    word = _WORDS.get(text)
    if word is not None:
        return word[1]
    plain = text.replace("_", "")
    if tag == INT:
        return go_int(plain)
    return float(plain)


def go_int(plain: str) -> int:
    """Go's ``strconv.ParseInt(plain, 0, 64)`` reading of an integer ``_GO_INT`` matched,
    exact at any size."""
    match = _GO_INT.match(plain)
    assert match is not None
    sign, digits = match.groups()
    if len(digits) > 1 and digits[1] in _BASES:
        number = int(digits[2:], _BASES[digits[1]])
    elif len(digits) > 1 and digits[0] == "0":
        number = int(digits[1:], 8)
    else:
        number = int(digits)
    return -number if sign == "-" else number
