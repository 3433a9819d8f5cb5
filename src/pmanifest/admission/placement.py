"""Where can a pod run, in CEL: :mod:`pmanifest.kube.placement`'s answer restated for one profile.

The same node model and the same steps, so the policies place a pod exactly as lint does:
``nodeSelector`` ANDed with each required node affinity term (terms ORed; a term whose own
requirements are empty matches no node), a term whose requirements contradict each other on
one key fits no node, ``nodeName`` and ``matchFields metadata.name`` classify nodes by the
profile's name prefixes, and a tainted profile needs a matching toleration (or the provider's
own, for pods that ask for its preemptible nodes). A pod that selects one of the profile's
compute classes is placed under the profile of those classes.

Requirements are gathered into one list of ``{'key', 'op', 'values'}`` maps per term (the
selector's entries first, then the term's expressions and fields), as lint gathers them.
"""

from __future__ import annotations

from typing import NamedTuple

from pmanifest.admission.cel import all_of, any_of, at, fresh, present, string, strings
from pmanifest.kube.placement import never_preemptible
from pmanifest.kube.profile import ComputeClasses, Profile

REQUIRED = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
PREFERRED = ("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
NAME_FIELD = "field:metadata.name"


class PlacementCel(NamedTuple):
    """CEL for one pod: can it run on preemptible nodes, on standard nodes; did its placement
    meet a contradiction that lint reports at a position (PM104 when it also fits nowhere)."""

    preemptible: str
    standard: str
    contradiction: str


def placement(pod: str, profile: Profile) -> PlacementCel:
    """Placement of the pod at ``pod`` under ``profile`` (or its compute classes' profile)."""
    classes = profile.compute_classes
    own = _placement(pod, profile)
    if classes is None:
        return own
    other = _placement(pod, profile.classes_profile)
    chosen = selects_classes(pod, classes)
    return PlacementCel(*(f"({chosen}) ? ({a}) : ({b})" for a, b in zip(other, own, strict=True)))


def governing(pod: str, profile: Profile, value: str, other_value: str) -> str:
    """``value`` (CEL) for a pod governed by ``profile``, ``other_value`` for one that selects
    its compute classes."""
    classes = profile.compute_classes
    if classes is None or value == other_value:
        return value
    return f"({selects_classes(pod, classes)}) ? ({other_value}) : ({value})"


def selects_classes(pod: str, classes: ComputeClasses) -> str:
    """:meth:`Profile.for_pod`: the nodeSelector names one of the classes, or (without the
    key in the nodeSelector) every required term has an ``In`` expression on them."""
    key, values = string(classes.key), strings(classes.values)
    t, e, v = fresh("t"), fresh("e"), fresh("v")
    terms = _terms(pod)
    term_selects = all_of([
        f"has({t}.matchExpressions)",
        f"{t}.matchExpressions.exists({e}, " + all_of([
            f"has({e}.key)", f"{e}.key == {key}", f"has({e}.operator)", f"{e}.operator == 'In'",
            f"has({e}.values)", f"size({e}.values) > 0", f"{e}.values.all({v}, {v} in {values})",
        ]) + ")",
    ])
    return (f"({present(pod, ['nodeSelector'])} && {key} in {pod}.nodeSelector) ? "
            f"({pod}.nodeSelector[{key}] in {values}) : "
            f"({terms.present} && size({terms.at}) > 0 && {terms.at}.all({t}, {term_selects}))")


class _Terms(NamedTuple):
    present: str
    at: str


def _terms(pod: str) -> _Terms:
    path = [*REQUIRED, "nodeSelectorTerms"]
    return _Terms(present(pod, path), at(pod, path))


def _requirement(e: str, key: str) -> str:
    return (f"{{'key': dyn({key}), 'op': dyn(has({e}.operator) ? {e}.operator : 'None'), "
            f"'values': dyn(has({e}.values) ? {e}.values : [])}}")


def _own(term: str) -> str:
    """A term's own requirements: its matchExpressions, then its matchFields."""
    e, f = fresh("e"), fresh("f")
    expression = _requirement(e, f"{e}.key")
    by_field = _requirement(f, "'field:' + " + f"{f}.key")
    return (f"(has({term}.matchExpressions) ? {term}.matchExpressions.map({e}, {expression})"
            f" : []) + (has({term}.matchFields) ? {term}.matchFields.map({f}, {by_field}) : [])")


def _selector(pod: str) -> str:
    k = fresh("k")
    return (f"({present(pod, ['nodeSelector'])} ? {pod}.nodeSelector.map({k}, "
            f"{{'key': dyn({k}), 'op': dyn('In'), 'values': dyn([{pod}.nodeSelector[{k}]])}})"
            " : [])")


def _conflict(reqs: str) -> str:
    """:func:`pmanifest.kube.placement._consistent` fails: on some key, the ``In`` sets less the
    ``NotIn`` values leave nothing, or ``DoesNotExist`` meets ``In`` or ``Exists``."""
    a, b, c, v = fresh("a"), fresh("b"), fresh("c"), fresh("v")
    in_fails = (f"{a}.op == 'In' && !{a}.values.exists({v}, {reqs}.all({b}, {b}.key != {a}.key "
                f"|| ({b}.op == 'In' ? {v} in {b}.values : ({b}.op != 'NotIn' || "
                f"!({v} in {b}.values)))))")
    absent_fails = (f"{a}.op == 'DoesNotExist' && {reqs}.exists({c}, {c}.key == {a}.key && "
                    f"({c}.op == 'In' || {c}.op == 'Exists'))")
    return f"{reqs}.exists({a}, ({in_fails}) || ({absent_fails}))"


class _Names(NamedTuple):
    """How node names classify nodes under a profile (``_node_name_class``)."""

    preemptible_prefix: str | None
    standard_prefix: str | None

    def preemptible(self, name: str) -> str:
        """A node called ``name`` can be preemptible."""
        if self.standard_prefix is None:
            return "true"
        standard = f"{name}.startsWith({string(self.standard_prefix)})"
        if self.preemptible_prefix is None:
            return f"!{standard}"
        return f"{name}.startsWith({string(self.preemptible_prefix)}) || !{standard}"

    def standard(self, name: str) -> str:
        """A node called ``name`` can be standard."""
        if self.preemptible_prefix is None:
            return "true"
        return f"!{name}.startsWith({string(self.preemptible_prefix)})"


def _fits(reqs: str, profile: Profile, names: _Names, pod: str, preemptible: bool) -> str:
    """Can a preemptible (a standard) node satisfy the term's requirements and nodeName?"""
    x, n, v = fresh("x"), fresh("n"), fresh("v")
    key, value = string(profile.label_key), string(profile.label_value)
    classify = names.preemptible if preemptible else names.standard
    by_field = (f"!({x}.key == {string(NAME_FIELD)} && {x}.op == 'In' && size({x}.values) > 0) "
                f"|| {x}.values.exists({n}, {classify(n)})")
    if preemptible:
        label = (f"{x}.op == 'In' ? {value} in {x}.values : ({x}.op == 'NotIn' ? "
                 f"!({value} in {x}.values) : {x}.op == 'Exists')")
    else:
        label = (f"{x}.op == 'In' ? {x}.values.exists({v}, {v} != {value}) : "
                 f"{x}.op in ['NotIn', 'Exists', 'DoesNotExist']")
    node_name = f"!({_has_name(pod)}) || {classify(f'{pod}.nodeName')}"
    pinned = [f"!{reqs}.exists({x}, {_pins(x, profile)})"] if preemptible else []
    return all_of([node_name,
                   f"{reqs}.all({x}, ({by_field}) && ({x}.key != {key} || ({label})))",
                   *pinned])


def _pins(x: str, profile: Profile) -> str:
    """Requirement ``x`` confines the pod to capacity the profile says is never preemptible
    (:func:`pmanifest.kube.placement._standard_pin`)."""
    v = fresh("v")
    return any_of([all_of([f"{x}.key == {string(c.key)}",
                           f"{x}.op == 'In' && size({x}.values) > 0 && "
                           f"{x}.values.all({v}, {v} in {strings(c.values)})" if c.values else
                           f"({x}.op == 'In' && size({x}.values) > 0) || {x}.op == 'Exists'"])
                   for c in never_preemptible(profile)])


def _has_name(pod: str) -> str:
    return f"has({pod}.nodeName) && {pod}.nodeName != ''"


def _placement(pod: str, profile: Profile) -> PlacementCel:
    names = _Names(profile.preemptible_node_prefix, profile.standard_node_prefix)
    terms = _terms(pod)
    t, t2, r = fresh("t"), fresh("t"), fresh("r")
    selector = _selector(pod)
    # one requirement list per term that has requirements of its own (or the selector alone)
    lists = (f"(({terms.present}) && size({terms.at}) > 0 ? {terms.at}.filter({t}, "
             f"size({_own(t)}) > 0).map({t}, {selector} + {_own(t)}) : [{selector}])")
    empty = f"({terms.present}) && {terms.at}.exists({t2}, size({_own(t2)}) == 0)"
    fit_p = _fits(r, profile, names, pod, preemptible=True)
    fit_s = _fits(r, profile, names, pod, preemptible=False)
    conflict = _conflict(r)
    x = fresh("x")
    mine = f"{r}.exists({x}, {x}.key == {string(profile.label_key)})"
    out_p = f"{lists}.exists({r}, !({conflict}) && ({fit_p}))"
    out_s = f"{lists}.exists({r}, !({conflict}) && ({fit_s}))"
    contradiction = any_of([empty, f"{lists}.exists({r}, ({conflict}) || (!({fit_p}) && "
                                   f"!({fit_s}) && ({mine} || ({_has_name(pod)}))))"])
    return PlacementCel(all_of([out_p, toleration(pod, profile)]), out_s, contradiction)


def toleration(pod: str, profile: Profile) -> str:
    """:func:`pmanifest.kube.placement.toleration` is not None: the pod gets past the profile's
    taint (there is none, one of its tolerations matches, or the provider adds one)."""
    taint = profile.taint
    if taint is None:
        return "true"
    o = fresh("o")
    operator = f"(has({o}.operator) ? {o}.operator : 'Equal')"
    value = (f"!has({o}.value)" if taint.value is None
             else f"has({o}.value) && {o}.value == {string(taint.value)}")
    matches = all_of([
        f"!has({o}.effect) || {o}.effect == '' || {o}.effect == {string(taint.effect)}",
        f"{operator} == 'Exists' ? (!has({o}.key) || {o}.key == '' || "
        f"{o}.key == {string(taint.key)}) : (has({o}.key) && {o}.key == {string(taint.key)} && "
        f"{operator} == 'Equal' && {value})",
    ])
    explicit = f"{present(pod, ['tolerations'])} && {pod}.tolerations.exists({o}, {matches})"
    if not profile.auto_toleration:
        return explicit
    return any_of([explicit, asks_for_preemptible(pod, profile)])


def asks_for_preemptible(pod: str, profile: Profile) -> str:
    """A nodeSelector, or a required or preferred node affinity expression, names the
    preemptible label with its value (``_asks_for_preemptible``)."""
    key, value = string(profile.label_key), string(profile.label_value)
    absent = "true" if profile.label_value == "None" else "false"  # str(None) == value
    selector = (f"{present(pod, ['nodeSelector'])} && ({key} in {pod}.nodeSelector ? "
                f"{pod}.nodeSelector[{key}] == {value} : {absent})")
    t, p, e = fresh("t"), fresh("p"), fresh("e")

    def names_it(exprs: str) -> str:
        return (f"{exprs}.exists({e}, has({e}.key) && {e}.key == {key} && has({e}.operator) && "
                f"{e}.operator == 'In' && has({e}.values) && {value} in {e}.values)")

    terms = _terms(pod)
    required = (f"{terms.present} && {terms.at}.exists({t}, has({t}.matchExpressions) && "
                f"{names_it(f'{t}.matchExpressions')})")
    preferred = (f"{present(pod, PREFERRED)} && {at(pod, PREFERRED)}.exists({p}, "
                 f"has({p}.preference) && has({p}.preference.matchExpressions) && "
                 f"{names_it(f'{p}.preference.matchExpressions')})")
    return any_of([selector, required, preferred])
