"""A compiled yes/no validator for the subset of JSON Schema the Kubernetes schemas use.

Most manifests are valid, and for a valid object the only question is "valid?". jsonschema
answers it by walking the schema for every object; here each schema is compiled once into a
tree of small closures, which answers the same question many times faster. When the answer is
"no", the caller asks jsonschema for the detailed errors, so findings are exactly the ones the
straightforward path produces.

Supported keywords: type, properties, additionalProperties, required, items, enum, oneOf,
$ref (into the shared definitions, recursion allowed), minimum, maximum, exclusiveMinimum,
exclusiveMaximum, pattern, minLength, maxLength, minItems, maxItems, uniqueItems, const, not,
allOf, anyOf, contains, if/then/else, minProperties, maxProperties, propertyNames.
Annotations (description, format, x-kubernetes-*) do not affect validity (jsonschema does not
assert ``format`` by default).
Any other keyword makes ``compile_schema`` return None, and the caller uses jsonschema alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({
    "description", "format", "$schema", "$id", "title", "default", "example", "examples",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$comment",
    "errorMessage",  # pmanifest policies word their own violations with it
})
_SUPPORTED = frozenset({
    "type", "properties", "additionalProperties", "required", "items", "enum", "oneOf", "$ref",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minLength",
    "maxLength", "minItems", "maxItems", "uniqueItems", "const", "not", "allOf", "anyOf",
    "contains", "if", "then", "else", "minProperties", "maxProperties", "propertyNames",
})


class Unsupported(Exception):
    """The schema uses a keyword this compiler does not know."""


def _is_integer(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


_CLASSES: dict[str, type] = {
    "string": str, "boolean": bool, "object": dict, "array": list, "null": type(None),
}


def _all_of(checks: list[Check]) -> Check:
    """The conjunction of ``checks``, without a generator for the common small cases."""
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    if len(checks) == 3:
        first, second, third = checks
        return lambda v: first(v) and second(v) and third(v)
    return lambda v: all(c(v) for c in checks)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: True is not 1 (also inside lists and objects)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _unique(items: list[Any]) -> bool:
    return not any(_same(items[i], items[j])
                   for i in range(len(items)) for j in range(i + 1, len(items)))


Search = Callable[[str], Callable[[str], Any]]


def _python_search(pattern: str) -> Callable[[str], Any]:
    import re

    return re.compile(pattern).search


class Compiler:
    def __init__(self, definitions: dict[str, Any], search: Search = _python_search) -> None:
        self.definitions = definitions
        self.search = search  # pattern -> its search function (RE2 for untrusted schemas)
        self.compiled: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.compiled:
            if name not in self.definitions:
                raise Unsupported(ref)
            holder: list[Check] = []
            # late binding: recursive definitions refer to themselves before they are done
            self.compiled[name] = lambda v: holder[0](v)
            holder.append(self.schema(self.definitions[name]))
            self.compiled[name] = holder[0]
        return self.compiled[name]

    def schema(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema))
        unknown = set(schema) - _SUPPORTED - _ANNOTATIONS
        if any(not k.startswith("x-") for k in unknown):
            raise Unsupported(", ".join(sorted(unknown)))
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            checks.append(self.type_check(schema["type"]))
        if "enum" in schema:
            allowed = list(schema["enum"])
            checks.append(lambda v: any(_same(v, a) for a in allowed))
        if "oneOf" in schema:
            branches = [self.schema(s) for s in schema["oneOf"]]
            checks.append(lambda v: sum(1 for b in branches if b(v)) == 1)
        checks.extend(self.combinators(schema))
        if "required" in schema:
            required = tuple(schema["required"])
            checks.append(lambda v: not isinstance(v, dict) or all(k in v for k in required))
        if "properties" in schema or "additionalProperties" in schema:
            checks.append(self.object_check(schema))
        if "items" in schema:
            item = self.schema(schema["items"])
            checks.append(lambda v: not isinstance(v, list) or all(item(i) for i in v))
        checks.extend(self.object_size_checks(schema))
        checks.extend(self.value_checks(schema))
        return _all_of(checks)

    def combinators(self, schema: dict[str, Any]) -> list[Check]:
        """not, allOf, anyOf, contains and if/then/else (then/else without if are ignored)."""
        checks: list[Check] = []
        if "not" in schema:
            negated = self.schema(schema["not"])
            checks.append(lambda v: not negated(v))
        if "allOf" in schema:
            checks.append(_all_of([self.schema(s) for s in schema["allOf"]]))
        if "anyOf" in schema:
            choices = [self.schema(s) for s in schema["anyOf"]]
            checks.append(lambda v: any(c(v) for c in choices))
        if "contains" in schema:
            item = self.schema(schema["contains"])
            checks.append(lambda v: not isinstance(v, list) or any(item(i) for i in v))
        if "if" in schema:
            condition = self.schema(schema["if"])
            then = self.schema(schema.get("then", True))
            otherwise = self.schema(schema.get("else", True))
            checks.append(lambda v: then(v) if condition(v) else otherwise(v))
        return checks

    def value_checks(self, schema: dict[str, Any]) -> list[Check]:
        """Bounds, lengths, patterns and constants (each applies to its own type only)."""
        checks: list[Check] = []

        def number(v: Any) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool)

        if "minimum" in schema:
            low = schema["minimum"]
            checks.append(lambda v: not number(v) or v >= low)
        if "maximum" in schema:
            high = schema["maximum"]
            checks.append(lambda v: not number(v) or v <= high)
        if "exclusiveMinimum" in schema:
            above = schema["exclusiveMinimum"]
            checks.append(lambda v: not number(v) or v > above)
        if "exclusiveMaximum" in schema:
            below = schema["exclusiveMaximum"]
            checks.append(lambda v: not number(v) or v < below)
        if "pattern" in schema:
            search = self.search(schema["pattern"])
            checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
        if "minLength" in schema:
            shortest = schema["minLength"]
            checks.append(lambda v: not isinstance(v, str) or len(v) >= shortest)
        if "maxLength" in schema:
            longest = schema["maxLength"]
            checks.append(lambda v: not isinstance(v, str) or len(v) <= longest)
        if "minItems" in schema:
            fewest = schema["minItems"]
            checks.append(lambda v: not isinstance(v, list) or len(v) >= fewest)
        if "maxItems" in schema:
            most = schema["maxItems"]
            checks.append(lambda v: not isinstance(v, list) or len(v) <= most)
        if schema.get("uniqueItems") is True:
            checks.append(lambda v: not isinstance(v, list) or _unique(v))
        if "const" in schema:
            constant = schema["const"]
            checks.append(lambda v: _same(v, constant))
        return checks

    def object_size_checks(self, schema: dict[str, Any]) -> list[Check]:
        """minProperties, maxProperties and propertyNames (on mappings only)."""
        checks: list[Check] = []
        if "minProperties" in schema:
            fewest = schema["minProperties"]
            checks.append(lambda v: not isinstance(v, dict) or len(v) >= fewest)
        if "maxProperties" in schema:
            most = schema["maxProperties"]
            checks.append(lambda v: not isinstance(v, dict) or len(v) <= most)
        if "propertyNames" in schema:
            name = self.schema(schema["propertyNames"])
            checks.append(lambda v: not isinstance(v, dict) or all(name(k) for k in v))
        return checks

    def type_check(self, types: Any) -> Check:
        names = [types] if isinstance(types, str) else list(types)
        if not {"integer", "number"} & set(names):
            # one isinstance over a tuple (bool is not an int here: "boolean" is its own type)
            classes = tuple(_CLASSES[n] for n in names)
            return lambda v: isinstance(v, classes)
        tests = [_TYPES[n] for n in names]
        if len(tests) == 1:
            return tests[0]
        return lambda v: any(t(v) for t in tests)

    def object_check(self, schema: dict[str, Any]) -> Check:
        props = {k: self.schema(s) for k, s in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        extra_check = None if extra is True else self.schema(extra)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for key, value in v.items():
                prop = props.get(key)
                if prop is not None:
                    if not prop(value):
                        return False
                elif extra_check is not None and not extra_check(value):
                    return False
            return True

        return check


def compile_schema(schema: dict[str, Any], definitions: dict[str, Any],
                   search: Search = _python_search) -> Check | None:
    """A yes/no validator for ``schema``, or None when it uses unsupported keywords.
    ``search`` compiles patterns (the shipped Kubernetes schemas use Python's ``re``;
    policies, which are untrusted, RE2)."""
    try:
        return Compiler(definitions, search).schema(schema)
    except (Unsupported, KeyError, TypeError, ValueError):  # re.error is a ValueError
        return None
