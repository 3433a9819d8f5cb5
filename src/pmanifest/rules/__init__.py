"""Executable checks, joined with their metadata from the catalogue.

A built-in rule is a small function in a module of this package, registered with
``@rule("PM201")``, plus its entry in ``policies/rules-*.yaml`` (:mod:`pmanifest.catalogue`),
which says what the engine calls it with (``applies``: ``workload``, the default, one pod
template with its role and placement, a ``Context``; ``object``, any Kubernetes object, an
``ObjectContext``; ``cluster``, a cluster request or read from ``pmanifest cluster check``, a
``ClusterContext``; ``input``, the GPU demand of every workload of a whole lint run with the
cluster of ``--cluster``, an ``InputContext``, once after every file), and its case file under
``tests/rules/cases/``. Every module of the package is imported, so nothing lists them. The
registry refuses a check without metadata, metadata without a check, and duplicate or malformed
ids and slugs, loudly.

Rules that are not built in join at run time through ``register(Rule(...))``, with the same
checks: user policies (:mod:`pmanifest.policy`) and Python rules of third-party packages,
loaded from the entry-point group ``pmanifest.rules`` (each entry point a module that registers
on import, or a callable called with no arguments). ``registered(rules)`` scopes user
policies to one lint run.

May import ``catalogue``, ``shell``, ``cluster``, ``kube``, ``schema``, ``loader`` and
``io``; never ``lint``, ``render`` or ``cli``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pmanifest import catalogue
from pmanifest.catalogue import (
    APPLIES,
    PLUGIN_GROUP,
    RULE_ID,
    SEVERITIES,
    SLUG,
    RegistryError,
    RuleMeta,
    plugins_declared,
)
from pmanifest.errors import ConfigError
from pmanifest.kube.document import Document, Fix
from pmanifest.kube.kinds import Runtimes
from pmanifest.kube.kustomized import Built
from pmanifest.kube.profile import Profile
from pmanifest.kube.workloads import Workload
from pmanifest.loader.positions import Path, Pos
from pmanifest.shell.facts import Loc

if TYPE_CHECKING:  # what only cluster and whole-input checks see (imported when they run)
    from pmanifest.cluster.capacity import Capacity, Shortfall
    from pmanifest.cluster.demand import Demand
    from pmanifest.cluster.request import ClusterRequest

__all__ = ["RULE_ID", "SEVERITIES", "SLUG", "ClusterContext", "Context", "Fix", "Hit",
           "InputContext", "InputHit", "Mention", "ObjectContext",
           "RegistryError", "Rule", "RuleMeta", "load_plugins", "lookup", "register",
           "registered", "registry", "rule", "suggest", "unregister"]

# applied by the engine itself: syntax (PM001), suppressions that suppress nothing (PM005),
# patch fragments not linted (PM007)
ENGINE_RULES = ("PM001", "PM005", "PM007")


class Mention(NamedTuple):
    """A second place a message names by its line: `` (line N)`` is inserted at ``at``."""

    path: Path
    inner: Loc | None  # inside the script at ``path``
    at: int  # index in the message


class Hit(NamedTuple):
    """What a check returns: where and what is wrong, with an optional fix. Checks name paths
    (from the document root); the engine works out positions afterwards, for all findings of
    a document at once: at the key of ``path``, at its value (``value``), or at ``inner``, a
    place inside the script held by the string at ``path``. ``pos`` (an exact position
    already known) is for plugins that work positions out themselves."""

    path: Path
    message: str
    pos: Pos | None = None
    fix: Fix | None = None
    value: bool = False
    inner: Loc | None = None
    mention: Mention | None = None
    lower: bool = False  # reported one severity level below the rule's (a smaller impact)


class Context(NamedTuple):
    """What a workload check sees: one pod template with its role and placement."""

    workload: Workload
    profile: Profile
    kubernetes_version: str = "1.31"
    # the serving runtimes the input defines: (group, name) -> part -> asks for an accelerator
    runtimes: Runtimes = MappingProxyType({})


class ObjectContext(NamedTuple):
    """What an object check sees: any Kubernetes object, its pod templates (none for most
    kinds), the active profile and the target Kubernetes version."""

    doc: Document
    workloads: tuple[Workload, ...]
    profile: Profile
    kubernetes_version: str = "1.31"
    # what the kustomize builds listing the object's file add to it (selector labels, a
    # webhook's service namespace), None when no kustomization lists it
    built: Built | None = None

    @property
    def workload(self) -> Workload | None:
        """The first pod template (most kinds have at most one)."""
        return self.workloads[0] if self.workloads else None


class ClusterContext(NamedTuple):
    """What a cluster check sees: one cluster request (create, update) or read, from a body or
    a saved command line, with the position of every field."""

    request: ClusterRequest
    profile: Profile


class InputContext:
    """What a whole-input check sees: the GPU demand of every workload of the run, in input
    order, and the capacity of the cluster given with ``--cluster``. ``shortfalls`` is
    computed once and shared by the checks."""

    def __init__(self, demands: tuple[Demand, ...], capacity: Capacity,
                 profile: Profile) -> None:
        self.demands = demands
        self.capacity = capacity
        self.profile = profile
        self._shortfalls: list[Shortfall] | None = None

    @property
    def shortfalls(self) -> list[Shortfall]:
        if self._shortfalls is None:
            from pmanifest.cluster.capacity import shortfalls

            self._shortfalls = shortfalls(self.demands, self.capacity)
        return self._shortfalls


class InputHit(NamedTuple):
    """What a whole-input check returns: the workload it is about (its ``Demand``, whose
    ``ref`` the engine placed), where in it (``"gpus"`` or ``"pods"``), and the message."""

    demand: Demand
    message: str
    at: str = "pods"


Check = Callable[[Any], Iterable[Any]]


@dataclass(frozen=True)
class Rule:
    """A registered rule: its catalogue entry and its check."""

    meta: RuleMeta
    check: Check | None  # None only for what the engine applies itself (PM001)
    applies: str = "workload"  # once per pod template / object / cluster request / lint run
    source: str = "pmanifest"

    def __post_init__(self) -> None:
        if self.applies not in APPLIES:
            raise RegistryError(f"{self.source}: rule {self.meta.id}: applies must be one of "
                                f"{', '.join(APPLIES)}")


_CHECKS: dict[str, Check] = {}


def rule(rule_id: str) -> Callable[[Check], Check]:
    """Register ``check`` as the implementation of built-in rule ``rule_id`` (what it is called
    with is its catalogue entry's ``applies``)."""

    def register_check(check: Check) -> Check:
        if not RULE_ID.match(rule_id):
            raise RegistryError(f"malformed rule id {rule_id!r}")
        if rule_id in _CHECKS or rule_id in ENGINE_RULES:
            raise RegistryError(f"rule {rule_id} is registered twice")
        _CHECKS[rule_id] = check
        return check

    return register_check


TOOLS = ("new",)  # modules of this package that are developer tools, not checks


@functools.cache
def _builtin_rules() -> dict[str, Rule]:
    """The built-in checks of every module of this package, joined with their metadata."""
    for module in pkgutil.iter_modules(__path__):
        if module.name not in TOOLS:
            importlib.import_module(f"{__name__}.{module.name}")
    rules: dict[str, Rule] = {}
    for meta in catalogue.builtin().values():
        check = _CHECKS.get(meta.id)
        if check is None and meta.id not in ENGINE_RULES:
            raise RegistryError(f"{meta.source}: rule {meta.id} has metadata but no check")
        rules[meta.id] = Rule(meta, check, meta.applies, meta.source)
    orphans = set(_CHECKS) - set(rules)
    if orphans:
        raise RegistryError(f"checks without metadata in policies/rules-*.yaml: {sorted(orphans)}")
    return rules


_RUNTIME: dict[str, Rule] = {}
_LOADED_PLUGINS: set[str] = set()


def register(new: Rule) -> Rule:
    """Add a rule at run time (a plugin's Python rule, a user policy), with the checks the
    built-in rules get: well-formed id, slug and severity, a check, no duplicate id or slug
    (against every known rule). Raises RegistryError."""
    if new.check is None:
        raise RegistryError(f"{new.source}: rule {new.meta.id} has no check")
    _builtin_rules()
    source = new.meta.source if new.meta.source != "pmanifest" else new.source
    meta = new.meta._replace(source=source, applies=new.applies)  # the catalogue says it too
    catalogue.add(meta)
    _RUNTIME[meta.id] = Rule(meta, new.check, new.applies, new.source)
    registry.cache_clear()
    return new


def unregister(rule_id: str) -> None:
    """Remove a rule added with ``register`` (no-op for unknown or built-in ids)."""
    if _RUNTIME.pop(rule_id, None) is not None:
        catalogue.remove(rule_id)
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
    if not plugins_declared():
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


@functools.cache
def registry() -> dict[str, Rule]:
    """All rules by id, in id order: built-in ones, plugins' (loaded on first use) and those
    registered at run time."""
    builtin = _builtin_rules()
    load_plugins()
    return dict(sorted({**builtin, **_RUNTIME}.items()))


def lookup(name: str) -> Rule | None:
    """A rule by id (any case) or slug."""
    meta = catalogue.lookup(name)
    return registry().get(meta.id) if meta is not None else None


def suggest(name: str) -> str:
    """`` (did you mean 'X'?)`` for an unknown rule name, or an empty string."""
    return catalogue.suggest(name)
