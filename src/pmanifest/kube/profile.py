"""Provider profiles: the preemptible contract as data (label, node names, taint, caps).

Two facts beyond a label and a taint, both from GKE:

- ``autoToleration``: the provider adds the toleration for its preemptible nodes' taint to
  every pod that asks for those nodes (a nodeSelector or node affinity on the label), as GKE
  Autopilot does for Spot Pods. Such a pod can land there without a toleration of its own.
- ``computeClasses``: pods that select one of these values of a label run on nodes governed by
  another profile. On GKE, a pod that selects a built-in Autopilot compute class
  (``cloud.google.com/compute-class: Accelerator``) runs on Autopilot nodes, whose Spot
  capacity is tainted, whatever the cluster's own node pools do. :meth:`Profile.for_pod`
  gives the profile that governs one pod; placement and the rules use it.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from pmanifest.errors import ConfigError

DEFAULT_PROFILE = "together"


class Taint(NamedTuple):
    """A taint a provider puts on its preemptible nodes."""

    key: str
    value: str | None
    effect: str


class ComputeClasses(NamedTuple):
    """Pods that select one of ``values`` of label ``key`` are governed by ``profile``."""

    key: str
    values: tuple[str, ...]
    profile: str


class Profile(NamedTuple):
    """A provider's preemption facts: labels, grace cap, drain window, taints."""

    name: str
    description: str
    label_key: str
    label_value: str
    standard_node_prefix: str | None
    preemptible_node_prefix: str | None
    taint: Taint | None
    grace_period_cap: int
    drain_window_seconds: int
    auto_toleration: bool = False  # the provider tolerates the taint for pods that ask for it
    compute_classes: ComputeClasses | None = None

    @property
    def preemptible_selector(self) -> dict[str, str]:
        return {self.label_key: self.label_value}

    def for_pod(self, pod: dict[str, Any]) -> Profile:
        """The profile that governs ``pod``: another one when it selects one of this profile's
        compute classes (in its nodeSelector, or in every required node affinity term)."""
        classes = self.compute_classes
        if classes is None or not _selects(pod, classes.key, classes.values):
            return self
        return get_profile(classes.profile)


def _selects(pod: dict[str, Any], key: str, values: tuple[str, ...]) -> bool:
    selector = pod.get("nodeSelector")
    if isinstance(selector, dict) and key in selector:
        return selector[key] in values
    terms = _required_terms(pod)
    return bool(terms) and all(_term_selects(term, key, values) for term in terms)


def _required_terms(pod: dict[str, Any]) -> list[Any]:
    node: Any = pod
    for step in ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                 "nodeSelectorTerms"):
        node = node.get(step) if isinstance(node, dict) else None
    return node if isinstance(node, list) else []


def _term_selects(term: Any, key: str, values: tuple[str, ...]) -> bool:
    exprs = term.get("matchExpressions") if isinstance(term, dict) else None
    return isinstance(exprs, list) and any(
        isinstance(e, dict) and e.get("key") == key and e.get("operator") == "In"
        and isinstance(e.get("values"), list) and bool(e["values"])
        and all(v in values for v in e["values"]) for e in exprs)


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
            "autoToleration": {"type": "boolean"},
            "computeClasses": {
                "type": "object", "additionalProperties": False,
                "required": ["key", "values", "profile"],
                "properties": {"key": {"type": "string", "minLength": 1},
                               "values": {"type": "array", "minItems": 1,
                                          "items": {"type": "string", "minLength": 1}},
                               "profile": {"type": "string", "minLength": 1}}},
        },
    },
}
PROFILES_FILE = "profiles.yaml"
PROFILES_WORDS = "the profiles"  # what an error calls the root of a profiles file


@functools.cache
def _all_profiles() -> dict[str, Profile]:
    from pmanifest.schema.datafile import load_shipped

    profiles: dict[str, Profile] = load_shipped(PROFILES_FILE, PROFILE_SCHEMA, PROFILES_WORDS,
                                                build=_profiles)
    if _misnamed(profiles) is not None:  # said again at its line
        from pmanifest.io.reading import read_shipped

        parse_profiles(read_shipped("pmanifest.policies", PROFILES_FILE).decode("utf-8"),
                       f"policies/{PROFILES_FILE}")
    return profiles


def parse_profiles(text: str, source: str) -> dict[str, Profile]:
    """Profiles from the text of a profiles file; ConfigError at the first problem."""
    from pmanifest.schema.datafile import load_data

    raw, positions = load_data(text, source, PROFILE_SCHEMA, PROFILES_WORDS)
    profiles = _profiles(raw)
    wrong = _misnamed(profiles)
    if wrong is not None:
        classes = wrong.compute_classes
        assert classes is not None
        pos = positions.at((wrong.name, "computeClasses", "profile"))
        raise ConfigError(f"computeClasses.profile {classes.profile!r} must name a profile "
                          "without computeClasses of its own", source, pos.line, pos.column)
    return profiles


def _profiles(raw: dict[str, Any]) -> dict[str, Profile]:
    return {name: _profile(name, body) for name, body in raw.items()}


def _misnamed(profiles: dict[str, Profile]) -> Profile | None:
    """The first profile whose computeClasses.profile names no profile without classes."""
    for profile in profiles.values():
        classes = profile.compute_classes
        target = profiles.get(classes.profile) if classes is not None else None
        if classes is not None and (target is None or target.compute_classes is not None):
            return profile
    return None


def _profile(name: str, body: dict[str, Any]) -> Profile:
    taint = body.get("taint")
    classes = body.get("computeClasses")
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
        auto_toleration=bool(body.get("autoToleration", False)),
        compute_classes=ComputeClasses(classes["key"], tuple(classes["values"]),
                                       classes["profile"]) if classes else None,
    )


def node_name_prefixes(profile: Profile) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(preemptible, standard) node-name prefixes known for reading node events: every shipped
    profile's and ``profile``'s own. A node's name is a fact of the provider that named it,
    not of the profile a report is sized for: the shipped profiles' prefixes hold whichever
    is chosen, and a custom profile (its own pool's prefixes) only adds to them."""
    profiles = [*_all_profiles().values(), profile]
    preemptible = {p.preemptible_node_prefix for p in profiles if p.preemptible_node_prefix}
    standard = {p.standard_node_prefix for p in profiles if p.standard_node_prefix}
    return tuple(sorted(preemptible)), tuple(sorted(standard))


def profile_names() -> list[str]:
    return sorted(_all_profiles())


def get_profile(name: str = DEFAULT_PROFILE) -> Profile:
    profiles = _all_profiles()
    if name not in profiles:
        known = ", ".join(sorted(profiles))
        raise ConfigError(f"unknown profile {name!r}; known profiles: {known}")
    return profiles[name]
