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
from collections.abc import Callable
from typing import Any, NamedTuple

from pmanifest.errors import ConfigError
from pmanifest.suggest import did_you_mean

DEFAULT_PROFILE = "together"


class Taint(NamedTuple):
    """A taint a provider puts on its preemptible nodes."""

    key: str
    value: str | None
    effect: str


class ComputeClasses(NamedTuple):
    """Pods that select one of ``values`` of label ``key`` are governed by ``profile``
    (``target``: that profile itself, when it is a custom one no name lookup finds)."""

    key: str
    values: tuple[str, ...]
    profile: str
    target: Profile | None = None


class Capacity(NamedTuple):
    """Nodes that carry label ``key`` (with one of ``values``; with any value when there are
    none) are never preemptible, whatever else they carry: a pod that requires them runs on
    standard capacity only (GKE flex-start, queued provisioning, reservations)."""

    key: str
    values: tuple[str, ...] = ()


# GKE's own API: a ComputeClass (cloud.google.com/v1) is what a pod selects with this label
COMPUTE_CLASS_KEY = "cloud.google.com/compute-class"


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
    standard_capacity: tuple[Capacity, ...] = ()  # labels of never-preemptible capacity
    provider_labels: tuple[str, ...] = ()  # other label keys (or prefixes) of this provider
    origin: str | None = None  # the config file of a custom profile (None: built in)
    extends: str | None = None  # the profile a custom one starts from

    @property
    def evidence(self) -> tuple[str, ...]:
        """The label keys and prefixes whose use in an input tells this provider
        (:func:`infer`)."""
        return (self.label_key, *self.provider_labels)

    @property
    def preemptible_selector(self) -> dict[str, str]:
        return {self.label_key: self.label_value}

    def for_pod(self, pod: dict[str, Any]) -> Profile:
        """The profile that governs ``pod``: another one when it selects one of this profile's
        compute classes (in its nodeSelector, or in every required node affinity term)."""
        classes = self.compute_classes
        if classes is None or not _selects(pod, classes.key, classes.values):
            return self
        return self.classes_profile

    def with_standard_classes(self, names: tuple[str, ...]) -> Profile:
        """This profile where the compute classes ``names`` (read from the input: every
        priority on-demand) are never preemptible capacity."""
        if not names:
            return self
        return self._replace(standard_capacity=(*self.standard_capacity,
                                                Capacity(COMPUTE_CLASS_KEY, names)))

    @property
    def classes_profile(self) -> Profile:
        """The profile of pods that select one of this profile's compute classes (itself
        when it has none)."""
        classes = self.compute_classes
        if classes is None:
            return self
        return classes.target if classes.target is not None else get_profile(classes.profile)


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
            "taint": {
                "type": ["object", "null"], "additionalProperties": False,
                "required": ["key", "effect"],
                "properties": {"key": {"type": "string", "minLength": 1},
                               "value": {"type": ["string", "null"]},
                               "effect": {"enum": ["NoSchedule", "PreferNoSchedule",
                                                   "NoExecute"]}}},
            "gracePeriodCap": {"type": "integer", "minimum": 1},
            "drainWindowSeconds": {"type": "integer", "minimum": 1},
            "autoToleration": {"type": "boolean"},
            "providerLabels": {"type": "array", "minItems": 1,
                               "items": {"type": "string", "minLength": 1}},
            "standardCapacity": {
                "type": "array",
                "items": {"type": "object", "additionalProperties": False, "required": ["key"],
                          "properties": {"key": {"type": "string", "minLength": 1},
                                         "values": {"type": "array", "minItems": 1,
                                                    "items": {"type": "string",
                                                              "minLength": 1}}}}},
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
        standard_capacity=tuple(Capacity(c["key"], tuple(c.get("values", ())))
                                for c in body.get("standardCapacity", ())),
        provider_labels=tuple(body.get("providerLabels", ())),
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


_FIELDS: dict[str, Any] = PROFILE_SCHEMA["additionalProperties"]
CUSTOM_PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {"extends": {"type": "string", "minLength": 1}, **_FIELDS["properties"]},
}
CUSTOM_PROFILES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": PROFILE_SCHEMA["propertyNames"],
    "additionalProperties": CUSTOM_PROFILE_SCHEMA,
}
Fail = Callable[..., ConfigError]  # fail(message, *key path): the error at that key


def profile_body(profile: Profile) -> dict[str, Any]:
    """The fields of ``profile`` as a profiles file writes them (what ``extends`` copies)."""
    body: dict[str, Any] = {
        "description": profile.description,
        "label": {"key": profile.label_key, "value": profile.label_value},
        "standardNodePrefix": profile.standard_node_prefix,
        "preemptibleNodePrefix": profile.preemptible_node_prefix,
        "taint": profile.taint._asdict() if profile.taint else None,
        "gracePeriodCap": profile.grace_period_cap,
        "drainWindowSeconds": profile.drain_window_seconds,
        "autoToleration": profile.auto_toleration,
    }
    if profile.provider_labels:
        body["providerLabels"] = list(profile.provider_labels)
    if profile.standard_capacity:
        body["standardCapacity"] = [{"key": c.key, **({"values": list(c.values)} if c.values
                                                      else {})}
                                    for c in profile.standard_capacity]
    classes = profile.compute_classes
    if classes is not None:
        body["computeClasses"] = {"key": classes.key, "values": list(classes.values),
                                  "profile": classes.profile}
    return body


def custom_profiles(raw: dict[str, Any], source: str, fail: Fail) -> dict[str, Profile]:
    """The custom profiles of a config's ``profiles:`` (validated against
    CUSTOM_PROFILES_SCHEMA): each ``extends`` a built-in or another custom profile (in any
    order, no cycle) and changes any of its fields; one without ``extends`` gives them all.
    ``fail`` words the error at a key of the config."""
    builtins = _all_profiles()
    known = [*sorted(builtins), *raw]
    out: dict[str, Profile] = {}

    def build(name: str, chain: tuple[str, ...]) -> Profile:
        if name in out:
            return out[name]
        body = raw[name]
        parent_name = body.get("extends")
        if parent_name is None:
            missing = [k for k in _FIELDS["required"] if k not in body and k != "description"]
            if missing:
                raise fail(f"profile {name!r} extends no profile, so it must give "
                           f"{', '.join(missing)} (or extends: one of {', '.join(known)})",
                           "profiles", name)
            merged = {"description": f"custom profile of {source}", **body}
        else:
            if parent_name in (*chain, name):
                cycle = [*chain[chain.index(parent_name):], name, parent_name] \
                    if parent_name in chain else [name, name]
                raise fail(f"profiles extend each other in a cycle: {' -> '.join(cycle)}",
                           "profiles", name, "extends")
            if parent_name in raw:
                parent = build(parent_name, (*chain, name))
            elif parent_name in builtins:
                parent = builtins[parent_name]
            else:
                raise fail(f"unknown profile {parent_name!r} in extends"
                           f"{did_you_mean(parent_name, known)}; known profiles: "
                           f"{', '.join(known)}", "profiles", name, "extends")
            merged = {**profile_body(parent),
                      "description": f"{parent.description}; changed by {source}",
                      **{k: v for k, v in body.items() if k != "extends"}}
        profile = _profile(name, merged)._replace(origin=source, extends=parent_name)
        out[name] = _with_target(profile, builtins, raw, build, (*chain, name), fail)
        return out[name]

    for name in raw:
        if name in builtins:
            raise fail(f"profile {name!r} is built in: give yours another name, with "
                       f"extends: {name}", "profiles", name)
    for name in raw:
        build(name, ())
    return out


def _with_target(profile: Profile, builtins: dict[str, Profile], raw: dict[str, Any],
                 build: Callable[[str, tuple[str, ...]], Profile], chain: tuple[str, ...],
                 fail: Fail) -> Profile:
    """``profile`` with its compute classes' profile resolved (a custom one by value)."""
    classes = profile.compute_classes
    if classes is None:
        return profile
    named = classes.profile
    target = builtins.get(named) or (build(named, chain) if named in raw and named not in chain
                                     else None)
    if target is None or target.compute_classes is not None:
        at = ("computeClasses", "profile") if "computeClasses" in raw[profile.name] else ()
        raise fail(f"computeClasses.profile {named!r} must name a profile without "
                   "computeClasses of its own", "profiles", profile.name, *at)
    if named in builtins:
        return profile
    return profile._replace(compute_classes=classes._replace(target=target))


def profile_names() -> list[str]:
    return sorted(_all_profiles())


def get_profile(name: str = DEFAULT_PROFILE) -> Profile:
    profiles = _all_profiles()
    if name not in profiles:
        known = ", ".join(sorted(profiles))
        raise ConfigError(f"unknown profile {name!r}; known profiles: {known}")
    return profiles[name]

