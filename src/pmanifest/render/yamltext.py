"""Values into YAML text: every template expression goes through ``to_yaml`` (strings as
double-quoted scalars written by PyYAML's emitter, collections in flow style), and the
rendered objects are dumped with multi-line strings as literal blocks."""

from __future__ import annotations

from typing import Any

import yaml


class Yaml(str):
    """Text that is already YAML (a filter's output); ``_finalize`` passes it through."""

    __slots__ = ()


def quote(value: str) -> Yaml:
    """A YAML double-quoted scalar for any string, written by PyYAML's emitter."""
    text = yaml.dump(value, Dumper=yaml.SafeDumper, default_style='"', width=float("inf"),
                     allow_unicode=True)
    return Yaml(text.rstrip("\n"))


def to_yaml(value: Any) -> Yaml:
    """Any plain value as one line of YAML: strings quoted, collections in flow style."""
    if isinstance(value, Yaml):
        return value
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, bool):
        return Yaml("true" if value else "false")
    if isinstance(value, int):
        return Yaml(str(value))
    if value is None:
        return Yaml("null")
    if isinstance(value, list | tuple):
        return Yaml("[" + ", ".join(to_yaml(v) for v in value) + "]")
    if isinstance(value, dict):
        items = (f"{to_yaml(str(k))}: {to_yaml(v)}" for k, v in value.items())
        return Yaml("{" + ", ".join(items) + "}")
    raise TypeError(f"cannot put a {type(value).__name__} into a template")


def _finalize(value: Any) -> str:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the variable
    return to_yaml(value)



class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    """Safe dumper that writes multi-line strings (the wrapper script) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(objects: list[dict[str, Any]]) -> str:
    text: str = yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                              default_flow_style=False, explicit_start=True, width=100)
    return text


