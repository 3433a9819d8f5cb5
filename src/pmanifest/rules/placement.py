"""Rules: placement (see policies/rules-placement.yaml for their metadata).

PM101-PM103 share one decision table so an object is reported by at most one of them:

- coordinator role (StatefulSet by default, or ``pmanifest.io/role: coordinator``) that can run
  on preemptible nodes -> PM103 only;
- other long-running roles (serving: Deployment/ReplicaSet by default, or the role label) ->
  PM101 when confined to preemptible nodes, PM102 when they can land on either kind.

Every rule reads ``workload.placement``; none re-derives where a pod can run.

Impact decides severity: PM101-PM103 on a pod that requests no accelerator
(:func:`pmanifest.kube.resources.requests_accelerator`: a controller, a dashboard, a UI; for a
coordinator, nor do the pods of its object that depend on it) are reported one severity level
below the rule's, and the message says so.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from pmanifest.kube.placement import placement_of, toleration
from pmanifest.kube.profile import Profile
from pmanifest.kube.workloads import Workload, get, mapping, sequence
from pmanifest.loader.positions import Path
from pmanifest.rules import Context, Fix, Hit, rule
from pmanifest.rules.impact import by_impact

_REQUIRED = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
_PREFERRED = ("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")


def _what(w: Workload) -> str:
    return f"{w.title} (role {w.role})"


def _placed(ctx: Context, path: Path, message: str, fix: Fix | None = None) -> Hit:
    """A placement finding, one level lower on a pod that requests no accelerator (for a
    coordinator: nor do the other pods of its object, which it takes down with it; for a
    service that holds no container: nor does the runtime it names, when the input has it)."""
    w = ctx.workload
    return by_impact(w, Hit(path, message, fix=fix), dependents=w.role == "coordinator",
                     runtimes=ctx.runtimes)


def _open_terms(pod: dict[str, Any], profile: Profile) -> list[int]:
    """The required nodeAffinity terms that admit preemptible nodes (terms are ORed: each is
    a hole to close)."""
    found = []
    for i, term in enumerate(sequence(pod, (*_REQUIRED, "nodeSelectorTerms"))):
        if not isinstance(term, dict):
            continue
        single = dict(pod)
        single["affinity"] = {
            "nodeAffinity": {_REQUIRED[2]: {"nodeSelectorTerms": [term]}},
        }
        if placement_of(single, profile).preemptible:
            found.append(i)
    return found


def _unconfined_position(w: Workload, profile: Profile) -> Path:
    """Where to report a long-running pod that can land on preemptible nodes.

    The first required nodeAffinity term that admits preemptible nodes (the hole to close);
    else the pod's ``affinity`` key (where the exclusion belongs); else the pod spec key.
    """
    terms = _open_terms(w.pod, profile)
    if terms:
        return (*w.pod_path, *_REQUIRED, "nodeSelectorTerms", terms[0])
    if "affinity" in w.pod:
        return (*w.pod_path, "affinity")
    return w.pod_path


def _standard_fix(w: Workload, profile: Profile) -> Fix | None:
    """The profile's standard placement merged into the pod's affinity: the required
    ``NotIn`` expression on the preemptible label in every term that admits preemptible
    nodes, or a first term with it. None where that is the author's call: a term that asks
    for preemptible nodes by name (``In`` the preemptible value), or an affinity that is not
    the mappings Kubernetes defines."""
    excluded = {"key": profile.label_key, "operator": "NotIn", "values": [profile.label_value]}
    affinity = copy.deepcopy(w.pod.get("affinity", {}))
    node = affinity.setdefault("nodeAffinity", {}) if isinstance(affinity, dict) else None
    required = node.setdefault(_REQUIRED[2], {}) if isinstance(node, dict) else None
    if not isinstance(required, dict):
        return None
    terms = required.setdefault("nodeSelectorTerms", [])
    if not isinstance(terms, list) or not all(isinstance(t, dict) for t in terms):
        return None
    if not terms:
        terms.append({"matchExpressions": [excluded]})
    for i in _open_terms(w.pod, profile):
        expressions = terms[i].setdefault("matchExpressions", [])
        if not isinstance(expressions, list) or any(
                isinstance(e, dict) and e.get("key") == profile.label_key
                and e.get("operator") == "In" for e in expressions):
            return None
        expressions.append(excluded)
    return Fix((*w.pod_path, "affinity"), affinity)


def _exclusion_hint(w: Workload, profile: Profile) -> str:
    hint = (f"add a required nodeAffinity `{profile.label_key} NotIn [{profile.label_value}]` "
            "to every term")
    if profile.taint is not None and toleration(w.pod, profile) == "explicit":
        hint += f", or drop the toleration for `{profile.taint.key}`"
    return hint


def _why_preemptible(w: Workload, profile: Profile) -> str:
    """Why preemptible nodes can take the pod, in the words of the profile: never "they are
    not tainted" where the provider taints them."""
    taint = profile.taint
    how = toleration(w.pod, profile)
    if taint is None or how in (None, "untainted"):
        return "nothing in its placement keeps it off them"
    spelled = f"{taint.key}={taint.value}" if taint.value is not None else taint.key
    if how == "explicit":
        return (f"it tolerates their taint `{spelled}:{taint.effect}` and nothing in its "
                "placement keeps it off them")
    return (f"it asks for them in its node affinity, and the provider adds the toleration for "
            f"their taint `{spelled}:{taint.effect}` ({profile.name} profile)")


@rule("PM101")
def serving_on_preemptible(ctx: Context) -> Iterator[Hit]:
    w, p = ctx.workload, ctx.workload.placement
    if not w.long_running or w.role == "coordinator" or not p.only_preemptible:
        return
    yield _placed(ctx, p.selects or w.pod_path,
              f"{_what(w)} is long-running but only preemptible nodes can take it: every replica "
              f"goes down when its node is reclaimed ({ctx.profile.drain_window_seconds} s "
              "notice); keep it on standard nodes")


@rule("PM102")
def serving_not_pinned(ctx: Context) -> Iterator[Hit]:
    w, p = ctx.workload, ctx.workload.placement
    if not w.long_running or w.role == "coordinator" or not (p.preemptible and p.standard):
        return
    yield _placed(ctx, _unconfined_position(w, ctx.profile),
                  f"{_what(w)} is long-running and can land on preemptible nodes "
                  f"({_why_preemptible(w, ctx.profile)}); {_exclusion_hint(w, ctx.profile)}",
                  _standard_fix(w, ctx.profile))


@rule("PM103")
def coordinator_on_preemptible(ctx: Context) -> Iterator[Hit]:
    w, p = ctx.workload, ctx.workload.placement
    if w.role != "coordinator" or not p.preemptible or w.fault_tolerant:
        return  # (a fault-tolerant head: workers outlive it, a new head recovers its state)
    fix = None  # confined to preemptible nodes by its own selector: the author's call
    if p.only_preemptible:
        path = p.selects or w.pod_path
        how = "is confined to preemptible nodes"
    else:
        path = _unconfined_position(w, ctx.profile)
        how = f"can run on preemptible nodes ({_why_preemptible(w, ctx.profile)})"
        fix = _standard_fix(w, ctx.profile)
    yield _placed(ctx, path,
                  f"{_what(w)} is a coordinator / stateful anchor and {how}: a preemption "
                  f"takes every worker that depends on it down; "
                  f"{_exclusion_hint(w, ctx.profile)}", fix)


@rule("PM104")
def unschedulable_placement(ctx: Context) -> Iterator[Hit]:
    p = ctx.workload.placement
    if p.conflict is None:
        return
    reason = p.conflict_reason or "the placement rules contradict each other"
    yield Hit(p.conflict, f"no node can run this pod: {reason}")


# ---------------------------------------------------------------- PM105 compute-class-typo


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein plus adjacent transpositions)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def _squash(text: str) -> str:
    """Case, surrounding space and separators removed: ``Together.AI/compute_class`` ->
    ``togetheraicomputeclass``."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _close(found: str, wanted: str) -> bool:
    """Conservative near miss: same letters once case and separators are ignored, or within
    one edit (two for strings of 12+ characters) and a difflib ratio of at least 0.85."""
    if found == wanted or not found.strip():
        return False
    if _squash(found) == _squash(wanted):
        return True
    a, b = found.strip().casefold(), wanted.casefold()
    budget = 2 if len(wanted) >= 12 else 1
    if abs(len(a) - len(b)) > budget:
        return False  # no edit distance within the budget: skip the quadratic work
    if _distance(a, b) > budget:
        return False
    import difflib  # a near miss to weigh: not on every run's start-up

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


def _near_key(key: str, wanted: str) -> bool:
    """``key`` is a near miss of the label key ``wanted`` (never the exact key).

    A key with no prefix is compared with the name part alone (``compute_class``); a key with a
    different, unrelated prefix (``cloud.google.com/compute-class``) is someone else's label.
    """
    if key == wanted:
        return False
    if _close(key, wanted):
        return True
    _, _, name = wanted.rpartition("/")
    return "/" not in key and name != wanted and (key == name or _close(key, name))


Entry = tuple[str, Path, list[tuple[Any, Path]]]  # key, key path, (value, value path)...


def _expression_entries(terms: list[tuple[Any, Path]]) -> Iterator[Entry]:
    for term, term_path in terms:
        for e, expr in enumerate(sequence(term, ("matchExpressions",))):
            if not isinstance(expr, dict) or not isinstance(expr.get("key"), str):
                continue
            path = (*term_path, "matchExpressions", e)
            values = [(v, (*path, "values", i)) for i, v in enumerate(sequence(expr, ("values",)))]
            yield expr["key"], (*path, "key"), values


def _label_entries(pod: dict[str, Any], base: Path) -> Iterator[Entry]:
    """Every node-selection key of the pod, with its values: nodeSelector, required and
    preferred nodeAffinity expressions, tolerations."""
    for key, value in mapping(pod, ("nodeSelector",)).items():
        path = (*base, "nodeSelector", key)
        yield str(key), path, [(value, path)]
    required = (*base, *_REQUIRED, "nodeSelectorTerms")
    terms = [(term, (*required, t))
             for t, term in enumerate(sequence(pod, (*_REQUIRED, "nodeSelectorTerms")))]
    terms += [(get(pref, ("preference",)), (*base, *_PREFERRED, i, "preference"))
              for i, pref in enumerate(sequence(pod, _PREFERRED))]
    yield from _expression_entries(terms)
    for i, tol in enumerate(sequence(pod, ("tolerations",))):
        if isinstance(tol, dict) and isinstance(tol.get("key"), str):
            path = (*base, "tolerations", i)
            yield tol["key"], (*path, "key"), [(tol.get("value"), (*path, "value"))]


@rule("PM105")
def compute_class_typo(ctx: Context) -> Iterator[Hit]:
    w, profile = ctx.workload, ctx.profile
    wanted_keys = [profile.label_key]
    if profile.taint is not None and profile.taint.key not in wanted_keys:
        wanted_keys.append(profile.taint.key)
    for key, key_path, values in _label_entries(w.pod, w.pod_path):
        if key in wanted_keys:
            for value, value_path in values:
                if isinstance(value, str) and _close(value, profile.label_value):
                    yield Hit(value_path,
                              f"value {value!r} of {key!r} looks like a typo of "
                              f"{profile.label_value!r}; label values are exact and "
                              "case-sensitive, so it does not match the preemptible nodes' label",
                              value=True)
            continue
        for wanted in wanted_keys:
            if _near_key(key, wanted):
                yield Hit(key_path,
                          f"key {key!r} looks like a typo of {wanted!r}; no node carries it, so "
                          "this placement rule does not do what it says")
                break
