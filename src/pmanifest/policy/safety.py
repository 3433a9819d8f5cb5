"""The JSON Schemas of declarative policies are untrusted input: a linted repository's own
config can name a policy directory. This module decides what such a schema may do, before it
is ever compiled, and builds the validators that run it.

- References stay inside the schema: a ``$ref`` is a JSON pointer (``#`` or ``#/...``) to one
  of the schema's own subschemas. URLs, file names, ``$id``, ``$anchor``, ``$dynamicRef`` and
  ``$recursiveRef`` are refused, and validators are built with a registry that never
  retrieves anything, so no policy can fetch a URL or read a file.
- No recursion: a chain of ``$ref`` that comes back to where it started is refused (it would
  loop at validation time, or grow exponentially with the depth of the data), and so is a
  schema whose ``$ref`` expansion exceeds ``MAX_EXPANDED`` subschemas (a tree of references
  that doubles at each level). Checking a value then costs at most that many subschema visits
  per node of the data. Nor deeper than ``MAX_SCHEMA_DEPTH`` levels of subschemas, through
  references too: validating recurses on them.
- Patterns (``pattern``, ``patternProperties``) run on RE2, a linear-time engine: no pattern
  can backtrack catastrophically. A pattern RE2 cannot compile (backreferences, lookaround)
  is refused at load time.

``problems(schema)`` lists what is refused, each with its path inside the schema;
``validator(schema)`` and ``search(pattern)`` are the only ways policies run schemas and
patterns.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from pmanifest.io.limits import MAX_SCHEMA_DEPTH
from pmanifest.io.limits import MAX_SCHEMA_EXPANDED as MAX_EXPANDED
from pmanifest.loader.positions import Path
from pmanifest.schema.regex import PatternError, extra_keys, search

DIALECT = "https://json-schema.org/draft/2020-12/schema"
# keywords whose value is a subschema, a mapping of subschemas, or a list of subschemas
_ONE = ("additionalProperties", "items", "not", "if", "then", "else", "contains",
        "propertyNames")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_REFUSED = {
    "$id": "$id changes where references resolve",
    "$anchor": "use a JSON pointer such as #/$defs/name instead of an anchor",
    "$dynamicRef": "dynamic references are not supported in policies",
    "$dynamicAnchor": "dynamic references are not supported in policies",
    "$recursiveRef": "recursive references are not supported in policies",
    "$recursiveAnchor": "recursive references are not supported in policies",
    "unevaluatedProperties": "use additionalProperties instead",
    "unevaluatedItems": "use items instead",
}


def _subschemas(schema: dict[Any, Any], path: Path) -> Iterator[tuple[Path, Any]]:
    for key in _ONE:
        if key in schema:
            yield (*path, key), schema[key]
    for key in _MAP:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield (*path, key, name), sub
    for key in _LIST:
        value = schema.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                yield (*path, key, i), sub


def _pointer(ref: str, root: Any) -> Path | None:
    """``#/a/b~1c/0`` -> ``("a", "b/c", 0)``: the path of what an internal JSON pointer names
    in ``root`` (a part that indexes a list is a number, as the walk's paths are); None for
    what is not an internal pointer."""
    from urllib.parse import unquote

    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    path: list[str | int] = []
    node = root
    for part in ref[2:].split("/"):
        key: str | int = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and isinstance(key, str) and key.isdigit() and \
                (key == "0" or not key.startswith("0")) and int(key) < len(node):
            key = int(key)
        path.append(key)
        node = _child(node, key)
    return tuple(path)


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    return node[key] if isinstance(node, list) and isinstance(key, int) else None


class _Walk:
    """Every subschema of a schema, with its ``$ref`` target, in one iterative pass."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.nodes: dict[Path, Any] = {}
        self.children: dict[Path, list[Path]] = {}
        self.refs: dict[Path, tuple[str, Path | None]] = {}  # where -> (as written, target)
        self.problems: list[tuple[Path, str]] = []
        stack: list[tuple[Path, Any]] = [((), root)]
        while stack:
            path, schema = stack.pop()
            self.nodes[path] = schema
            if not isinstance(schema, dict):
                continue
            self.check_keywords(path, schema)
            subs = list(_subschemas(schema, path))
            self.children[path] = [p for p, _ in subs]
            stack.extend(reversed(subs))

    def check_keywords(self, path: Path, schema: dict[Any, Any]) -> None:
        for key, reason in _REFUSED.items():
            if key in schema:
                self.problems.append(((*path, key), f"{key} is not allowed in a policy "
                                      f"schema: {reason}"))
        if "$schema" in schema and (path or schema["$schema"] != DIALECT):
            self.problems.append(((*path, "$schema"), f"policies are JSON Schema draft "
                                  f"2020-12: $schema can only be {DIALECT!r}, at the top"))
        for key in ("pattern",):
            if isinstance(schema.get(key), str):
                self.check_pattern((*path, key), schema[key])
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            for name in patterns:
                self.check_pattern((*path, "patternProperties", name), name, key=True)
        if "$ref" in schema:
            ref = schema["$ref"]
            target = _pointer(ref, self.root) if isinstance(ref, str) else None
            self.refs[path] = (str(ref), target)
            if target is None:
                self.problems.append(((*path, "$ref"), f"$ref {ref!r} leads outside the "
                                      "policy; only references to the policy's own schema "
                                      "(#/$defs/name) are allowed"))

    def check_pattern(self, path: Path, pattern: Any, key: bool = False) -> None:
        try:
            search(str(pattern))
        except PatternError as exc:
            what = "patternProperties key" if key else "pattern"
            self.problems.append((path, f"{what} {pattern!r} is not supported ({exc}): "
                                  "patterns run on RE2, which has no backreferences or "
                                  "lookaround; rewrite it"))

    def check_references(self) -> None:
        """Refs point at subschemas; no chain of refs comes back; the expansion is bounded."""
        for where, (ref, target) in self.refs.items():
            if target is not None and target not in self.nodes:
                self.problems.append(((*where, "$ref"), f"$ref {ref!r} does not point at a "
                                      "subschema of this policy's schema"))
        if self.problems:
            return
        size: dict[Path, int] = {}
        height: dict[Path, int] = {}  # levels of subschemas below, through $refs too
        state: dict[Path, int] = {}  # 1: on the current path, 2: done
        stack: list[tuple[Path, int]] = [((), 0)]
        while stack:
            node, step = stack.pop()
            edges = self.edges(node)
            if step == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
            if step < len(edges):
                stack.append((node, step + 1))
                nxt = edges[step]
                if state.get(nxt) == 1:
                    where = node if node in self.refs else nxt
                    self.problems.append(((*where, "$ref"), "$ref makes a reference cycle "
                                          "(the schema refers back to itself); policies "
                                          "cannot be recursive"))
                    return
                if state.get(nxt) != 2:
                    stack.append((nxt, 0))
                continue
            state[node] = 2
            problem = self.measure(node, edges, size, height)
            if problem is not None:
                self.problems.append((node, problem))
                return

    @staticmethod
    def measure(node: Path, edges: list[Path], size: dict[Path, int],
                height: dict[Path, int]) -> str | None:
        """Record the expansion of ``node`` (its edges measured already); what is wrong with
        it, if anything."""
        size[node] = 1 + sum(size[e] for e in edges)
        height[node] = 1 + max((height[e] for e in edges), default=0)
        if height[node] > MAX_SCHEMA_DEPTH:  # validation recurses on each level
            return (f"schema is nested more than {MAX_SCHEMA_DEPTH} subschemas deep (through "
                    "its $refs too); flatten it")
        if size[node] > MAX_EXPANDED:
            return (f"schema expands to more than {MAX_EXPANDED:,} subschemas through its "
                    "$refs; simplify it")
        return None

    def edges(self, node: Path) -> list[Path]:
        out = list(self.children.get(node, ()))
        ref = self.refs.get(node)
        if ref is not None and ref[1] is not None:
            out.append(ref[1])
        return out


def problems(schema: Any) -> list[tuple[Path, str]]:
    """What a policy schema may not do, each with its path inside the schema."""
    walk = _Walk(schema)
    if not walk.problems:
        walk.check_references()
    return walk.problems


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and search(pattern)(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any,
                        schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():  # YAML keys may be numbers, booleans, null
            if search(pattern)(str(key)) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any,
                           schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = extra_keys(instance, schema)
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        listed = ", ".join(repr(key) for key in sorted(extras, key=str))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} "
                              "unexpected)")


@functools.cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    from pmanifest.schema.fast import integer_format

    return validators.extend(Draft202012Validator, {  # type: ignore[no-untyped-call]
        "format": integer_format,
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    })


def validator(schema: Any) -> Any:
    """A draft 2020-12 validator for a policy schema that passed ``problems``: patterns on
    RE2, and a registry of its own (without one, jsonschema would fetch http(s) references;
    a ``referencing.Registry`` retrieves nothing)."""
    from referencing import Registry

    return _validator_class()(schema, registry=Registry())
