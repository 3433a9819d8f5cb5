"""The rule registry: metadata (from ``policies/rules-*.yaml``) joined with check functions.

A rule module registers its check with ``@rule("PM201")``. Metadata (slug, severity, summary,
rationale, fix hint, examples) lives as data beside the other policies, so ``explain``, the
reporters and the docs share one source. The registry refuses duplicate ids, ids without
metadata and malformed metadata loudly instead of silently shadowing.
"""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from pmanifest.document import Path, Pos
from pmanifest.profile import Profile
from pmanifest.workloads import Workload

SEVERITIES = ("error", "warning", "info")
RULE_ID = re.compile(r"^[A-Z][A-Z0-9]*[0-9]{3}$")
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
BUILTIN_MODULES = ("placement", "grace", "checkpoint", "jobs")


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


Check = Callable[[Context], Iterable[Hit]]


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
    if not RULE_ID.match(meta.id) or not SLUG.match(meta.slug):
        raise RegistryError(f"{source}: malformed id or slug: {meta.id} {meta.slug}")
    if meta.severity not in SEVERITIES:
        raise RegistryError(f"{source}: rule {meta.id}: severity must be one of {SEVERITIES}")
    return meta


@functools.cache
def registry() -> dict[str, Rule]:
    """All rules by id, in id order. Imports the built-in rule modules on first use."""
    for name in BUILTIN_MODULES:
        importlib.import_module(f"pmanifest.rules.{name}")
    rules: dict[str, Rule] = {}
    slugs: set[str] = set()
    for source, entry in _metadata_entries():
        meta = _parse_meta(entry, source)
        if meta.id in rules or meta.slug in slugs:
            raise RegistryError(f"{source}: duplicate rule {meta.id} / {meta.slug}")
        slugs.add(meta.slug)
        check = _CHECKS.get(meta.id)
        if check is None and meta.id not in ENGINE_RULES:
            raise RegistryError(f"{source}: rule {meta.id} has metadata but no check")
        rules[meta.id] = Rule(meta, check)
    orphans = set(_CHECKS) - set(rules)
    if orphans:
        raise RegistryError(f"checks without metadata in policies/rules-*.yaml: {sorted(orphans)}")
    return dict(sorted(rules.items()))


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
