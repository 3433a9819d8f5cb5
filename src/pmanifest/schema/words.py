"""The one translator from JSON Schema errors (jsonschema's ValidationError) to one-line
messages of the form ``<where> <what is wrong>; <what to do>``.

Every schema pmanifest checks goes through here: Kubernetes objects (PM002), the spec, the
config file, provider profiles, policy files and the rule catalogue. What differs between them
is only vocabulary (``Words``): what the root is called, the hint for a missing key, for a
value that does not match its pattern, for a key that is refused outright.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from pmanifest.loader.positions import Path, dotted
from pmanifest.schema.regex import extra_keys
from pmanifest.suggest import close_match

MAX_MESSAGE = 300
MAX_LISTED = 12  # allowed keys named in a message about an unknown key


class Violation(NamedTuple):
    """One JSON Schema error at its path, worded in the document's words."""

    path: Path  # where the problem is, from the schema's root
    message: str
    at_key: bool = False  # point at the key (a missing or unknown key), not at the value


class Words(NamedTuple):
    """The vocabulary of one kind of document."""

    root: str = "the document"
    required: Mapping[str, str] = MappingProxyType({})  # missing key -> what to do
    patterns: Mapping[str, str] = MappingProxyType({})  # key -> hint for a bad value
    refused: Mapping[str, str] = MappingProxyType({})  # unknown key -> whole message
    # special wording for a value that fails pattern/maxLength, by the key that holds it
    value_message: Callable[[Path, str, Any], str | None] | None = None
    # required keys that are not reported (defaulted elsewhere), by (parent pattern, key)
    optional: frozenset[tuple[str, str]] = frozenset()
    unknown_hint: Callable[[Path, str], str | None] | None = None  # extra for unknown keys
    # an object with none, or several, of keys it needs exactly one of: (where, keys, given)
    one_of: Callable[[str, list[str], list[str]], str] | None = None


def where(path: Path, words: Words) -> str:
    return dotted(path) or words.root


def pattern_of(path: Path) -> str:
    """``spec.rules[3].x`` -> ``spec.rules[*].x`` (for matching parents)."""
    out = ""
    for part in path:
        out += "[*]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def json_type(value: Any) -> str:
    """The JSON Schema type name of a loaded YAML value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def yaml_type(value: Any) -> str:
    """The type of a value in the words of YAML users (list, mapping)."""
    name = json_type(value)
    return {"array": "list", "object": "mapping"}.get(name, name)


def _article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def describe(error: Any, words: Words) -> list[Violation]:
    """The violations one jsonschema error stands for (several for several unknown keys)."""
    kind = error.validator
    handler = _HANDLERS.get(kind, _other)
    if kind in ("anyOf", "oneOf") and not _one_of_keys(error.schema.get(kind)):
        best = _best(error)
        if best is not None:
            return describe(best, words)
        handler = _other
    return [Violation(v.path, _short(v.message), v.at_key) for v in handler(error, words)]


def _best(error: Any) -> Any:
    """The branch of an anyOf/oneOf that got furthest (not the whole alternative)."""
    if not error.context:
        return None
    from jsonschema.exceptions import best_match

    found = best_match(error.context)
    return found if found is not error else None


def _one_of_keys(branches: Any) -> list[str]:
    """``[{required: [a]}, {required: [b]}]`` -> ``[a, b]``: a choice of exactly one key."""
    if not isinstance(branches, list):
        return []
    keys = []
    for branch in branches:
        required = branch.get("required") if isinstance(branch, dict) else None
        if not (isinstance(required, list) and len(required) == 1 and len(branch) == 1):
            return []
        keys.append(str(required[0]))
    return keys


def _unknown(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    allowed = sorted(str(k) for k in error.schema.get("properties", {}))
    for key in extra_keys(error.instance, error.schema):
        name = str(key)
        message = words.refused.get(name)
        if message is None:
            extra = words.unknown_hint(path, name) if words.unknown_hint else None
            close = close_match(name, allowed)
            todo = extra or (f"did you mean {close!r}?" if close else
                             f"remove it (allowed: {', '.join(allowed)})"
                             if 0 < len(allowed) <= MAX_LISTED else "remove it")
            message = f"unknown key {name!r} in {where(path, words)}; {todo}"
        yield Violation((*path, key), message, at_key=True)


def _required(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    parent = pattern_of(path)
    instance = error.instance if isinstance(error.instance, dict) else {}
    for key in error.validator_value:
        if key in instance or any(parent.endswith(p) and key == k for p, k in words.optional):
            continue
        todo = words.required.get(str(key), "add it")
        yield Violation(path, f"{where(path, words)} is missing {key!r}; {todo}", at_key=True)


def _one_source(error: Any, words: Words) -> Iterator[Violation]:
    """An object that must have exactly one of some keys has none, or several."""
    path: Path = tuple(error.absolute_path)
    if not isinstance(error.instance, dict):
        return  # the type error says it
    keys = _one_of_keys(error.schema.get("oneOf"))
    given = [key for key in error.instance if key in keys]
    if words.one_of is not None:
        at: Path = path if not given else (*path, given[1])
        yield Violation(at, words.one_of(where(path, words), keys, given), at_key=True)
        return
    if not given:
        first = words.required.get(keys[0], "")
        example = f" (e.g. {first})" if first else ""
        yield Violation(path, f"{where(path, words)} has none of {', '.join(keys)}; add "
                              f"exactly one{example}", at_key=True)
        return
    yield Violation((*path, given[1]), f"{where(path, words)} has {len(given)} of "
                    f"{', '.join(keys)} ({', '.join(given)}); keep exactly one", at_key=True)


def _type(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    expected = error.validator_value
    names = [t for t in (expected if isinstance(expected, list) else [expected]) if t != "null"]
    text = " or ".join({"array": "list", "object": "mapping"}.get(n, n) for n in names)
    hint = "quote it to make it a string" if "string" in names else f"give {_article(text)}"
    yield Violation(path, f"{where(path, words)} must be {_article(text)}, got "
                          f"{yaml_type(error.instance)}; {hint}")


def _enum(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    values = [v for v in error.validator_value if v is not None]
    named = [v for v in values if not isinstance(v, bool)] or values  # YAML 1.1 `off` is False
    options = [str(v) for v in named]
    close = close_match(str(error.instance), options, cutoff=0.5)
    todo = f"did you mean {close!r}?" if close else f"use one of: {', '.join(options)}"
    yield Violation(path, f"{where(path, words)} is {error.instance!r}, which is not one of "
                          f"{', '.join(options)}; {todo}")


def _const(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    wanted = error.validator_value
    yield Violation(path, f"{where(path, words)} must be {wanted!r}, got {error.instance!r}; "
                          f"set {path[-1] if path else 'it'}: {wanted}")


def _pattern(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    key = str(path[-1]) if path else ""
    special = words.value_message(path, key, error.instance) if words.value_message else None
    if special is not None:
        yield Violation(path, special)
        return
    if error.validator == "maxLength":
        yield Violation(path, f"{where(path, words)} is longer than {error.validator_value} "
                              "characters; shorten it")
        return
    hint = next((words.patterns[str(p)] for p in reversed(path) if str(p) in words.patterns),
                "fix the value")
    yield Violation(path, f"{where(path, words)} {error.instance!r} does not match "
                          f"{error.validator_value}; {hint}")


def _bound(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    word = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "above",
            "exclusiveMaximum": "below"}[error.validator]
    yield Violation(path, f"{where(path, words)} must be {word} {error.validator_value}, got "
                          f"{error.instance}; change the value")


def _empty(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    yield Violation(path, f"{where(path, words)} must not be empty; give a value or remove "
                          "the key")


def _unique(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    yield Violation(path, f"{where(path, words)} has duplicate entries; list each once")


def _format(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    detail = error.message.split(" ", 1)[-1]  # "does not fit in int32 (... to ...)"
    yield Violation(path, f"{where(path, words)} is {error.instance}, which {detail}; use a "
                          "smaller value")


def _other(error: Any, words: Words) -> Iterator[Violation]:
    path: Path = tuple(error.absolute_path)
    yield Violation(path, f"{where(path, words)}: {error.message}")


_HANDLERS: dict[str, Callable[[Any, Words], Iterator[Violation]]] = {
    "additionalProperties": _unknown,
    "required": _required,
    "oneOf": _one_source,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "pattern": _pattern,
    "maxLength": _pattern,
    "minimum": _bound,
    "maximum": _bound,
    "exclusiveMinimum": _bound,
    "exclusiveMaximum": _bound,
    "minItems": _empty,
    "minLength": _empty,
    "uniqueItems": _unique,
    "format": _format,
}
