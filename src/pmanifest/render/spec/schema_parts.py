"""Building blocks of the spec's JSON Schema, shared by the modules that describe fields."""

from __future__ import annotations

from typing import Any

from pmanifest.io.limits import INT64_MAX, INT64_MIN
from pmanifest.render.spec.model import DNS1123_SUBDOMAIN


def field(schema: dict[str, Any], description: str, default: Any = None) -> dict[str, Any]:
    """A field: its schema plus the description and default every field carries."""
    out = dict(schema)
    out["description"] = description
    if default is not None:
        out["default"] = default
    return out


ARGV_ITEM = {"type": ["string", "integer"], "description": "One argument (integers are "
             "passed as their decimal text; quote anything else that is not a string)."}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
QUANTITY = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
SUBDOMAIN = {"type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN.pattern}
INT32_MAX = 2**31 - 1  # the Kubernetes fields these fill are int32 (int64 for durations)
# a quantity written as a number is an int64 to Kubernetes (and a template's output refuses
# any integer beyond 64 bits): one beyond is refused at its line, as every integer field is
QUANTITY_VALUE = {"type": ["string", "integer"], "pattern": QUANTITY, "minimum": INT64_MIN,
                  "maximum": INT64_MAX}


def count(least: int) -> dict[str, Any]:
    """An int32 count of at least ``least``."""
    return {"type": "integer", "minimum": least, "maximum": INT32_MAX}


def closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object with exactly these keys allowed (and ``required`` ones)."""
    out: dict[str, Any] = {"type": "object", "additionalProperties": False,
                           "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def one_of_keys(keys: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """``oneOf`` branches: exactly one of ``keys`` present."""
    return [{"required": [key]} for key in keys]
