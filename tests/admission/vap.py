"""What the API server does with a ValidatingAdmissionPolicy and one admitted object, for the
tests: match the resource, evaluate the match conditions, the variables (in order) and the
validations with a real CEL implementation (``common-expression-language``: cel-rust, which
like Kubernetes' cel-go errors on a field read below an absent one). No API server can run
here, so this is the part of admission the policies are made of, evaluated as written.

An evaluation error fails the test instead of falling back on the failure policy: the
policies must decide every object the corpus holds.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import cel
import celpy
from celpy import celtypes

from pmanifest.admission.kinds import covered

_PYTHON = celpy.Environment()


class Verdict(NamedTuple):
    """What one policy did with one object."""

    matched: bool  # its resource rules match the object
    skipped_by: str | None  # the match condition that turned it away, if any
    denied: bool
    message: str | None = None


@functools.cache
def program(expression: str) -> Any:
    return cel.compile(expression)


@functools.cache
def python_program(expression: str) -> Any:
    """The expression compiled by cel-python (pure Python, RE2 for ``matches``)."""
    return _PYTHON.program(_PYTHON.compile(expression))


class _Python:
    """cel-python behind the interface of cel-rust's programs."""

    def __init__(self, expression: str) -> None:
        self.program = python_program(expression)

    def execute(self, context: dict[str, Any]) -> Any:
        activation: dict[str, Any] = {"object": celpy.json_to_cel(context["object"])}
        if "variables" in context:
            activation["variables"] = celtypes.MapType(
                {celtypes.StringType(k): v for k, v in context["variables"].items()})
        result = self.program.evaluate(activation)
        if isinstance(result, celtypes.BoolType):
            return bool(result)
        if isinstance(result, celtypes.StringType):
            return str(result)
        return result


def resource_of(obj: dict[str, Any]) -> tuple[str, str] | None:
    """(API group, resource) of an object of a kind the policies know, else None."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    group = api_version.rpartition("/")[0]
    for cov in covered():
        if cov.kind.kind == obj.get("kind") and cov.api_group == group:
            return group, cov.resource
    return None


def matches(policy: dict[str, Any], obj: dict[str, Any]) -> bool:
    found = resource_of(obj)
    if found is None:
        return False
    group, resource = found
    return any(group in rule["apiGroups"] and resource in rule["resources"]
               and "CREATE" in rule["operations"]
               for rule in policy["spec"]["matchConstraints"]["resourceRules"])


def evaluate(policy: dict[str, Any], obj: dict[str, Any], python: bool = False) -> Verdict:
    """Admission of ``obj`` (a CREATE) through ``policy``; ``python``: with cel-python
    instead of cel-rust."""
    compiled = _Python if python else program
    if not matches(policy, obj):
        return Verdict(False, None, False)
    spec = policy["spec"]
    context: dict[str, Any] = {"object": obj}
    for condition in spec.get("matchConditions", ()):
        if compiled(condition["expression"]).execute(context) is not True:
            return Verdict(True, condition["name"], False)
    variables: dict[str, Any] = {}
    context["variables"] = variables
    for variable in spec.get("variables", ()):
        variables[variable["name"]] = compiled(variable["expression"]).execute(context)
    for validation in spec["validations"]:
        passed = compiled(validation["expression"]).execute(context)
        assert isinstance(passed, bool), validation["expression"][:200]
        if not passed:
            message = compiled(validation["messageExpression"]).execute(context)
            assert isinstance(message, str) and message
            return Verdict(True, None, True, message)
    return Verdict(True, None, False)
