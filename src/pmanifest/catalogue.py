"""The rule catalogue: what every rule is called, why it exists and what it reads, with no
check code.

Built-in rules are described in ``policies/rules-*.yaml`` (id, slug, default severity, summary,
rationale, fix, a failing and a passing example; what the rule applies to, ``applies``: each
pod template (the default), each Kubernetes object, each cluster request or a whole lint run;
the kinds of objects and the roles of pod templates it reads, when not all; a rule about
workloads against a cluster adds the cluster request its examples are checked against,
``examples.cluster``). Rules that join at run time (user policies, plugins) add their metadata
here too, through the executable registry (:mod:`pmanifest.rules`). Reporters, ``pmanifest
rules``, ``explain`` and SARIF read only this module: asking what PM201 means never imports a
check (unless plugins are installed or policies configured: they are loaded to be listed).

The catalogue refuses malformed or duplicate ids and slugs loudly (RegistryError) instead of
letting one rule silently shadow another.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from pmanifest.kube.contract import DAEMON_ROLE, ROLES, UNKNOWN_ROLE

SEVERITIES = ("error", "warning", "info")


def lowered(severity: str) -> str:
    """One severity level lower: error -> warning -> info (info stays)."""
    index = SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES) - 1
    return SEVERITIES[min(index + 1, len(SEVERITIES) - 1)]

# once per pod template (with its role and placement) / Kubernetes object / cluster request or
# read (`pmanifest cluster check`) / lint run with --cluster (the GPU demand of every workload)
APPLIES = ("workload", "object", "cluster", "input")
POD_ROLES = (*ROLES, DAEMON_ROLE, UNKNOWN_ROLE)  # the roles a pod template can have
PLUGIN_GROUP = "pmanifest.rules"  # the entry-point group of rule plugins
RULE_ID = re.compile(r"^[A-Z][A-Z0-9]*[0-9]{3}$")
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
CATALOGUE_GLOB = "rules-*.yaml"
CATALOGUE_WORDS = "the catalogue"  # what an error calls the root of a catalogue file

_TEXT = {"type": "string", "minLength": 1}
# what describes any rule: a built-in's catalogue entry and a user policy alike
DESCRIPTION: dict[str, Any] = {
    "id": {"type": "string", "pattern": RULE_ID.pattern},
    "slug": {"type": "string", "pattern": SLUG.pattern},
    "severity": {"enum": list(SEVERITIES)},
    "summary": _TEXT,
    "rationale": _TEXT,
    "fix": _TEXT,
}
ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [*DESCRIPTION, "examples"],
    "properties": {
        **DESCRIPTION,
        "examples": {"type": "object", "additionalProperties": False,
                     "required": ["fail", "pass"],
                     "properties": {"fail": {"type": "string"}, "pass": {"type": "string"},
                                    "cluster": {"type": "string"}}},
        "applies": {"enum": list(APPLIES)},
        # the only roles of pod templates a workload rule reads
        "roles": {"type": "array", "minItems": 1, "uniqueItems": True,
                  "items": {"enum": list(POD_ROLES)}},
        # `Kind` (in any API group) or `group/Kind` (`batch/Job` is not Volcano's `Job`)
        "kinds": {"type": "array", "minItems": 1, "uniqueItems": True,
                  "items": {"type": "string", "pattern": r"^([a-z0-9.-]+/)?[A-Z][A-Za-z0-9]*$"}},
    },
}
# a catalogue file: one schema object for every file, so its check is compiled once per run
FILE_SCHEMA: dict[str, Any] = {"type": "array", "items": ENTRY_SCHEMA}


class RegistryError(Exception):
    """A rule definition is broken: a programming error in pmanifest or a plugin."""


class RuleMeta(NamedTuple):
    """A rule's catalogue entry: id, slug, severity, docs, examples and what it reads."""

    id: str
    slug: str
    severity: str
    summary: str
    rationale: str
    fix: str
    example_fail: str = ""
    example_pass: str = ""
    kinds: tuple[str, ...] = ()  # the only kinds it applies to; () means every kind
    source: str = "pmanifest"  # where it is defined: a catalogue file, a policy, a plugin
    example_cluster: str = ""  # the cluster request both examples are checked against
    applies: str = "workload"  # what the engine calls the check with (APPLIES)
    roles: tuple[str, ...] = ()  # the only roles of pod templates it reads; () means all


def check_meta(meta: RuleMeta) -> None:
    """Refuse a malformed id, slug or severity (RegistryError naming the source)."""
    if not RULE_ID.match(meta.id) or not SLUG.match(meta.slug):
        raise RegistryError(f"{meta.source}: malformed id or slug: {meta.id} {meta.slug}")
    if meta.severity not in SEVERITIES:
        raise RegistryError(f"{meta.source}: rule {meta.id}: severity must be one of "
                            f"{', '.join(SEVERITIES)}")
    if meta.applies not in APPLIES:
        raise RegistryError(f"{meta.source}: rule {meta.id}: applies must be one of "
                            f"{', '.join(APPLIES)}")
    if meta.roles and meta.applies != "workload":
        raise RegistryError(f"{meta.source}: rule {meta.id}: roles are for rules that apply to "
                            "pod templates (applies: workload)")


def _add(rules: dict[str, RuleMeta], new: RuleMeta) -> None:
    check_meta(new)
    for other in rules.values():
        if {new.id, new.slug} & {other.id, other.slug}:
            raise RegistryError(f"{new.source}: duplicate rule {new.id} / {new.slug} "
                                f"(already defined by {other.source})")
    rules[new.id] = new


@functools.cache
def builtin() -> dict[str, RuleMeta]:
    """The built-in rules' metadata, from ``policies/rules-*.yaml``."""
    from pmanifest.schema.datafile import load_shipped

    rules: dict[str, RuleMeta] = {}
    for name in catalogue_files():
        source = f"policies/{name}"

        def build(items: list[dict[str, Any]], source: str = source) -> list[RuleMeta]:
            return metas_of(items, source)

        for meta in load_shipped(name, FILE_SCHEMA, CATALOGUE_WORDS, RegistryError, build=build):
            _add(rules, meta)
    return rules


def catalogue_files() -> list[str]:
    """The names of the catalogue's files in ``policies/``, in order."""
    import fnmatch
    import os

    from pmanifest.io.reading import shipped

    return sorted(name for name in os.listdir(shipped("pmanifest.policies"))
                  if fnmatch.fnmatch(name, CATALOGUE_GLOB))


def metas_of(items: list[dict[str, Any]], source: str) -> list[RuleMeta]:
    """The rule metadata of a catalogue file's validated entries."""
    return [RuleMeta(item["id"], item["slug"], item["severity"],
                     " ".join(item["summary"].split()), item["rationale"].strip(),
                     item["fix"].strip(), item["examples"]["fail"], item["examples"]["pass"],
                     tuple(item.get("kinds", ())), f"{source}:{item['id']}",
                     item["examples"].get("cluster", ""), item.get("applies", "workload"),
                     tuple(item.get("roles", ())))
            for item in items]


_RUNTIME: dict[str, RuleMeta] = {}  # user policies and plugins, added at run time


def add(meta: RuleMeta) -> None:
    """Add a run-time rule's metadata; RegistryError for a malformed or taken id or slug."""
    rules = {**builtin(), **_RUNTIME}
    _add(rules, meta)
    _RUNTIME[meta.id] = meta


def remove(rule_id: str) -> None:
    """Remove a run-time rule's metadata (a no-op for built-in or unknown ids)."""
    _RUNTIME.pop(rule_id, None)


def catalogue() -> dict[str, RuleMeta]:
    """Every known rule's metadata, in id order."""
    return dict(sorted({**builtin(), **_RUNTIME}.items()))


def lookup(name: str) -> RuleMeta | None:
    """A rule by id (any case) or slug."""
    rules = catalogue()
    if name.upper() in rules:
        return rules[name.upper()]
    return next((m for m in rules.values() if m.slug == name), None)


def suggest(name: str) -> str:
    """`` (did you mean 'X'?)`` for an unknown rule name, or an empty string."""
    from pmanifest.suggest import did_you_mean

    names = [n for m in catalogue().values() for n in (m.id, m.slug)]
    return did_you_mean(name, names)


def plugins_declared() -> bool:
    """Does any installed distribution declare a ``pmanifest.rules`` entry point? A plain scan
    of the ``entry_points.txt`` files on sys.path (what importlib.metadata reads too), so that
    the common case, no plugin, costs neither importlib.metadata (~20 ms) nor the checks."""
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
                if entry.name.endswith((".dist-info", ".egg-info")) and \
                        header in _read(os.path.join(entry.path, "entry_points.txt")):
                    return True
    return False


def _read(path: str) -> str:
    """An installed distribution's ``entry_points.txt`` (a small regular file), or ""."""
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        return read_limited(path, regular_only=True, record=False)[0].decode("utf-8",
                                                                            "replace")
    except (OSError, Unreadable):
        return ""
