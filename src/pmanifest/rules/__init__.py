"""The rule registry: metadata (from ``policies/rules-*.yaml``) joined with check functions.

A rule module registers its check with ``@rule("PM201")``. Metadata (slug, severity, summary,
rationale, fix hint, examples) lives as data beside the other policies, so ``explain``, the
reporters and the docs share one source. The registry refuses duplicate ids, ids without
metadata and malformed metadata loudly instead of silently shadowing.

Rules that are not built into the package join the same registry at run time through
``register(Rule(...))``, with the same checks on ids, slugs and metadata: the declarative
policies of ``policies/builtin-*.yaml`` and of user policy directories (``pmanifest.policy``)
and Python rules of third-party packages, loaded from the entry-point group
``pmanifest.rules`` (each entry point a module that registers on import, or a callable
called with no arguments). ``registered(rules)`` scopes user policies to one lint run.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.resources
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from pmanifest.document import Document, Path, Pos
from pmanifest.errors import ConfigError
from pmanifest.profile import Profile
from pmanifest.workloads import Workload

SEVERITIES = ("error", "warning", "info")
RULE_ID = re.compile(r"^[A-Z][A-Z0-9]*[0-9]{3}$")
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
BUILTIN_MODULES = ("placement", "checkpoint", "jobs")
PLUGIN_GROUP = "pmanifest.rules"


@dataclass(frozen=True)
class Hit:
    """What a check returns: where (a path from the document root, or an exact position
    inside a scalar) and what is wrong."""

    path: Path
    message: str
    pos: Pos | None = None


@dataclass(frozen=True)
class Context:
    workload: Workload
    profile: Profile


@dataclass(frozen=True)
class ObjectContext:
    """What an object check sees: any Kubernetes object (not only those with a pod template),
    its workload view when it has one, and the active profile."""

    doc: Document
    workload: Workload | None
    profile: Profile


Check = Callable[[Context], Iterable[Hit]]
ObjectCheck = Callable[[ObjectContext], Iterable[Hit]]


@dataclass(frozen=True)
class RuleMeta:
    id: str
    slug: str
    severity: str
    summary: str
    rationale: str
    fix: str
    example_fail: str
    example_pass: str


@dataclass(frozen=True)
class Rule:
    meta: RuleMeta
    check: Check | None  # None for rules the engine applies itself (PM001, PM002)
    object_check: ObjectCheck | None = None  # run on every object (declarative policies)
    source: str = "pmanifest"  # where it is defined: a policy file, a plugin, the package


class RegistryError(Exception):
    """A rule definition is broken: a programming error, surfaced at import time."""


_CHECKS: dict[str, Check] = {}
ENGINE_RULES = ("PM001", "PM002")


def rule(rule_id: str) -> Callable[[Check], Check]:
    """Register ``check`` as the implementation of ``rule_id``."""

    def register(check: Check) -> Check:
        if not RULE_ID.match(rule_id):
            raise RegistryError(f"malformed rule id {rule_id!r}")
        if rule_id in _CHECKS or rule_id in ENGINE_RULES:
            raise RegistryError(f"rule {rule_id} is registered twice")
        _CHECKS[rule_id] = check
        return check

    return register


def _parse_meta(entry: Any, source: str) -> RuleMeta:
    if not isinstance(entry, dict):
        raise RegistryError(f"{source}: each rule entry must be a mapping")
    fields = ("id", "slug", "severity", "summary", "rationale", "fix", "examples")
    missing = [f for f in fields if f not in entry]
    extra = [k for k in entry if k not in fields]
    if missing or extra:
        raise RegistryError(f"{source}: rule {entry.get('id')}: missing {missing}, unknown {extra}")
    examples = entry["examples"]
    if not isinstance(examples, dict) or set(examples) != {"fail", "pass"}:
        raise RegistryError(f"{source}: rule {entry['id']}: examples need 'fail' and 'pass'")
    meta = RuleMeta(
        entry["id"], entry["slug"], entry["severity"], entry["summary"].strip(),
        entry["rationale"].strip(), entry["fix"].strip(), examples["fail"], examples["pass"],
    )
    check_meta(meta, source)
    return meta


def check_meta(meta: RuleMeta, source: str) -> None:
    """Refuse a malformed id, slug or severity (RegistryError naming ``source``)."""
    if not RULE_ID.match(meta.id) or not SLUG.match(meta.slug):
        raise RegistryError(f"{source}: malformed id or slug: {meta.id} {meta.slug}")
    if meta.severity not in SEVERITIES:
        raise RegistryError(f"{source}: rule {meta.id}: severity must be one of {SEVERITIES}")


def _add(rules: dict[str, Rule], new: Rule) -> None:
    """Add ``new`` to ``rules``, refusing an id or slug that is already taken."""
    for other in rules.values():
        if new.meta.id in (other.meta.id, other.meta.slug) or \
                new.meta.slug in (other.meta.id, other.meta.slug):
            raise RegistryError(f"{new.source}: duplicate rule {new.meta.id} / {new.meta.slug} "
                                f"(already defined by {other.source})")
    rules[new.meta.id] = new


@functools.cache
def _builtin_rules() -> dict[str, Rule]:
    """The rules shipped in the package: Python checks with their ``rules-*.yaml`` metadata,
    and the declarative policies of ``policies/builtin-*.yaml``."""
    for name in BUILTIN_MODULES:
        importlib.import_module(f"pmanifest.rules.{name}")
    rules: dict[str, Rule] = {}
    for source, entry in _metadata_entries():
        meta = _parse_meta(entry, source)
        check = _CHECKS.get(meta.id)
        if check is None and meta.id not in ENGINE_RULES:
            raise RegistryError(f"{source}: rule {meta.id} has metadata but no check")
        _add(rules, Rule(meta, check, source=source))
    orphans = set(_CHECKS) - set(rules)
    if orphans:
        raise RegistryError(f"checks without metadata in policies/rules-*.yaml: {sorted(orphans)}")
    from pmanifest.policy import builtin_policy_rules

    for policy_rule in builtin_policy_rules():
        _add(rules, policy_rule)
    return rules


_RUNTIME: dict[str, Rule] = {}  # registered at run time: plugins, user policies
_LOADED_PLUGINS: set[str] = set()


def register(new: Rule) -> Rule:
    """Add a rule at run time (a plugin's Python rule, a user policy), with the checks the
    built-in rules get: well-formed id, slug and severity, a check, no duplicate id or slug
    (against every registered rule). Raises RegistryError."""
    check_meta(new.meta, new.source)
    if (new.check is None) == (new.object_check is None):
        raise RegistryError(f"{new.source}: rule {new.meta.id} needs exactly one of check "
                            "and object_check")
    rules = {**_builtin_rules(), **_RUNTIME}
    _add(rules, new)
    _RUNTIME[new.meta.id] = new
    registry.cache_clear()
    return new


def unregister(rule_id: str) -> None:
    """Remove a rule added with ``register`` (no-op for unknown or built-in ids)."""
    if _RUNTIME.pop(rule_id, None) is not None:
        registry.cache_clear()


@contextlib.contextmanager
def registered(rules: Iterable[Rule]) -> Iterator[None]:
    """Register ``rules`` for the duration of a block (one lint run), all or none."""
    added: list[str] = []
    try:
        for new in rules:
            register(new)
            added.append(new.meta.id)
        yield
    finally:
        for rule_id in added:
            unregister(rule_id)


def load_plugins() -> None:
    """Load the ``pmanifest.rules`` entry points not loaded yet. A plugin that fails to import,
    fails when called or registers a bad rule is a ConfigError naming it; nothing it
    registered stays behind."""
    if not _plugins_declared():
        return  # the common case, without importing importlib.metadata (~20 ms at start-up)
    from importlib.metadata import entry_points

    for ep in entry_points(group=PLUGIN_GROUP):
        key = f"{ep.name}={ep.value}"
        if key in _LOADED_PLUGINS:
            continue
        before = set(_RUNTIME)
        try:
            loaded = ep.load()
            if callable(loaded):
                loaded()
        except Exception as exc:  # a third party's bug: name the plugin, not a traceback
            for rule_id in set(_RUNTIME) - before:
                unregister(rule_id)
            dist = f" (from {ep.dist.name})" if ep.dist is not None else ""
            raise ConfigError(f"rule plugin {ep.name!r} = {ep.value}{dist} is broken: "
                              f"{type(exc).__name__}: {exc}; fix or uninstall it") from None
        _LOADED_PLUGINS.add(key)


def _plugins_declared() -> bool:
    """Does any installed distribution declare a ``pmanifest.rules`` entry point? A plain scan
    of the ``entry_points.txt`` files on sys.path (what importlib.metadata reads too)."""
    import os
    import sys

    header = f"[{PLUGIN_GROUP}]"
    for directory in sys.path:
        try:
            entries = os.scandir(directory or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"),
                              encoding="utf-8") as handle:
                        if header in handle.read():
                            return True
                except OSError:
                    continue
    return False


@functools.cache
def registry() -> dict[str, Rule]:
    """All rules by id, in id order: built-in ones, plugins' (loaded on first use) and those
    registered at run time."""
    builtin = _builtin_rules()
    load_plugins()
    return dict(sorted({**builtin, **_RUNTIME}.items()))


def _metadata_entries() -> Iterable[tuple[str, Any]]:
    """Every rule metadata entry of ``policies/rules-*.yaml``, with its file name."""
    folder = importlib.resources.files("pmanifest.policies")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("rules-") and entry.name.endswith(".yaml"):
            source = f"policies/{entry.name}"
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            items = yaml.load(entry.read_text(encoding="utf-8"), Loader=loader)
            if not isinstance(items, list):
                raise RegistryError(f"{source}: expected a list of rules")
            for item in items:
                yield source, item


def lookup(name: str) -> Rule | None:
    """A rule by id or slug (case-insensitive for ids)."""
    rules = registry()
    if name.upper() in rules:
        return rules[name.upper()]
    for r in rules.values():
        if r.meta.slug == name:
            return r
    return None


def suggest(name: str) -> str:
    """`` (did you mean X?)`` for an unknown rule name, or an empty string."""
    import difflib

    names = [r.meta.id for r in registry().values()] + [r.meta.slug for r in registry().values()]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
