"""Declarative policies: checks written as data (a JSON Schema the target must satisfy).

A policy file holds one or more YAML documents, each a policy::

    id: ACME001                      # user ids must not start with PM (reserved for built-ins)
    slug: gpu-job-priority-class
    severity: error                  # error | warning | info
    summary: ...                     # one line, for `pmanifest rules`
    rationale: ...                   # why, for `pmanifest explain` and SARIF
    fix: ...                         # how
    match:                           # all optional; every given filter must match
      kinds: [Job, CronJob]
      roles: [worker]                # worker | coordinator | serving | daemon
      placement: preemptible         # preemptible (can run there) | standard (cannot) | any
      labelSelector: {matchLabels: {team: ml}, matchExpressions: [{key: tier, operator: In,
                                                                   values: [gpu]}]}
      namespaces: [ml]               # objects without metadata.namespace never match
    target: podSpec                  # object | podSpec | jobSpec | containers (init too)
    schema: {required: [priorityClassName]}
    message: "{path} is {value!r}"   # optional; str.format with the names in MESSAGE_NAMES
    tests:                           # optional; run by `pmanifest policy test`
      - name: missing priority class
        manifest: |
          ...
        findings: ["5:3 gpu-job-priority-class"]   # "line:col slug", in order
        profile: gke                 # optional

Every jsonschema violation is one finding, at the failing field: the error's path (relative to
the target) mapped through the document's position table; a ``required`` error points at the
object missing the key, an ``additionalProperties`` error at each extra key. A subschema may
carry ``errorMessage`` (a template, or a mapping of keyword -> template) that overrides the
policy's ``message`` for violations of that subschema.

Profile placeholders: a string in the schema written ``"{profile.gracePeriodCap}"`` (alone)
becomes the active profile's value with its type (an integer here), and placeholders inside a
longer string are replaced by their text. Known: ``PROFILE_NAMES``. The schema is built and
compiled once per (policy, profile). Validation runs a compiled yes/no check first (most
objects pass), and asks jsonschema for the errors only when it says no.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from pmanifest.document import Path, Positions, dotted
from pmanifest.errors import ConfigError
from pmanifest.loader import Broken, YamlProblem, decode, load_documents
from pmanifest.policy_schema import extra_keys
from pmanifest.profile import DEFAULT_PROFILE, Profile, get_profile
from pmanifest.rules import (
    RULE_ID,
    SEVERITIES,
    SLUG,
    Hit,
    ObjectContext,
    Rule,
    RuleMeta,
)
from pmanifest.workloads import JOB_SPEC_PATHS, ROLES, Workload, get

RESERVED_PREFIX = "PM"
TARGETS = ("object", "podSpec", "jobSpec", "containers")
PLACEMENTS = ("preemptible", "standard", "any")
POLICY_SUFFIXES = (".yaml", ".yml")
BUILTIN_GLOB = "builtin-*.yaml"
PROFILE_NAMES: dict[str, Callable[[Profile], Any]] = {
    "profile.name": lambda p: p.name,
    "profile.labelKey": lambda p: p.label_key,
    "profile.labelValue": lambda p: p.label_value,
    "profile.gracePeriodCap": lambda p: p.grace_period_cap,
    "profile.drainWindowSeconds": lambda p: p.drain_window_seconds,
}
MESSAGE_NAMES = (
    "path",       # dotted path of the failing field from the document root
    "field",      # its key (for required / additionalProperties: the missing / extra key)
    "value",      # the failing value (None for a missing key)
    "limit",      # the schema keyword's value (the maximum, the enum, the pattern, ...)
    "keyword",    # the schema keyword that failed (maximum, required, ...)
    "error",      # jsonschema's own message
    "kind", "name", "namespace",  # of the object
    "container",  # the container's name (target: containers), else ""
    *PROFILE_NAMES,
)
DEFAULT_MESSAGE = "{path}: {error}"
_PLACEHOLDER = re.compile(r"\{(profile\.[A-Za-z]+)\}")

_TEXT = {"type": "string", "minLength": 1}
_NAMES = {"type": "array", "items": _TEXT, "minItems": 1, "uniqueItems": True}
META_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "pmanifest policy",
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "slug", "severity", "summary", "rationale", "fix", "target", "schema"],
    "properties": {
        "id": {"type": "string", "pattern": RULE_ID.pattern},
        "slug": {"type": "string", "pattern": SLUG.pattern},
        "severity": {"enum": list(SEVERITIES)},
        "summary": _TEXT,
        "rationale": _TEXT,
        "fix": _TEXT,
        "match": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "kinds": _NAMES,
                "roles": {"type": "array", "items": {"enum": [*ROLES, "daemon"]},
                          "minItems": 1, "uniqueItems": True},
                "placement": {"enum": list(PLACEMENTS)},
                "labelSelector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "matchLabels": {"type": "object",
                                        "additionalProperties": {"type": "string"}},
                        "matchExpressions": {"type": "array", "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["key", "operator"],
                            "properties": {
                                "key": _TEXT,
                                "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                                "values": {"type": "array", "items": {"type": "string"}},
                            },
                        }},
                    },
                },
                "namespaces": _NAMES,
            },
        },
        "target": {"enum": list(TARGETS)},
        "schema": {"type": ["object", "boolean"]},
        "message": _TEXT,
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "manifest", "findings"],
            "properties": {
                "name": _TEXT,
                "manifest": _TEXT,
                "findings": {"type": "array",
                             "items": {"type": "string", "pattern": r"^[0-9]+:[0-9]+ \S+$"}},
                "profile": _TEXT,
            },
        }},
    },
}


# --- the model ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolicyTest:
    name: str
    manifest: str
    findings: tuple[str, ...]
    profile: str | None


@dataclass(frozen=True)
class Match:
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
        return Rule(self.meta, None, object_check=self.check, source=f"{self.source}:{self.line}")

    # --- matching -----------------------------------------------------------------------------

    def matches(self, ctx: ObjectContext) -> bool:
        m, doc, w = self.match, ctx.doc, ctx.workload
        if m.kinds is not None and doc.kind not in m.kinds:
            return False
        if (m.needs_workload or self.target in ("podSpec", "containers")) and w is None:
            return False
        if w is not None:
            if m.roles is not None and w.role not in m.roles:
                return False
            if m.placement == "preemptible" and not w.placement.preemptible:
                return False
            if m.placement == "standard" and w.placement.preemptible:
                return False
        if m.namespaces is not None and doc.namespace not in m.namespaces:
            return False
        return not (m.match_labels or m.match_expressions) or _selects(m, doc.metadata)

    def targets(self, ctx: ObjectContext) -> Iterator[tuple[Path, Any, str]]:
        """(path from the document root, instance, container name) of each target."""
        doc, w = ctx.doc, ctx.workload
        if self.target == "object":
            yield (), doc.data, ""
        elif self.target == "jobSpec":
            path = JOB_SPEC_PATHS.get(doc.kind or "")
            value = get(doc.data, path) if path is not None else None
            if path is not None and isinstance(value, dict):
                yield path, value, ""
        elif isinstance(w, Workload):
            if self.target == "podSpec":
                yield w.pod_path, w.pod, ""
            else:
                for c in w.containers():
                    yield c.path, c.data, c.name

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
            from pmanifest.policy_schema import validator

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
        rel: Path = tuple(error.absolute_path)
        keyword = str(error.validator)
        names = {
            "keyword": keyword, "limit": error.validator_value, "error": error.message,
            "kind": ctx.doc.kind or "", "name": ctx.doc.name or "",
            "namespace": ctx.doc.namespace or "", "container": container,
            **{name: get_value(ctx.profile) for name, get_value in PROFILE_NAMES.items()},
        }
        template = _error_message(error.schema, keyword) or self.message
        failing: list[tuple[Path, Any]] = []
        if keyword == "additionalProperties" and isinstance(error.instance, dict):
            extra = extra_keys(error.instance, error.schema)
            failing = [((*base, *rel, key), error.instance[key]) for key in extra]
        elif keyword == "required" and isinstance(error.instance, dict):
            missing = [p for p in error.validator_value
                       if p not in error.instance and error.message.startswith(repr(p))]
            names["field"] = missing[0] if missing else ""
            path = (*base, *rel)
            yield Hit(path, format_message(template, {**names, "path": dotted(path),
                                                      "value": None}))
            return
        else:
            failing = [((*base, *rel), error.instance)]
        for path, value in failing:
            names["field"] = path[-1] if path else ""
            yield Hit(path, format_message(template, {**names, "path": dotted(path),
                                                      "value": value}))


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


# --- templates and placeholders --------------------------------------------------------------

MAX_FIELD_TEXT = 1000  # characters of one substituted value (a 20 MB string stays short)
MAX_WIDTH = 200  # the widest format spec a message may ask for
# what a format spec may say: [[fill]align][width][.precision][s], applied to text
_SPEC = re.compile(r"^(?:.?[<>^])?(?P<width>[0-9]*)(?:\.(?P<precision>[0-9]+))?s?$", re.S)


class _Formatter(string.Formatter):
    """str.format over a fixed, flat set of names: ``{profile.name}`` is one name, never an
    attribute lookup, and no index or attribute access reaches any object. Every value is
    formatted as text (cut at MAX_FIELD_TEXT characters), so a spec that template_problem
    accepted works for any value."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        return kwargs[field_name], field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        text = value if isinstance(value, str) else str(value)
        if len(text) > MAX_FIELD_TEXT:
            text = text[:MAX_FIELD_TEXT - 3] + "..."
        return format(text, format_spec)


def spec_problem(spec: str) -> str | None:
    """Why a format spec cannot be used in a message, or None."""
    match = _SPEC.match(spec)
    if match is None:
        return (f"format spec {spec!r} is not supported: values are formatted as text, so "
                "use [[fill]align][width][.precision], e.g. {value:>10} or {value:.40}")
    if int(match.group("width") or 0) > MAX_WIDTH:
        return f"format spec {spec!r}: the width can be at most {MAX_WIDTH}"
    return None


_FORMATTER = _Formatter()


def format_message(template: str, names: Mapping[str, Any]) -> str:
    return _FORMATTER.vformat(template, (), dict(names))


def template_problem(template: str) -> str | None:
    """Why ``template`` cannot be used as a message, or None."""
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        return f"message template {template!r}: {exc}"
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in MESSAGE_NAMES:
            known = ", ".join(MESSAGE_NAMES)
            return f"message template {template!r} names {{{name}}}; known names: {known}"
        if spec and "{" in spec:
            return f"message template {template!r}: nested fields are not supported"
        problem = spec_problem(spec) if spec else None
        if problem:
            return f"message template {template!r}: {problem}"
        if conversion not in (None, "r", "s", "a"):
            return f"message template {template!r}: unknown conversion !{conversion}"
    return None


def substitute(schema: Any, profile: Profile) -> Any:
    """``schema`` with the profile placeholders replaced (see the module docstring)."""
    if isinstance(schema, dict):
        return {k: substitute(v, profile) for k, v in schema.items()}
    if isinstance(schema, list):
        return [substitute(v, profile) for v in schema]
    if isinstance(schema, str) and "{profile." in schema:
        whole = _PLACEHOLDER.fullmatch(schema)
        if whole is not None:
            return PROFILE_NAMES[whole.group(1)](profile)
        return _PLACEHOLDER.sub(lambda m: str(PROFILE_NAMES[m.group(1)](profile)), schema)
    return schema


def _placeholder_problems(schema: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "errorMessage":
                for text in (value.values() if isinstance(value, dict) else [value]):
                    problem = template_problem(text) if isinstance(text, str) else None
                    if problem:
                        yield (*path, key), problem
                continue
            yield from _placeholder_problems(value, (*path, key))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _placeholder_problems(value, (*path, i))
    elif isinstance(schema, str):
        for name in _PLACEHOLDER.findall(schema):
            if name not in PROFILE_NAMES:
                yield path, (f"unknown placeholder {{{name}}}; known: "
                             + ", ".join("{" + n + "}" for n in PROFILE_NAMES))


# --- a yes/no pre-check: fastschema's compiler plus the keywords policies use -----------------

def _fast_check(schema: Any) -> Callable[[Any], bool] | None:
    from pmanifest.fastschema import compile_schema
    from pmanifest.policy_schema import search

    return compile_schema(schema, {}, search=search)


# --- loading -----------------------------------------------------------------------------------

def load_policy_text(text: str, source: str, *, builtin: bool = False,
                     strict: bool = True) -> list[Policy]:
    """The policies of one file. ``strict`` validates with the meta-schema and checks each
    schema (needs jsonschema); without it (the shipped policies, validated by the test
    suite) only what is cheap is checked. Raises ConfigError naming the file and line."""
    policies = []
    for item in load_documents(text):
        if isinstance(item, Broken):
            raise ConfigError(f"invalid YAML: {item.problem.message}", source,
                              item.problem.line, item.problem.column)
        policies.append(_policy(item.data, item.positions, source, builtin, strict))
    return policies


def _policy(data: Any, positions: Positions, source: str, builtin: bool,
            strict: bool) -> Policy:
    def fail(message: str, path: Path, *, value: bool = False) -> ConfigError:
        pos = positions.value_at(path) if value else positions.at(path)
        return ConfigError(message, source, pos.line, pos.column)

    if not isinstance(data, dict):
        raise fail("a policy must be a mapping (id, slug, severity, ..., schema)", (),
                   value=True)
    if strict:
        _check_meta_schema(data, fail)
    elif not all(k in data for k in META_SCHEMA["required"]):
        raise fail(f"a policy needs {', '.join(META_SCHEMA['required'])}", ())
    if not builtin and str(data["id"]).upper().startswith(RESERVED_PREFIX):
        raise fail(f"policy id {data['id']!r}: ids starting with {RESERVED_PREFIX} are "
                   "reserved for pmanifest's own rules; use your own prefix (e.g. ACME001)",
                   ("id",), value=True)
    message = data.get("message", DEFAULT_MESSAGE)
    problem = template_problem(message)
    if problem:
        raise fail(problem, ("message",), value=True)
    for path, problem in _placeholder_problems(data["schema"]):
        raise fail(problem, ("schema", *path), value=True)
    if strict:
        _check_json_schema(data["schema"], fail)
    tests = tuple(PolicyTest(t["name"], t["manifest"], tuple(t["findings"]), t.get("profile"))
                  for t in data.get("tests", []))
    for i, t in enumerate(tests):
        if t.profile is not None:
            try:
                get_profile(t.profile)
            except ConfigError as exc:
                raise fail(exc.message, ("tests", i, "profile"), value=True) from None
    fail_example = next((t.manifest for t in tests if t.findings), "")
    pass_example = next((t.manifest for t in tests if not t.findings), "")
    meta = RuleMeta(str(data["id"]), str(data["slug"]), str(data["severity"]),
                    " ".join(str(data["summary"]).split()), str(data["rationale"]).strip(),
                    str(data["fix"]).strip(), fail_example, pass_example)
    return Policy(meta, _match(data.get("match", {})), str(data["target"]), data["schema"],
                  message, tests, source, positions.at(()).line, positions)


def _match(raw: dict[str, Any]) -> Match:
    selector = raw.get("labelSelector", {})
    expressions = tuple((e["key"], e["operator"], frozenset(e.get("values", [])))
                        for e in selector.get("matchExpressions", []))
    return Match(
        kinds=frozenset(raw["kinds"]) if "kinds" in raw else None,
        roles=frozenset(raw["roles"]) if "roles" in raw else None,
        placement=raw.get("placement", "any"),
        match_labels=dict(selector.get("matchLabels", {})),
        match_expressions=expressions,
        namespaces=frozenset(raw["namespaces"]) if "namespaces" in raw else None,
    )


def _check_meta_schema(data: dict[str, Any], fail: Callable[..., ConfigError]) -> None:
    import difflib

    for error in _meta_validator().iter_errors(data):
        path: Path = tuple(error.absolute_path)
        where = dotted(path) or "the policy"
        if error.validator == "additionalProperties":
            allowed = sorted(error.schema.get("properties", {}))
            for key in error.instance:
                if key not in allowed:
                    close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
                    hint = (f"did you mean {close[0]!r}?" if close
                            else f"allowed: {', '.join(allowed)}")
                    raise fail(f"unknown key {key!r} in {where}; {hint}", (*path, key))
        if error.validator == "required":
            raise fail(f"{where}: {error.message}", path)
        if error.validator == "pattern" and path == ("id",):
            raise fail(f"policy id {error.instance!r} is malformed; use capital letters and "
                       "digits ending in three digits, e.g. ACME001", path, value=True)
        if error.validator == "pattern" and path == ("slug",):
            raise fail(f"policy slug {error.instance!r} is malformed; use lowercase words "
                       "joined by '-', e.g. gpu-job-priority-class", path, value=True)
        raise fail(f"{where}: {error.message}", path, value=True)


def _check_json_schema(schema: Any, fail: Callable[..., ConfigError]) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from pmanifest.policy_schema import problems

    # check the schema as compiled for the default profile: placeholders become values
    compiled = substitute(schema, get_profile(DEFAULT_PROFILE))
    for where, problem in problems(compiled):
        is_key = len(where) >= 2 and where[-2] == "patternProperties"
        raise fail(problem, ("schema", *where), value=not is_key)
    try:
        Draft202012Validator.check_schema(compiled)
    except SchemaError as exc:
        path: Path = ("schema", *exc.absolute_path)
        raise fail(f"schema is not a valid JSON Schema (draft 2020-12): {exc.message}", path,
                   value=True) from None


@functools.cache
def _meta_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(META_SCHEMA)


def policy_files(directory: str | FsPath) -> list[FsPath]:
    """The policy files of a directory (``*.yaml``, ``*.yml``; not recursive), sorted."""
    path = FsPath(directory)
    if not path.is_dir():
        raise ConfigError("policy directory not found; give a directory of *.yaml policy "
                          "files", str(directory))
    files = sorted(p for p in path.iterdir() if p.suffix in POLICY_SUFFIXES and p.is_file())
    if not files:
        raise ConfigError("no policy files (*.yaml, *.yml) in this directory", str(directory))
    return files


def load_policy_dirs(directories: list[str] | tuple[str, ...]) -> list[Policy]:
    """Every policy of the given user directories, validated, with ids and slugs unique
    among them and against every registered rule. A directory given twice is read once."""
    if not directories:
        return []
    from pmanifest.rules import registry

    taken = {name: rule.source for rule in registry().values()
             for name in (rule.meta.id, rule.meta.slug)}
    policies: list[Policy] = []
    seen: set[FsPath] = set()
    for directory in directories:
        resolved = FsPath(directory).resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        for path in policy_files(directory):
            try:
                text = decode(path.read_bytes())
            except OSError as exc:
                raise ConfigError(f"cannot read policy file: {exc.strerror}", str(path)) from None
            except YamlProblem as problem:
                raise ConfigError(problem.message, str(path), problem.line,
                                  problem.column) from None
            for policy in load_policy_text(text, str(path)):
                _refuse_duplicate(policy, taken)
                policies.append(policy)
    return policies


def _refuse_duplicate(policy: Policy, taken: dict[str, str]) -> None:
    for key, name in (("id", policy.meta.id), ("slug", policy.meta.slug)):
        if name in taken:
            pos = policy.positions.value_at((key,))
            raise ConfigError(f"policy {key} {name!r} is already defined by {taken[name]}; "
                              f"give it another {key}", policy.source, pos.line, pos.column)
    for name in (policy.meta.id, policy.meta.slug):
        taken[name] = f"{policy.source}:{policy.line}"


def builtin_policy_sources() -> list[tuple[str, str]]:
    """(name, text) of every shipped ``policies/builtin-*.yaml``."""
    import fnmatch
    import importlib.resources

    folder = importlib.resources.files("pmanifest.policies")
    return [(f"policies/{entry.name}", entry.read_text(encoding="utf-8"))
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if fnmatch.fnmatch(entry.name, BUILTIN_GLOB)]


@functools.cache
def builtin_policies() -> tuple[Policy, ...]:
    return tuple(policy for name, text in builtin_policy_sources()
                 for policy in load_policy_text(text, name, builtin=True, strict=False))


def builtin_policy_rules() -> list[Rule]:
    return [policy.rule() for policy in builtin_policies()]


# --- policy tests ------------------------------------------------------------------------------

def policy_test_findings(policy: Policy, test: PolicyTest) -> list[str]:
    """``line:col slug`` of the policy's own findings on the test's manifest (the policy
    must be registered)."""
    from pmanifest.lint import LintOptions, lint_bytes
    from pmanifest.rules import registry

    off = {rule_id: "off" for rule_id in registry() if rule_id != policy.meta.id}
    options = LintOptions(profile_name=test.profile or DEFAULT_PROFILE, severities=off)
    findings = lint_bytes(test.manifest.encode("utf-8"), "test.yaml", options)
    return [f"{f.line}:{f.column} {f.slug}" for f in findings if f.rule == policy.meta.id]


def run_policy_tests(directories: tuple[str, ...]) -> tuple[list[str], bool]:
    """Run the ``tests:`` of every policy in ``directories`` (default: the built-in ones).
    Returns (report lines, whether any test failed); invalid policy files: ConfigError."""
    from pmanifest.rules import registered

    policies = load_policy_dirs(directories) if directories else list(builtin_policies())
    lines: list[str] = []
    passed = failed = 0
    # built-in policies are registered already; user ones join the registry for the run
    with registered(p.rule() for p in policies if directories):
        for policy in policies:
            if not policy.tests:
                lines.append(f"SKIP {policy.meta.id}: no tests ({policy.source})")
            for test in policy.tests:
                got = policy_test_findings(policy, test)
                if got == list(test.findings):
                    passed += 1
                    lines.append(f"PASS {policy.meta.id}: {test.name}")
                    continue
                failed += 1
                lines.append(f"FAIL {policy.meta.id}: {test.name} ({policy.source})")
                lines.append(f"    expected: {list(test.findings)}")
                lines.append(f"    got:      {got}")
    lines.append(f"{passed} passed, {failed} failed")
    return lines, failed > 0
