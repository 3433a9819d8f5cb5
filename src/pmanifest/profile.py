"""Provider profiles: the preemptible contract as data (label, node names, taint, caps)."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass
from typing import Any

from pmanifest.errors import ConfigError

DEFAULT_PROFILE = "together"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str | None
    effect: str


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    label_key: str
    label_value: str
    standard_node_prefix: str | None
    preemptible_node_prefix: str | None
    taint: Taint | None
    grace_period_cap: int
    drain_window_seconds: int

    @property
    def preemptible_selector(self) -> dict[str, str]:
        return {self.label_key: self.label_value}


_KEY_VALUE = {"type": "object", "additionalProperties": False, "required": ["key", "value"],
              "properties": {"key": {"type": "string", "minLength": 1},
                             "value": {"type": "string", "minLength": 1}}}
_PREFIX = {"type": ["string", "null"], "minLength": 1}
PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "propertyNames": {"pattern": "^[a-z][a-z0-9-]*$"},
    "additionalProperties": {
        "type": "object",
        "additionalProperties": False,
        "required": ["description", "label", "standardNodePrefix", "preemptibleNodePrefix",
                     "taint", "gracePeriodCap", "drainWindowSeconds"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "label": _KEY_VALUE,
            "standardNodePrefix": _PREFIX,
            "preemptibleNodePrefix": _PREFIX,
            "taint": {"oneOf": [{"type": "null"}, {
                "type": "object", "additionalProperties": False, "required": ["key", "effect"],
                "properties": {"key": {"type": "string", "minLength": 1},
                               "value": {"type": ["string", "null"]},
                               "effect": {"enum": ["NoSchedule", "PreferNoSchedule",
                                                   "NoExecute"]}}}]},
            "gracePeriodCap": {"type": "integer", "minimum": 1},
            "drainWindowSeconds": {"type": "integer", "minimum": 1},
        },
    },
}
PROFILES_FILE = "profiles.yaml"


@functools.cache
def _all_profiles() -> dict[str, Profile]:
    from pmanifest.datafile import load_data

    text = importlib.resources.files("pmanifest.policies").joinpath(PROFILES_FILE).read_text()
    raw, _ = load_data(text, f"policies/{PROFILES_FILE}", PROFILE_SCHEMA, "the profiles")
    return {name: _profile(name, body) for name, body in raw.items()}


def _profile(name: str, body: dict[str, Any]) -> Profile:
    taint = body.get("taint")
    return Profile(
        name=name,
        description=body["description"],
        label_key=body["label"]["key"],
        label_value=body["label"]["value"],
        standard_node_prefix=body.get("standardNodePrefix"),
        preemptible_node_prefix=body.get("preemptibleNodePrefix"),
        taint=Taint(taint["key"], taint.get("value"), taint["effect"]) if taint else None,
        grace_period_cap=int(body["gracePeriodCap"]),
        drain_window_seconds=int(body["drainWindowSeconds"]),
    )


def profile_names() -> list[str]:
    return sorted(_all_profiles())


def get_profile(name: str = DEFAULT_PROFILE) -> Profile:
    profiles = _all_profiles()
    if name not in profiles:
        known = ", ".join(sorted(profiles))
        raise ConfigError(f"unknown profile {name!r}; known profiles: {known}")
    return profiles[name]
