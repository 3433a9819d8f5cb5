"""Where can a pod run: on preemptible nodes, standard nodes, both, or neither?

One answer per pod template, computed from ``nodeSelector``, required node affinity (terms are
ORed, expressions inside a term ANDed, and the whole ANDed with ``nodeSelector``), ``nodeName``
and, for providers that taint preemptible nodes, tolerations. Every rule reads this answer;
no rule re-derives placement.

Node model, from the active profile: a preemptible node carries ``label_key=label_value`` (and
the profile's taint, if any); a standard node either lacks the label or carries another value.
Where the manifest does not say, both are assumed possible (no false alarms from guessing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pmanifest.document import Path
from pmanifest.profile import Profile


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...]
    path: Path  # where it is written, from the document root


@dataclass(frozen=True)
class Placement:
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


def _tolerates(pod: dict[str, Any], profile: Profile) -> bool:
    taint = profile.taint
    if taint is None:
        return True
    tolerations = pod.get("tolerations")
    if not isinstance(tolerations, list):
        return False
    for tol in tolerations:
        if not isinstance(tol, dict):
            continue
        key, op, effect = tol.get("key"), tol.get("operator", "Equal"), tol.get("effect")
        if effect not in (None, "", taint.effect):
            continue
        if op == "Exists" and key in (None, "", taint.key):
            return True
        if key == taint.key and op == "Equal" and tol.get("value") == taint.value:
            return True
    return False


def placement_of(pod: dict[str, Any], profile: Profile, base: Path = ()) -> Placement:
    selector = _node_selector(pod, base)
    terms = _affinity_terms(pod, base)
    node_name = pod.get("nodeName")
    label = profile.label_key
    name_p, name_s = (True, True)
    name_path: Path | None = None
    if isinstance(node_name, str) and node_name:
        name_p, name_s = _node_name_class(node_name, profile)
        name_path = (*base, "nodeName")

    can_p = can_s = False
    selects: Path | None = None
    excludes: Path | None = None
    conflict: Path | None = None
    reason: str | None = None
    terms_path = (*base, "affinity", "nodeAffinity",
                  "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    for t, term in enumerate(terms if terms else [[]]):
        if terms and not term:
            # an empty term matches no node (it does not mean "anywhere")
            conflict = conflict or (*terms_path, t)
            reason = reason or "an empty nodeSelectorTerm matches no node"
            continue
        reqs = selector + term
        bad = _consistent(reqs)
        if bad is not None:
            conflict = conflict or bad.path
            reason = reason or f"no node can satisfy the requirements on {bad.key!r}"
            continue
        mine = [r for r in reqs if r.key == label]
        term_p, term_s = _field_name_class(reqs, profile)
        fit_p = name_p and term_p and all(_fits_preemptible(r, profile.label_value) for r in mine)
        fit_s = name_s and term_s and all(_fits_standard(r, profile.label_value) for r in mine)
        if fit_p and not fit_s:
            blocker = next((r for r in mine if not _fits_standard(r, profile.label_value)), None)
            selects = selects or (blocker.path if blocker else name_path)
        if fit_s and not fit_p:
            blocker = next((r for r in mine if not _fits_preemptible(r, profile.label_value)), None)
            excludes = excludes or (blocker.path if blocker else name_path)
        if not fit_p and not fit_s:
            conflict = conflict or (mine[-1].path if mine else name_path)
            reason = reason or f"no node can satisfy the requirements on {label!r}"
        can_p = can_p or fit_p
        can_s = can_s or fit_s
    if can_p and not _tolerates(pod, profile):
        can_p = False
    if can_p and can_s:
        selects = excludes = None
    if can_p or can_s:
        conflict = reason = None
    return Placement(can_p, can_s, selects if can_p else None, excludes if can_s else None,
                     conflict, reason)
