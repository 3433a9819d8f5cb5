"""Provider profiles: the preemptible contract as data (label, node names, taint, caps)."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass
from typing import Any

import yaml

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


@functools.cache
def _all_profiles() -> dict[str, Profile]:
    text = importlib.resources.files("pmanifest.policies").joinpath("profiles.yaml").read_text()
    raw: dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
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
