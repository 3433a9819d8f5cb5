"""Values into YAML text: every template expression goes through ``to_yaml`` (strings as
double-quoted scalars written by PyYAML's emitter, collections in flow style), and the
rendered objects are dumped with multi-line strings as literal blocks."""

from __future__ import annotations

from typing import Any

import yaml

from pmanifest.loader.scalars import KUBECTL_BOOLEANS, STR, resolve


class Yaml(str):
    """Text that is already YAML (a filter's output); ``finalize_value`` passes it through."""

    __slots__ = ()


# libyaml's emitter where present: the same text as PyYAML's, 60 times faster (a template's
# time budget should not go on quoting one long string)
_QUOTER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_NO_WRAP = 2**31 - 1


def quote(value: str) -> Yaml:
    """A YAML double-quoted scalar for any string, written by PyYAML's emitter."""
    text = yaml.dump(value, Dumper=_QUOTER, default_style='"', width=_NO_WRAP,
                     allow_unicode=True)
    return Yaml(text.rstrip("\n"))


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



class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    """Safe dumper that writes multi-line strings (the wrapper script) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    """A string as kubectl will read it back: a literal block when it has several lines,
    quoted when kubectl would read the plain scalar as something else (``0E0`` and ``0o17``
    are numbers, ``y`` a boolean to kubectl, not to PyYAML's YAML 1.1 resolver)."""
    style = "|" if "\n" in value else None
    if style is None and (value in KUBECTL_BOOLEANS or resolve(value) != STR):
        style = "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(objects: list[dict[str, Any]]) -> str:
    text: str = yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                              default_flow_style=False, explicit_start=True, width=100)
    return text


