"""The only YAML writer: plain data to YAML text that kubectl reads back as the same data.

PyYAML's emitter quotes a string only when its own YAML 1.1 resolver would read it as
something else, but kubectl reads a manifest with a different resolver (``scalars``): ``0E0``
and ``0o17`` are numbers and ``y`` a boolean to kubectl, not to PyYAML. Every writer of YAML in
pmanifest (render's objects, fixes written into the user's text, the exported admission
policies) goes through here, so each such string is quoted the same way everywhere.
"""

from __future__ import annotations

from typing import Any

import yaml

from pmanifest.loader.scalars import KUBECTL_BOOLEANS, STR, resolve

# libyaml's emitter where present: the same text as PyYAML's, 60 times faster
_BASE: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_NO_WRAP = 2**31 - 1


def needs_quotes(value: str) -> bool:
    """Whether kubectl would read ``value`` written as a plain scalar as something else."""
    return value in KUBECTL_BOOLEANS or resolve(value) != STR


class _Dumper(_BASE):  # type: ignore[misc,valid-type]
    """Safe dumper that quotes what kubectl would misread and writes multi-line strings as
    literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    if style is None and needs_quotes(value):
        style = "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_documents(documents: list[Any], *, allow_unicode: bool = True,
                   width: int = 100) -> str:
    """Every document in block style, each after ``---``, keys in their order."""
    text: str = yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False,
                              allow_unicode=allow_unicode, default_flow_style=False,
                              explicit_start=True, width=width)
    return text


def double_quoted(value: str) -> str:
    """A YAML double-quoted scalar for any string, written by PyYAML's emitter."""
    text: str = yaml.dump(value, Dumper=_BASE, default_style='"', width=_NO_WRAP,
                          allow_unicode=True)
    return text.rstrip("\n")


def flow_scalar(value: Any) -> str:
    """A scalar as one flow-context YAML scalar that kubectl reads back as ``value``."""
    text: str = yaml.dump([value], Dumper=_Dumper, default_flow_style=True, width=_NO_WRAP,
                          allow_unicode=True)
    return text.strip()[1:-1]


__all__ = ["double_quoted", "dump_documents", "flow_scalar", "needs_quotes"]
