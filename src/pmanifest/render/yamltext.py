"""Values into YAML text: every template expression goes through ``to_yaml`` (strings as
double-quoted scalars written by PyYAML's emitter, collections in flow style), and the
rendered objects are dumped with multi-line strings as literal blocks."""

from __future__ import annotations

from typing import Any

from pmanifest.loader.emit import double_quoted


class Yaml(str):
    """Text that is already YAML (a filter's output); ``finalize_value`` passes it through."""

    __slots__ = ()


def quote(value: str) -> Yaml:
    """A YAML double-quoted scalar for any string, written by PyYAML's emitter."""
    return Yaml(double_quoted(value))


def to_yaml(value: Any) -> Yaml:
    """Any plain value as one line of YAML: strings quoted, collections in flow style."""
    if isinstance(value, Yaml):
        return value
    if isinstance(value, str):
        return quote(str(value))  # a plain str: Markup (`|tojson`, `|safe`) is quoted too
    if isinstance(value, bool):
        return Yaml("true" if value else "false")
    if isinstance(value, int):
        if value.bit_length() > 64:
            raise _template_error(f"an integer of {value.bit_length()} bits is too large for a "
                                  "manifest (Kubernetes integers have at most 64)")
        return Yaml(str(value))
    if value is None:
        return Yaml("null")
    if isinstance(value, list | tuple):
        return Yaml("[" + ", ".join(to_yaml(v) for v in value) + "]")
    if isinstance(value, dict):
        items = (f"{to_yaml(str(k))}: {to_yaml(v)}" for k, v in value.items())
        return Yaml("{" + ", ".join(items) + "}")
    raise _template_error(f"cannot put a {type(value).__name__} into a template")


def _template_error(message: str) -> Exception:
    from jinja2 import TemplateRuntimeError

    return TemplateRuntimeError(message)


def finalize_value(value: Any) -> str:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the variable
    return to_yaml(value)
