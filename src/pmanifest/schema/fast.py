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
Any other keyword makes ``compile_schema`` return None, and the caller uses jsonschema alone;
in a definition (compiled when a value first reaches it), it makes the check answer False for
the values that reach it, and the caller asks jsonschema about those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
        """The check of a definition, compiled when a value first reaches it: a Kubernetes
        kind's schema reaches hundreds of definitions, an object uses a few of them."""
        name = ref.rsplit("/", 1)[-1]
        if name not in self.definitions:
            raise Unsupported(ref)
        found = self.compiled.get(name)
        if found is None:
            holder: list[Check] = []

            def compiled_on_first_use(v: Any) -> bool:
                if not holder:  # (recursive definitions reach this check again: it is there)
                    holder.append(self._definition(name))
                return holder[0](v)

            self.compiled[name] = found = compiled_on_first_use
        return found

    def _definition(self, name: str) -> Check:
        try:
            return self.schema(self.definitions[name])
        except (Unsupported, KeyError, TypeError, ValueError):  # re.error is a ValueError
            return _undecided

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
        checks = [build(self, schema[keyword]) for keyword, build in _KEYWORDS.items()
                  if keyword in schema]
        if "properties" in schema or "additionalProperties" in schema:
            checks.append(self.object_check(schema))
        if "if" in schema:
            condition = self.schema(schema["if"])
            then = self.schema(schema.get("then", True))
            otherwise = self.schema(schema.get("else", True))
            checks.append(lambda v: then(v) if condition(v) else otherwise(v))
        if schema.get("format") in _INTEGER_FORMATS:
            low, high = _INTEGER_FORMATS[schema["format"]]
            checks.append(lambda v: not _is_integer(v) or low <= v <= high)
        return _all_of(checks)

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



def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _on(kind: type | tuple[type, ...], test: Callable[[Any], bool]) -> Check:
    """``test`` for values of ``kind``; every other value passes (a keyword applies to its own
    type only)."""
    return lambda v: not isinstance(v, kind) or test(v)


def _on_number(test: Callable[[Any], bool]) -> Check:
    return lambda v: not _number(v) or test(v)


def _all_items(item: Check) -> Check:
    return _on(list, lambda v: all(item(i) for i in v))


def _some_item(item: Check) -> Check:
    return _on(list, lambda v: any(item(i) for i in v))


def _keys(name: Check) -> Check:
    return _on(dict, lambda v: all(name(k) for k in v))


def _negated(check: Check) -> Check:
    return lambda v: not check(v)


def _matches(search: Callable[[str], Any]) -> Check:
    return _on(str, lambda v: search(v) is not None)


def _exactly_one(branches: list[Check]) -> Check:
    return lambda v: sum(1 for b in branches if b(v)) == 1


def _any(choices: list[Check]) -> Check:
    return lambda v: any(c(v) for c in choices)


Builder = Callable[[Compiler, Any], Check]
# keyword -> its check, in the order they are tried (cheap first)
_KEYWORDS: dict[str, Builder] = {
    "$ref": lambda c, ref: c.ref(ref),
    "type": lambda c, types: c.type_check(types),
    "enum": lambda c, allowed: lambda v: any(_same(v, a) for a in allowed),
    "const": lambda c, constant: lambda v: _same(v, constant),
    "required": lambda c, keys: _on(dict, lambda v: all(k in v for k in keys)),
    "minimum": lambda c, low: _on_number(lambda v: v >= low),
    "maximum": lambda c, high: _on_number(lambda v: v <= high),
    "exclusiveMinimum": lambda c, above: _on_number(lambda v: v > above),
    "exclusiveMaximum": lambda c, below: _on_number(lambda v: v < below),
    "minLength": lambda c, shortest: _on(str, lambda v: len(v) >= shortest),
    "maxLength": lambda c, longest: _on(str, lambda v: len(v) <= longest),
    "pattern": lambda c, pattern: _matches(c.search(pattern)),
    "minItems": lambda c, fewest: _on(list, lambda v: len(v) >= fewest),
    "maxItems": lambda c, most: _on(list, lambda v: len(v) <= most),
    "uniqueItems": lambda c, on: _on(list, _unique) if on is True else (lambda v: True),
    "minProperties": lambda c, fewest: _on(dict, lambda v: len(v) >= fewest),
    "maxProperties": lambda c, most: _on(dict, lambda v: len(v) <= most),
    "propertyNames": lambda c, sub: _keys(c.schema(sub)),
    "items": lambda c, sub: _all_items(c.schema(sub)),
    "contains": lambda c, sub: _some_item(c.schema(sub)),
    "not": lambda c, sub: _negated(c.schema(sub)),
    "allOf": lambda c, subs: _all_of([c.schema(s) for s in subs]),
    "anyOf": lambda c, subs: _any([c.schema(s) for s in subs]),
    "oneOf": lambda c, subs: _exactly_one([c.schema(s) for s in subs]),
}
# integer formats the Kubernetes schemas use: asserted, so an int32 field refuses 3000000000
_INTEGER_FORMATS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def integer_format(validator: Any, fmt: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """The ``format`` keyword for jsonschema, asserting the integer formats as the compiled
    check does (jsonschema itself only annotates them)."""
    from jsonschema.exceptions import ValidationError

    bounds = _INTEGER_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if bounds is not None and _is_integer(instance) and not bounds[0] <= instance <= bounds[1]:
        yield ValidationError(f"{instance} does not fit in {fmt} ({bounds[0]} to {bounds[1]})")

def compile_schema(schema: dict[str, Any], definitions: dict[str, Any],
                   search: Search = _python_search) -> Check | None:
    """A yes/no validator for ``schema``, or None when it uses unsupported keywords.
    ``search`` compiles patterns (the shipped Kubernetes schemas use Python's ``re``;
    policies, which are untrusted, RE2)."""
    try:
        check = Compiler(definitions, search).schema(schema)
    except (Unsupported, KeyError, TypeError, ValueError):  # re.error is a ValueError
        return None
    if not definitions:
        return check

    def decided(v: Any) -> bool:
        """False also when the value reaches a definition the compiler does not support:
        the caller then asks jsonschema, as for any value not known to be valid."""
        try:
            return check(v)
        except Unsupported:
            return False

    return decided


def _undecided(v: Any) -> bool:
    raise Unsupported("a definition with a keyword this compiler does not know")
