"""A loaded policy: what it matches, what it checks, and the hits it reports."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pmanifest.kube.profile import Profile
from pmanifest.kube.workloads import JOB_SPEC_PATHS, Workload, get
from pmanifest.loader.positions import Path, Positions, dotted
from pmanifest.policy.messages import PROFILE_NAMES, format_message, substitute
from pmanifest.rules import Hit, ObjectContext, Rule, RuleMeta
from pmanifest.schema.regex import extra_keys


@dataclass(frozen=True)
class PolicyTest:
    """A test of a policy: a manifest and the findings expected."""

    name: str
    manifest: str
    findings: tuple[str, ...]
    profile: str | None


@dataclass(frozen=True)
class Match:
    """Which objects and pod templates a policy applies to."""

    kinds: frozenset[str] | None = None
    roles: frozenset[str] | None = None
    placement: str = "any"
    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[tuple[str, str, frozenset[str]], ...] = ()
    namespaces: frozenset[str] | None = None

    @property
    def needs_workload(self) -> bool:
        return self.roles is not None or self.placement != "any"


@dataclass(frozen=True, eq=False)
class Policy:
    """One declarative policy, and its compiled check."""

    meta: RuleMeta
    match: Match
    target: str
    schema: Any
    message: str
    tests: tuple[PolicyTest, ...]
    source: str  # file name, as given
    line: int  # of the policy's first key
    positions: Positions = field(repr=False)
    _compiled: dict[str, tuple[Callable[[Any], bool] | None, Any]] = field(
        default_factory=dict, repr=False)
    _validators: dict[str, Any] = field(default_factory=dict, repr=False)

    def rule(self) -> Rule:
        return Rule(self.meta, self.check, "object", f"{self.source}:{self.line}")

    # --- matching -----------------------------------------------------------------------------

    def matches(self, ctx: ObjectContext) -> bool:
        """Does the object pass the kind, namespace and label filters (and, when the policy
        needs one, does some pod template of it pass the role and placement filters)?"""
        m, doc = self.match, ctx.doc
        if m.kinds is not None and doc.kind not in m.kinds:
            return False
        if m.namespaces is not None and doc.namespace not in m.namespaces:
            return False
        if (m.match_labels or m.match_expressions) and not _selects(m, doc.metadata):
            return False
        needs = m.needs_workload or self.target in ("podSpec", "containers")
        return not needs or any(self.fits(w) for w in ctx.workloads)

    def fits(self, w: Workload) -> bool:
        """Does a pod template pass the role and placement filters?"""
        m = self.match
        if m.roles is not None and w.role not in m.roles:
            return False
        if m.placement == "preemptible":
            return w.placement.preemptible
        return m.placement != "standard" or not w.placement.preemptible

    def targets(self, ctx: ObjectContext) -> Iterator[tuple[Path, Any, str]]:
        """(path from the document root, instance, container name) of each target."""
        doc = ctx.doc
        if self.target == "object":
            yield (), doc.data, ""
        elif self.target == "jobSpec":
            path = JOB_SPEC_PATHS.get(doc.kind or "")
            value = get(doc.data, path) if path is not None else None
            if path is not None and isinstance(value, dict):
                yield path, value, ""
        else:
            for w in (w for w in ctx.workloads if self.fits(w)):
                if self.target == "podSpec":
                    yield w.pod_path, w.pod, ""
                else:
                    yield from ((c.path, c.data, c.name) for c in w.containers())

    # --- checking -----------------------------------------------------------------------------

    def compiled(self, profile: Profile) -> tuple[Callable[[Any], bool] | None, Any]:
        """(fast yes/no check or None, the schema for this profile), built once per profile."""
        found = self._compiled.get(profile.name)
        if found is None:
            schema = substitute(self.schema, profile)
            found = (_fast_check(schema), schema)
            self._compiled[profile.name] = found
        return found

    def validator(self, profile: Profile) -> Any:
        """The jsonschema validator for this profile, built on first need."""
        found = self._validators.get(profile.name)
        if found is None:
            from pmanifest.policy.safety import validator

            found = validator(self.compiled(profile)[1])
            self._validators[profile.name] = found
        return found

    def check(self, ctx: ObjectContext) -> Iterator[Hit]:
        if not self.matches(ctx):
            return
        fast, _ = self.compiled(ctx.profile)
        for path, instance, container in self.targets(ctx):
            if fast is not None and fast(instance):
                continue
            for error in self.validator(ctx.profile).iter_errors(instance):
                yield from self._hits(error, path, container, ctx)

    def _hits(self, error: Any, base: Path, container: str, ctx: ObjectContext) -> Iterator[Hit]:
        keyword = str(error.validator)
        names = {
            "keyword": keyword, "limit": error.validator_value, "error": error.message,
            "kind": ctx.doc.kind or "", "name": ctx.doc.name or "",
            "namespace": ctx.doc.namespace or "", "container": container,
            **{name: get_value(ctx.profile) for name, get_value in PROFILE_NAMES.items()},
        }
        template = _error_message(error.schema, keyword) or self.message
        for path, field_name, value in _failing(error, (*base, *error.absolute_path)):
            values = {**names, "path": dotted(path), "field": field_name, "value": value}
            yield Hit(path, format_message(template, values))


def _failing(error: Any, at: Path) -> Iterator[tuple[Path, Any, Any]]:
    """(where, field name, value) of what a violation is about: each extra key of an
    additionalProperties error, the object missing a required key (with that key's name and
    no value), else the failing value itself."""
    keyword, instance = error.validator, error.instance
    if keyword == "additionalProperties" and isinstance(instance, dict):
        for key in extra_keys(instance, error.schema):
            yield (*at, key), key, instance[key]
    elif keyword == "required" and isinstance(instance, dict):
        missing = [p for p in error.validator_value
                   if p not in instance and error.message.startswith(repr(p))]
        yield at, missing[0] if missing else "", None
    else:
        yield at, at[-1] if at else "", instance


def _selects(m: Match, metadata: dict[str, Any]) -> bool:
    labels = metadata.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    for key, value in m.match_labels.items():
        if labels.get(key) != value:
            return False
    for key, operator, values in m.match_expressions:
        present = key in labels
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator == "In" and (not present or str(labels[key]) not in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
    return True


def _error_message(schema: Any, keyword: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    custom = schema.get("errorMessage")
    if isinstance(custom, dict):
        custom = custom.get(keyword)
    return custom if isinstance(custom, str) else None


# --- a yes/no pre-check: fastschema's compiler plus the keywords policies use -----------------

def _fast_check(schema: Any) -> Callable[[Any], bool] | None:
    from pmanifest.schema.fast import compile_schema
    from pmanifest.schema.regex import search

    return compile_schema(schema, {}, search=search)


