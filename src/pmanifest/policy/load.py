"""Loading policy files: the meta-schema, the checks a policy must pass before it can run,
and the directories of user policies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from pmanifest.catalogue import DESCRIPTION, RuleMeta
from pmanifest.errors import ConfigError
from pmanifest.kube.contract import DAEMON_ROLE, ROLES
from pmanifest.kube.profile import DEFAULT_PROFILE, get_profile
from pmanifest.loader.documents import Broken, load_documents
from pmanifest.loader.positions import Path, Positions
from pmanifest.policy.messages import (
    DEFAULT_MESSAGE,
    placeholder_problems,
    substitute,
    template_problem,
)
from pmanifest.policy.model import Match, Policy, PolicyTest
from pmanifest.schema.datafile import first_violation
from pmanifest.schema.words import Words

RESERVED_PREFIX = "PM"
TARGETS = ("object", "podSpec", "jobSpec", "containers")
PLACEMENTS = ("preemptible", "standard", "any")
POLICY_SUFFIXES = (".yaml", ".yml")
_TEXT = {"type": "string", "minLength": 1}
_NAMES = {"type": "array", "items": _TEXT, "minItems": 1, "uniqueItems": True}
META_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "pmanifest policy",
    "type": "object",
    "additionalProperties": False,
    "required": [*DESCRIPTION, "target", "schema"],
    "properties": {
        **DESCRIPTION,
        "match": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "kinds": _NAMES,
                "roles": {"type": "array", "items": {"enum": [*ROLES, DAEMON_ROLE]},
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



# --- loading -----------------------------------------------------------------------------------

def load_policy_text(text: str, source: str) -> list[Policy]:
    """The policies of one file, each validated (meta-schema, message template, placeholders,
    its JSON Schema). Raises ConfigError naming the file and line."""
    policies = []
    for item in load_documents(text):
        if isinstance(item, Broken):
            raise ConfigError(f"invalid YAML: {item.problem.message}", source,
                              item.problem.line, item.problem.column)
        policies.append(_policy(item.data, item.positions, source))
    return policies


def _policy(data: Any, positions: Positions, source: str) -> Policy:
    def fail(message: str, path: Path, *, value: bool = False) -> ConfigError:
        pos = positions.value_at(path) if value else positions.at(path)
        return ConfigError(message, source, pos.line, pos.column)

    found = first_violation(data, positions, META_SCHEMA, _WORDS)
    if found is not None:
        raise ConfigError(found[0], source, found[1], found[2])
    if str(data["id"]).upper().startswith(RESERVED_PREFIX):
        raise fail(f"policy id {data['id']!r}: ids starting with {RESERVED_PREFIX} are "
                   "reserved for pmanifest's own rules; use your own prefix (e.g. ACME001)",
                   ("id",), value=True)
    message = data.get("message", DEFAULT_MESSAGE)
    problem = template_problem(message)
    if problem:
        raise fail(problem, ("message",), value=True)
    for path, problem in placeholder_problems(data["schema"]):
        raise fail(problem, ("schema", *path), value=True)
    _check_json_schema(data["schema"], fail)
    tests = _tests(data.get("tests", []), fail)
    fail_example = next((t.manifest for t in tests if t.findings), "")
    pass_example = next((t.manifest for t in tests if not t.findings), "")
    meta = RuleMeta(str(data["id"]), str(data["slug"]), str(data["severity"]),
                    " ".join(str(data["summary"]).split()), str(data["rationale"]).strip(),
                    str(data["fix"]).strip(), fail_example, pass_example,
                    tuple(data.get("match", {}).get("kinds", ())),
                    f"{source}:{positions.at(()).line}")
    return Policy(meta, _match(data.get("match", {})), str(data["target"]), data["schema"],
                  message, tests, source, positions.at(()).line, positions)


def _tests(raw: list[dict[str, Any]], fail: Callable[..., ConfigError]) -> tuple[PolicyTest, ...]:
    tests = tuple(PolicyTest(t["name"], t["manifest"], tuple(t["findings"]), t.get("profile"))
                  for t in raw)
    for i, t in enumerate(tests):
        if t.profile is not None:
            try:
                get_profile(t.profile)
            except ConfigError as exc:
                raise fail(exc.message, ("tests", i, "profile"), value=True) from None
    return tests


def _malformed(path: Path, key: str, value: Any) -> str | None:
    if path == ("id",):
        return (f"policy id {value!r} is malformed; use capital letters and digits ending in "
                "three digits, e.g. ACME001")
    if path == ("slug",):
        return (f"policy slug {value!r} is malformed; use lowercase words joined by '-', e.g. "
                "gpu-job-priority-class")
    return None


_WORDS = Words(root="the policy", value_message=_malformed)


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


def _check_json_schema(schema: Any, fail: Callable[..., ConfigError]) -> None:
    """The schema as compiled for every built-in profile (placeholders become that profile's
    values) passes the safety checks and is a valid JSON Schema; a problem that only one
    profile's values bring names that profile."""
    from pmanifest.kube.profile import profile_names

    checked: list[Any] = []
    for name in [DEFAULT_PROFILE, *(n for n in profile_names() if n != DEFAULT_PROFILE)]:
        compiled = substitute(schema, get_profile(name))
        if compiled in checked:
            continue
        checked.append(compiled)
        _check_compiled(compiled, fail, "" if name == DEFAULT_PROFILE else
                        f" (with profile {name})")


def _check_compiled(compiled: Any, fail: Callable[..., ConfigError], under: str) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from pmanifest.policy.safety import problems

    for where, problem in problems(compiled):
        is_key = len(where) >= 2 and where[-2] == "patternProperties"
        raise fail(problem + under, ("schema", *where), value=not is_key)
    try:
        Draft202012Validator.check_schema(compiled)
    except SchemaError as exc:
        path: Path = ("schema", *exc.absolute_path)
        raise fail(f"schema is not a valid JSON Schema (draft 2020-12){under}: {exc.message}",
                   path, value=True) from None


def policy_files(directory: str | FsPath) -> list[FsPath]:
    """The policy files of a directory (``*.yaml``, ``*.yml``; not recursive), sorted."""
    path = FsPath(directory)
    if not path.is_dir():
        raise ConfigError("policy directory not found; give a directory of *.yaml policy "
                          "files", str(directory))
    # every entry named like a policy, whatever it is: one that is no file (a dangling link, a
    # FIFO, a directory) is refused by name when it is read, never skipped without a word
    files = sorted(p for p in path.iterdir() if p.suffix in POLICY_SUFFIXES)
    if not files:
        raise ConfigError("no policy files (*.yaml, *.yml) in this directory", str(directory))
    return files


def read_policy_file(path: FsPath) -> str:
    """The text of a policy file, through the one reader (a regular file, bounded)."""
    from pmanifest.io.reading import NotText, Unreadable, decode, read_limited

    try:
        return decode(read_limited(str(path), regular_only=True)[0])
    except Unreadable as exc:
        raise ConfigError(f"cannot read policy file: {exc.reason}", str(path)) from None
    except OSError as exc:  # a directory
        raise ConfigError(f"cannot read policy file: {exc.strerror or exc}", str(path)) from None
    except NotText as exc:
        raise ConfigError(exc.message, str(path), exc.line, exc.column) from None


def load_policy_dirs(directories: list[str] | tuple[str, ...]) -> list[Policy]:
    """Every policy of the given user directories, validated, with ids and slugs unique
    among them and against every registered rule. A directory given twice is read once."""
    if not directories:
        return []
    from pmanifest.rules import registry

    taken = {name: rule.source for rule in registry().values()  # plugins too
             for name in (rule.meta.id, rule.meta.slug)}
    policies: list[Policy] = []
    seen: set[FsPath] = set()
    for directory in directories:
        resolved = FsPath(directory).resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        for path in policy_files(directory):
            for policy in load_policy_text(read_policy_file(path), str(path)):
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
