"""Policy messages and profile placeholders: ``str.format`` over a fixed set of names, with
format specs checked when the policy loads."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pmanifest.io.limits import MAX_MESSAGE_FIELD as MAX_FIELD_TEXT  # of one value
from pmanifest.io.limits import MAX_MESSAGE_WIDTH as MAX_WIDTH  # the widest format spec
from pmanifest.kube.profile import Profile
from pmanifest.loader.positions import Path

PROFILE_NAMES: dict[str, Callable[[Profile], Any]] = {
    "profile.name": lambda p: p.name,
    "profile.labelKey": lambda p: p.label_key,
    "profile.labelValue": lambda p: p.label_value,
    "profile.gracePeriodCap": lambda p: p.grace_period_cap,
    "profile.drainWindowSeconds": lambda p: p.drain_window_seconds,
}
MESSAGE_NAMES = (
    "path",       # dotted path of the failing field from the document root
    "field",      # its key (for required / additionalProperties: the missing / extra key)
    "value",      # the failing value (None for a missing key)
    "limit",      # the schema keyword's value (the maximum, the enum, the pattern, ...)
    "keyword",    # the schema keyword that failed (maximum, required, ...)
    "error",      # jsonschema's own message
    "kind", "name", "namespace",  # of the object
    "container",  # the container's name (target: containers), else ""
    *PROFILE_NAMES,
)
DEFAULT_MESSAGE = "{path}: {error}"
_PLACEHOLDER = re.compile(r"\{(profile\.[A-Za-z]+)\}")

# what a format spec may say: [[fill]align][width][.precision][s], applied to text
_SPEC = re.compile(r"^(?:.?[<>^])?(?P<width>[0-9]*)(?:\.(?P<precision>[0-9]+))?s?$", re.S)


class _Formatter(string.Formatter):
    """str.format over a fixed, flat set of names: ``{profile.name}`` is one name, never an
    attribute lookup, and no index or attribute access reaches any object. Every value is
    formatted as text (cut at MAX_FIELD_TEXT characters), so a spec that template_problem
    accepted works for any value."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        return kwargs[field_name], field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        text = value if isinstance(value, str) else str(value)
        if len(text) > MAX_FIELD_TEXT:
            text = text[:MAX_FIELD_TEXT - 3] + "..."
        return format(text, format_spec)


def spec_problem(spec: str) -> str | None:
    """Why a format spec cannot be used in a message, or None."""
    match = _SPEC.match(spec)
    if match is None:
        return (f"format spec {spec!r} is not supported: values are formatted as text, so "
                "use [[fill]align][width][.precision], e.g. {value:>10} or {value:.40}")
    if int(match.group("width") or 0) > MAX_WIDTH:
        return f"format spec {spec!r}: the width can be at most {MAX_WIDTH}"
    return None


_FORMATTER = _Formatter()


def format_message(template: str, names: Mapping[str, Any]) -> str:
    return _FORMATTER.vformat(template, (), dict(names))


def template_problem(template: str) -> str | None:
    """Why ``template`` cannot be used as a message, or None."""
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        return f"message template {template!r}: {exc}"
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in MESSAGE_NAMES:
            known = ", ".join(MESSAGE_NAMES)
            return f"message template {template!r} names {{{name}}}; known names: {known}"
        if spec and "{" in spec:
            return f"message template {template!r}: nested fields are not supported"
        problem = spec_problem(spec) if spec else None
        if problem:
            return f"message template {template!r}: {problem}"
        if conversion not in (None, "r", "s", "a"):
            return f"message template {template!r}: unknown conversion !{conversion}"
    return None


def substitute(schema: Any, profile: Profile) -> Any:
    """``schema`` with the profile placeholders replaced (see the module docstring)."""
    if isinstance(schema, dict):
        return {k: substitute(v, profile) for k, v in schema.items()}
    if isinstance(schema, list):
        return [substitute(v, profile) for v in schema]
    if isinstance(schema, str) and "{profile." in schema:
        whole = _PLACEHOLDER.fullmatch(schema)
        if whole is not None:
            return PROFILE_NAMES[whole.group(1)](profile)
        return _PLACEHOLDER.sub(lambda m: str(PROFILE_NAMES[m.group(1)](profile)), schema)
    return schema


def placeholder_problems(schema: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("errorMessage", "$ref"):
                yield from _special_problems(key, value, (*path, key))
                continue
            yield from placeholder_problems(value, (*path, key))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from placeholder_problems(value, (*path, i))
    elif isinstance(schema, str):
        for name in _PLACEHOLDER.findall(schema):
            if name not in PROFILE_NAMES:
                yield path, (f"unknown placeholder {{{name}}}; known: "
                             + ", ".join("{" + n + "}" for n in PROFILE_NAMES))


def _special_problems(key: str, value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """``errorMessage`` holds message templates; a ``$ref`` holds no placeholder."""
    if key == "errorMessage":
        for text in (value.values() if isinstance(value, dict) else [value]):
            problem = template_problem(text) if isinstance(text, str) else None
            if problem:
                yield path, problem
    elif isinstance(value, str) and _PLACEHOLDER.search(value):
        yield path, (f"$ref {value!r}: a reference cannot hold a profile placeholder (what it "
                     "points at must not depend on the profile); put the placeholder in the "
                     "subschema instead")
    else:
        yield from placeholder_problems(value, path)
