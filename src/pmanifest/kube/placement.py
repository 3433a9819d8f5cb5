"""Where can a pod run: on preemptible nodes, standard nodes, both, or neither?

One answer per pod template, computed from ``nodeSelector``, required node affinity (terms are
ORed, expressions inside a term ANDed, and the whole ANDed with ``nodeSelector``), ``nodeName``
and, for providers that taint preemptible nodes, tolerations (or the provider's own, for pods
that ask for preemptible nodes where it adds them). A pod that selects one of the profile's
compute classes is placed under the profile of those classes (:meth:`Profile.for_pod`).
Every rule reads this answer; no rule re-derives placement.

Node model, from the active profile: a preemptible node carries ``label_key=label_value`` (and
the profile's taint, if any); a standard node either lacks the label or carries another value.
Capacity the profile names as never preemptible (``standard_capacity``: GKE flex-start, queued
provisioning, reservations, and compute classes of the input whose priorities are all
on-demand) has standard nodes only: a term that requires it fits no preemptible node. So do
the nodes of the control plane under every profile (``CONTROL_PLANE``): no provider sells them
preemptible, so a pod that requires the control-plane role (nodeSelector or a required
affinity term; a preferred one can still be placed elsewhere) runs on standard nodes.
Where the manifest does not say, both are assumed possible (no false alarms from guessing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from pmanifest.kube.profile import Capacity, Profile, Taint
from pmanifest.loader.positions import Path

# The control-plane role, as kubeadm (control-plane; master before 1.24) and older installers
# (kubernetes.io/role) label it: any value of the node-role keys counts (they are set empty)
CONTROL_PLANE = (Capacity("node-role.kubernetes.io/control-plane"),
                 Capacity("node-role.kubernetes.io/master"),
                 Capacity("kubernetes.io/role", ("control-plane", "master")))


def never_preemptible(profile: Profile) -> tuple[Capacity, ...]:
    """The labels of capacity that is never preemptible under ``profile``: its own standard
    capacity and the control plane's."""
    return (*profile.standard_capacity, *CONTROL_PLANE)


class Requirement(NamedTuple):
    """One node-selector requirement: a label key, an operator, its values."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...]
    path: Path  # where it is written, from the document root


class Placement(NamedTuple):
    """Where a pod can run: on preemptible nodes, standard nodes, both or neither."""

    preemptible: bool  # some preemptible node can take the pod
    standard: bool  # some standard node can take the pod
    selects: Path | None  # the field that confines the pod to preemptible nodes
    excludes: Path | None  # the field that keeps the pod off preemptible nodes
    conflict: Path | None  # where contradictory rules meet, when the pod fits nowhere
    conflict_reason: str | None = None

    @property
    def only_preemptible(self) -> bool:
        return self.preemptible and not self.standard


def _as_str_tuple(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list):
        return ()
    return tuple(str(v) for v in values if isinstance(v, str | int | float | bool))


def _node_selector(pod: dict[str, Any], base: Path) -> list[Requirement]:
    selector = pod.get("nodeSelector")
    if not isinstance(selector, dict):
        return []
    return [
        Requirement(str(key), "In", (str(value),), (*base, "nodeSelector", key))
        for key, value in selector.items()
        if isinstance(value, str | int | float | bool)
    ]


def _affinity_terms(pod: dict[str, Any], base: Path) -> list[list[Requirement]] | None:
    """Required node affinity terms, or None when the pod has none."""
    required_path = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    node: Any = pod
    for part in required_path:
        node = node.get(part) if isinstance(node, dict) else None
    terms = node.get("nodeSelectorTerms") if isinstance(node, dict) else None
    if not isinstance(terms, list):
        return None
    out: list[list[Requirement]] = []
    for t, term in enumerate(terms):
        if not isinstance(term, dict):
            continue
        reqs: list[Requirement] = []
        for field in ("matchExpressions", "matchFields"):
            exprs = term.get(field)
            if not isinstance(exprs, list):
                continue
            for e, expr in enumerate(exprs):
                if not isinstance(expr, dict) or not isinstance(expr.get("key"), str):
                    continue
                key = expr["key"] if field == "matchExpressions" else "field:" + expr["key"]
                path = (*base, *required_path, "nodeSelectorTerms", t, field, e)
                operator = str(expr.get("operator"))
                reqs.append(Requirement(key, operator, _as_str_tuple(expr.get("values")), path))
        out.append(reqs)
    return out


def _fits_preemptible(req: Requirement, label_value: str) -> bool:
    """Can a preemptible node (label_key=label_value) satisfy ``req``?"""
    op = req.operator
    if op == "In":
        return label_value in req.values
    if op == "NotIn":
        return label_value not in req.values
    return op == "Exists"  # DoesNotExist fails; Gt/Lt on a non-number label fail


def _fits_standard(req: Requirement, label_value: str) -> bool:
    """Can some standard node (label absent, or any other value) satisfy ``req``?"""
    if req.operator == "In":
        return any(v != label_value for v in req.values)
    return req.operator in ("NotIn", "Exists", "DoesNotExist")


def _consistent(reqs: list[Requirement]) -> Requirement | None:
    """The first requirement that contradicts earlier ones on the same key, if any.

    The profile label is checked too: ``nodeSelector {label: standard}`` ANDed with
    ``NotIn [standard]`` fits no node, although each alone fits some standard node.
    """
    allowed: dict[str, set[str]] = {}
    excluded: dict[str, set[str]] = {}
    exists: dict[str, bool] = {}
    for req in reqs:
        key = req.key
        if req.operator == "In":
            current = allowed.get(key)
            allowed[key] = set(req.values) if current is None else current & set(req.values)
            if exists.get(key) is False:
                return req
        elif req.operator == "NotIn":
            excluded.setdefault(key, set()).update(req.values)
        elif req.operator == "Exists":
            if exists.get(key) is False:
                return req
            exists[key] = True
        elif req.operator == "DoesNotExist":
            if exists.get(key) is True or key in allowed:
                return req
            exists[key] = False
        if key in allowed and not allowed[key] - excluded.get(key, set()):
            return req
    return None


def _node_name_class(name: str, profile: Profile) -> tuple[bool, bool]:
    if profile.preemptible_node_prefix and name.startswith(profile.preemptible_node_prefix):
        return True, False
    if profile.standard_node_prefix and name.startswith(profile.standard_node_prefix):
        return False, True
    return True, True


def _field_name_class(reqs: list[Requirement], profile: Profile) -> tuple[bool, bool]:
    """``matchFields: metadata.name In [...]`` pins nodes by name, like ``nodeName``."""
    fit_p = fit_s = True
    for req in reqs:
        if req.key == "field:metadata.name" and req.operator == "In" and req.values:
            classes = [_node_name_class(name, profile) for name in req.values]
            fit_p = fit_p and any(p for p, _ in classes)
            fit_s = fit_s and any(s for _, s in classes)
    return fit_p, fit_s


def toleration(pod: dict[str, Any], profile: Profile) -> str | None:
    """How the pod gets past the profile's taint on preemptible nodes: "untainted" (there is
    none), "explicit" (one of its tolerations matches), "automatic" (it asks for preemptible
    nodes and the provider adds the toleration), or None (it cannot land there)."""
    taint = profile.taint
    if taint is None:
        return "untainted"
    tolerations = pod.get("tolerations")
    for tol in tolerations if isinstance(tolerations, list) else []:
        if isinstance(tol, dict) and _matches(tol, taint):
            return "explicit"
    if profile.auto_toleration and _asks_for_preemptible(pod, profile):
        return "automatic"
    return None


def _matches(tol: dict[str, Any], taint: Taint) -> bool:
    key, op, effect = tol.get("key"), tol.get("operator", "Equal"), tol.get("effect")
    if effect not in (None, "", taint.effect):
        return False
    if op == "Exists":
        return key in (None, "", taint.key)
    return key == taint.key and op == "Equal" and tol.get("value") == taint.value


def _asks_for_preemptible(pod: dict[str, Any], profile: Profile) -> bool:
    """A nodeSelector, or a required or preferred node affinity expression, that names the
    preemptible label with its value (how GKE Autopilot recognises a Spot Pod request)."""
    selector = pod.get("nodeSelector")
    if isinstance(selector, dict) and str(selector.get(profile.label_key)) == profile.label_value:
        return True
    return any(e.get("key") == profile.label_key and e.get("operator") == "In"
               and profile.label_value in _as_str_tuple(e.get("values"))
               for e in _affinity_expressions(pod))


def _affinity_expressions(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every matchExpression of the pod's required and preferred node affinity."""
    node = pod.get("affinity")
    node = node.get("nodeAffinity") if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    found = list(terms) if isinstance(terms, list) else []
    preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(preferred, list):
        found += [p.get("preference") for p in preferred if isinstance(p, dict)]
    for term in found:
        exprs = term.get("matchExpressions") if isinstance(term, dict) else None
        yield from (e for e in exprs if isinstance(e, dict)) if isinstance(exprs, list) else ()


class _NodeName(NamedTuple):
    """What ``nodeName`` says: which node classes it allows, and where it is written."""

    preemptible: bool = True
    standard: bool = True
    path: Path | None = None


@dataclass
class _Outcome:
    """The answer being built, term by term (terms are ORed: any term that fits counts)."""

    preemptible: bool = False
    standard: bool = False
    selects: Path | None = None
    excludes: Path | None = None
    conflict: Path | None = None
    reason: str | None = None

    def contradiction(self, path: Path | None, reason: str) -> None:
        self.conflict = self.conflict or path
        self.reason = self.reason or reason


def _node_name(pod: dict[str, Any], profile: Profile, base: Path) -> _NodeName:
    node_name = pod.get("nodeName")
    if not isinstance(node_name, str) or not node_name:
        return _NodeName()
    fit_p, fit_s = _node_name_class(node_name, profile)
    return _NodeName(fit_p, fit_s, (*base, "nodeName"))


def _standard_pin(reqs: list[Requirement], profile: Profile) -> Requirement | None:
    """The requirement that confines a term to capacity that is never preemptible under the
    profile (``In`` values all of its values, or ``Exists`` where any value counts)."""
    for req in reqs:
        for capacity in never_preemptible(profile):
            if req.key != capacity.key:
                continue
            if req.operator == "In" and req.values and (
                    not capacity.values or set(req.values) <= set(capacity.values)):
                return req
            if req.operator == "Exists" and not capacity.values:
                return req
    return None


def _fits(mine: list[Requirement], reqs: list[Requirement], name: _NodeName,
          profile: Profile) -> tuple[bool, bool]:
    """Can a preemptible node, a standard node, satisfy one term's requirements?"""
    term_p, term_s = _field_name_class(reqs, profile)
    value = profile.label_value
    fit_p = name.preemptible and term_p and all(_fits_preemptible(r, value) for r in mine) \
        and _standard_pin(reqs, profile) is None
    fit_s = name.standard and term_s and all(_fits_standard(r, value) for r in mine)
    return fit_p, fit_s


def _blocker(mine: list[Requirement], fits: Callable[[Requirement, str], bool], value: str,
             fallback: Path | None) -> Path | None:
    """Where the requirement is that rules one node class out (else nodeName's path)."""
    found = next((r for r in mine if not fits(r, value)), None)
    return found.path if found is not None else fallback


def _pin_path(reqs: list[Requirement], profile: Profile, name: _NodeName) -> Path | None:
    """Where never-preemptible capacity is required, else where nodeName is."""
    pinned = _standard_pin(reqs, profile)
    return pinned.path if pinned is not None else name.path


def _term(reqs: list[Requirement], name: _NodeName, profile: Profile, out: _Outcome) -> None:
    """Add what one (non-empty) term, ANDed with nodeSelector and nodeName, allows."""
    bad = _consistent(reqs)
    if bad is not None:
        out.contradiction(bad.path, f"no node can satisfy the requirements on {bad.key!r}")
        return
    value = profile.label_value
    mine = [r for r in reqs if r.key == profile.label_key]
    fit_p, fit_s = _fits(mine, reqs, name, profile)
    if fit_p and not fit_s:
        out.selects = out.selects or _blocker(mine, _fits_standard, value, name.path)
    if fit_s and not fit_p:
        out.excludes = out.excludes or _blocker(mine, _fits_preemptible, value,
                                                _pin_path(reqs, profile, name))
    if not fit_p and not fit_s:
        out.contradiction(mine[-1].path if mine else name.path,
                          f"no node can satisfy the requirements on {profile.label_key!r}")
    out.preemptible = out.preemptible or fit_p
    out.standard = out.standard or fit_s


def placement_of(pod: dict[str, Any], profile: Profile, base: Path = ()) -> Placement:
    profile = profile.for_pod(pod)
    selector = _node_selector(pod, base)
    terms = _affinity_terms(pod, base)
    name = _node_name(pod, profile, base)
    out = _Outcome()
    terms_path = (*base, "affinity", "nodeAffinity",
                  "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    for t, term in enumerate(terms if terms else [[]]):
        if terms and not term:  # an empty term matches no node (it does not mean "anywhere")
            out.contradiction((*terms_path, t), "an empty nodeSelectorTerm matches no node")
            continue
        _term(selector + term, name, profile, out)
    can_p = out.preemptible and toleration(pod, profile) is not None
    can_s = out.standard
    both = can_p and can_s
    fits = can_p or can_s
    return Placement(can_p, can_s, out.selects if can_p and not both else None,
                     out.excludes if can_s and not both else None,
                     None if fits else out.conflict, None if fits else out.reason)
