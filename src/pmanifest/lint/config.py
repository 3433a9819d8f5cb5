"""Configuration: ``.pmanifest.yaml`` or ``[tool.pmanifest]`` in ``pyproject.toml``.

Found by walking up from the current directory, or named with ``--config``. Unknown keys,
unknown rule names and bad values are errors with a suggestion, never silently ignored.

Keys::

    kubernetesVersion: "1.31"       # schema version for PM002
    profile: together               # provider profile: built in, or one of profiles:
    profiles:                       # custom profiles: any field of policies/profiles.yaml
      playground:
        extends: gke                # a built-in or another custom profile
        taint: {key: spot, value: "true", effect: NoSchedule}
    failOn: error                   # error | warning | info
    rules:                          # rule id or slug -> off | error | warning | info
      PM302: off
      prestop-sleep: error
    exclude: ["charts/**/tests/*"]  # glob patterns of paths not to lint, also when a file is
                                    # named on the command line (--no-force-exclude: only in
                                    # directory walks)
    policies: [policies/]           # user policy directories, relative to this file
    roles:                          # Kind or group/Kind -> worker | coordinator | serving
      example.com/Trainer: worker   # (the pod templates' role; a pmanifest.io/role label wins)
    inlineSuppressions: false       # honour no `# pmanifest: ignore=` comment and no
                                    # pmanifest.io/ignore annotation (each is reported, PM005)
    templates: my-templates/        # render: templates that override the built-in ones by
                                    # file name, relative to this file (--templates wins)
    baseline: .pmanifest-baseline.json  # lint reports only findings it does not hold
                                    # (relative to this file; --baseline wins)

render reads the same file as lint: its profile, Kubernetes version and templates stand where
the flags and the spec's ``cluster:`` say nothing (flags > spec > config > defaults).

A config is part of a repository, written by whoever can commit to it: the paths it names
(``policies:``, ``templates:``, ``baseline:``) must lie inside that repository (the git
work tree that holds the config, else the config's own directory), links resolved, or the
config is refused; what lies elsewhere is named on the command line (``--policies``,
``--templates``, ``--baseline``), by whoever runs pmanifest.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path as FsPath
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pmanifest.errors import ConfigError
from pmanifest.io.limits import TooLong, checked_integer
from pmanifest.kube.contract import ROLES
from pmanifest.kube.profile import CUSTOM_PROFILES_SCHEMA
from pmanifest.loader.documents import YamlProblem, load_single
from pmanifest.loader.positions import Positions
from pmanifest.schema.datafile import first_violation
from pmanifest.suggest import did_you_mean

if TYPE_CHECKING:
    from pmanifest.kube.profile import Profile
    from pmanifest.policy import Policy
    from pmanifest.schema.words import Words

CONFIG_NAMES = (".pmanifest.yaml", ".pmanifest.yml")
LEVELS = ("off", "error", "warning", "info")
FAIL_ON = ("error", "warning", "info")
_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}}
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "kubernetesVersion": {"type": "string", "pattern": r"^v?\d+\.\d+(\.\d+)?$"},
        "profile": {"type": "string", "minLength": 1},
        "profiles": CUSTOM_PROFILES_SCHEMA,
        "failOn": {"enum": list(FAIL_ON)},
        "rules": {"type": "object", "additionalProperties": {"enum": [*LEVELS, False]}},
        "exclude": _STRINGS,
        "policies": _STRINGS,
        "roles": {"type": "object",
                  "propertyNames": {"pattern": r"^([a-z0-9.-]+/)?[A-Z][A-Za-z0-9]*$"},
                  "additionalProperties": {"enum": list(ROLES)}},
        "inlineSuppressions": {"type": "boolean"},
        "templates": {"type": "string", "minLength": 1},
        "baseline": {"type": "string", "minLength": 1},
    },
}


@functools.cache
def _words() -> Words:
    """The config's vocabulary for schema errors (imported only when there is one to word)."""
    from pmanifest.schema.words import Words

    return Words(root="the config", patterns={
        "kubernetesVersion": 'quote it, e.g. kubernetesVersion: "1.31"',
        "profiles": "name a profile with lower-case letters, digits and '-', from a letter",
    })


class Config(NamedTuple):
    """The settings of `.pmanifest.yaml` or `[tool.pmanifest]`, and the file they came from."""

    source: str | None = None
    kubernetes_version: str | None = None
    profile: str | None = None
    fail_on: str | None = None
    rules: Mapping[str, str] = MappingProxyType({})  # rule id -> level
    exclude: tuple[str, ...] = ()
    base_dir: FsPath | None = None  # exclude patterns are relative to this
    policies: tuple[Policy, ...] = ()  # loaded from the `policies:` directories
    roles: tuple[tuple[str, str], ...] = ()  # (Kind or group/Kind, role) of pod templates
    inline_suppressions: bool = True  # honour ignore comments and annotations in manifests
    templates: str | None = None  # render's template directory (relative to the cwd)
    baseline: str | None = None  # lint's baseline file (relative to the cwd)
    profiles: Mapping[str, Profile] = MappingProxyType({})  # custom profiles, by name


def config_from(config_path: str | None) -> Config:
    """The config named by --config, else the nearest one, else the defaults."""
    if config_path is not None:
        path = FsPath(config_path)
        if not path.exists():
            raise ConfigError("config file not found", config_path)
        return load_config(path)
    found = find_config(FsPath.cwd())
    return load_config(found) if found is not None else Config()


def find_config(start: FsPath) -> FsPath | None:
    """The nearest config file at or above ``start``."""
    for directory in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _pyproject_section(pyproject) is not None:
            return pyproject
    return None


def _pyproject_section(path: FsPath) -> dict[str, Any] | None:
    import tomllib  # only where a pyproject.toml is found

    text = _read(path, "pyproject.toml")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read pyproject.toml: {exc}", str(path)) from None
    except ValueError:  # an integer past what Python converts (tomllib converts every one)
        raise ConfigError(f"cannot read pyproject.toml: {TooLong()}", str(path)) from None
    tool = data.get("tool", {})
    section = tool.get("pmanifest") if isinstance(tool, dict) else None
    _bounded(section, str(path))
    if section is not None and not isinstance(section, dict):
        from pmanifest.schema.words import yaml_type

        raise ConfigError("[tool.pmanifest] must be a table of pmanifest settings, not "
                          f"{yaml_type(section)} {section!r}", str(path))
    return section


def _bounded(data: Any, source: str) -> None:
    """ConfigError for an integer of the section past MAX_INTEGER_DIGITS (TOML reads hex,
    octal and binary integers of any length), which no message could print."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, int):
            try:
                checked_integer(value)
            except TooLong as exc:
                raise ConfigError(f"[tool.pmanifest]: {exc}", source) from None


def _read(path: FsPath, what: str) -> str:
    """The text of a config file, through the one reader (a regular file, bounded)."""
    from pmanifest.io.reading import NotText, Unreadable, decode, read_limited

    try:
        return decode(read_limited(str(path), regular_only=True)[0])
    except Unreadable as exc:
        raise ConfigError(f"cannot read {what}: {exc.reason}", str(path)) from None
    except OSError as exc:  # a directory
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}", str(path)) from None
    except NotText as exc:
        raise ConfigError(exc.message, str(path), exc.line, exc.column) from None


def load_config(path: FsPath) -> Config:
    if path.name == "pyproject.toml":
        section = _pyproject_section(path) or {}
        found = first_violation(section, Positions(), CONFIG_SCHEMA, _words())
        if found is not None:  # TOML has no positions here: name the table instead
            raise ConfigError(f"[tool.pmanifest]: {found[0]}", str(path))
        return _parse(section, str(path), None, path.parent)
    text = _read(path, "config")
    try:
        loaded = load_single(text)
    except YamlProblem as problem:
        if problem.message == "file is empty":
            return Config(source=str(path), base_dir=path.parent)
        raise ConfigError(problem.message, str(path), problem.line, problem.column) from None
    found = first_violation(loaded.data, loaded.positions, CONFIG_SCHEMA, _words())
    if found is not None:
        raise ConfigError(found[0], str(path), found[1], found[2])
    return _parse(loaded.data, str(path), loaded.positions, path.parent)


def _parse(data: dict[str, Any], source: str, positions: Any, base: FsPath) -> Config:
    def fail(message: str, *key_path: str | int) -> ConfigError:
        pos = positions.at(tuple(key_path)) if positions is not None else None
        return ConfigError(message, source, pos.line if pos else None, pos.column if pos else None)

    version = data.get("kubernetesVersion")
    if version is not None:
        from pmanifest.schema.kubernetes import resolve_version

        try:
            version = resolve_version(str(version))
        except ConfigError as exc:
            raise fail(exc.message, "kubernetesVersion") from None
    custom = _custom_profiles(data.get("profiles"), source, fail)
    profile = data.get("profile")
    if profile is not None:
        from pmanifest.kube.profile import profile_names

        known = [*profile_names(), *custom]
        if profile not in known:
            raise fail(f"unknown profile {profile!r}{did_you_mean(profile, known)}; known "
                       f"profiles: {', '.join(known)}", "profile")
    fail_on = data.get("failOn")
    _inside_repository(data, base, fail)
    policies = _load_policies(data.get("policies", []), base, fail)
    names = {name: p.meta.id for p in policies for name in (p.meta.id, p.meta.slug)}
    rules = _parse_rules(data.get("rules", {}), fail, names)
    exclude = data.get("exclude", [])
    roles = tuple((str(kind), str(role)) for kind, role in data.get("roles", {}).items())
    templates = data.get("templates")
    if templates is not None:
        if not (base / templates).is_dir():
            raise fail(f"templates directory {templates!r} not found (relative to "
                       f"{base or '.'})", "templates")
        templates = str(base / templates)
    baseline = data.get("baseline")
    return Config(source, version, profile, fail_on, rules, tuple(exclude), base,
                  tuple(policies), roles, data.get("inlineSuppressions", True), templates,
                  None if baseline is None else os.path.relpath(base / baseline),
                  MappingProxyType(custom))


def _custom_profiles(raw: Any, source: str, fail: Any) -> dict[str, Profile]:
    if not raw:
        return {}
    from pmanifest.kube.profile import custom_profiles

    return custom_profiles(raw, os.path.basename(source), fail)


def repository_root(directory: FsPath) -> FsPath:
    """The root of the git work tree ``directory`` is in (a ``.git`` directory or file),
    else ``directory`` itself; real paths."""
    real = FsPath(os.path.realpath(directory))
    for candidate in (real, *real.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return real


def _inside_repository(data: dict[str, Any], base: FsPath, fail: Any) -> None:
    """ConfigError for a path of the config that leads out of its repository: itself, or
    (a directory) one of its entries, through a link."""
    named: list[tuple[Any, tuple[str | int, ...]]] = [
        (value, ("policies", i)) for i, value in enumerate(data.get("policies", []))]
    named += [(data[key], (key,)) for key in ("templates", "baseline") if key in data]
    if not named:
        return
    root = repository_root(base)
    for value, key_path in named:
        outside = _outside(base / value, root)
        if outside is not None:
            flag = f"--{key_path[0]}"  # (the option of the same name)
            through = "" if outside == base / value else f" (through {outside})"
            raise fail(f"{key_path[0]}: {value!r} is outside the repository ({root}){through}"
                       ": a config names only files of its own repository; give it on the "
                       f"command line ({flag}) instead", *key_path)


def _outside(path: FsPath, root: FsPath) -> FsPath | None:
    """``path``, or the entry of the directory ``path`` whose real path is outside ``root``."""
    for candidate in (path, *_entries(path)):
        real = FsPath(os.path.realpath(candidate))
        if real != root and root not in real.parents:
            return candidate
    return None


def _entries(path: FsPath) -> list[FsPath]:
    try:
        return [path / name for name in sorted(os.listdir(path))] if path.is_dir() else []
    except OSError:
        return []


def resolve_profile(name: str, config: Config) -> Profile:
    """The profile a name stands for, in a run with ``config``: the one way every command
    (lint, render, export, cluster) turns a profile name into a profile, the config's custom
    profiles first. ConfigError when unknown, naming every profile there is."""
    if name in config.profiles:
        return config.profiles[name]
    from pmanifest.kube.profile import profile_names

    known = [*profile_names(), *config.profiles]
    if name not in known:
        raise ConfigError(f"unknown profile {name!r}{did_you_mean(name, known)}; known "
                          f"profiles: {', '.join(known)}")
    from pmanifest.kube.profile import get_profile

    return get_profile(name)


def profiles_note(config: Config) -> str:
    """What ``explain`` says of profiles: which one a run uses, the built-in ones and the
    config's custom ones."""
    from pmanifest.kube.profile import profile_names

    custom = "; ".join(f"{p.name} (extends {p.extends})" if p.extends else p.name
                       for p in config.profiles.values())
    return ("Decided under the active profile (the label, taint and grace-period cap of its "
            "preemptible nodes): --profile NAME, else the config's profile:, else the "
            "provider whose preemptible labels the input uses. Built in: "
            f"{', '.join(profile_names())}; the config's profiles: defines custom ones, each "
            "extending another and changing any field of policies/profiles.yaml"
            + (f". In {os.path.basename(config.source or '')}: {custom}." if custom else "."))


def _load_policies(dirs: Any, base: FsPath, fail: Any) -> list[Policy]:
    """The policies of the `policies:` directories (relative to the config file)."""
    if not dirs:
        return []
    for i, directory in enumerate(dirs):
        if not (base / directory).is_dir():
            raise fail(f"policy directory {directory!r} not found (relative to "
                       f"{base or '.'})", "policies", i)
    from pmanifest.policy import load_policy_dirs

    return load_policy_dirs([str(base / d) for d in dirs])


def _parse_rules(rules: Any, fail: Any, extra: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, level in rules.items():
        rule_id = extra.get(str(name)) or resolve_rule(str(name), fail, "rules", name)
        out[rule_id] = "off" if level is False else level  # YAML 1.1 reads a bare off as false
    return out


def resolve_rule(name: str, fail: Any = None, *key_path: Any) -> str:
    """A rule id for an id or slug, or a ConfigError with a suggestion."""
    from pmanifest.rules import lookup, suggest

    found = lookup(name)
    if found is None:
        message = f"unknown rule {name!r}{suggest(name)}"
        raise fail(message, *key_path) if fail else ConfigError(message)
    return found.meta.id
