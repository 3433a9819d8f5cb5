"""The rules the policies enforce, each as CEL that decides as lint's check does, and why the
others stay lint only.

Every exported rule reads ``variables.placed``: one map per pod template of the admitted
object (:mod:`.kinds`) with its role, its placement under the active profile
(:mod:`.placement`), the grace-period cap of the profile that governs it and that profile's
name. A rule is a condition on one such map (the object is denied when a template meets it)
and a message naming the rule, the object and the value at fault.

A rule whose decision needs more than the object, a shell parser or the cluster request is
not exported (:data:`LINT_ONLY`). PM201 needs a shell parser only for a serving or
coordinator pod that runs a command: such objects are left to lint by a match condition
(``scope``), so what the policy judges it judges as lint does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from pmanifest.admission.cel import all_of, any_of, fresh, string
from pmanifest.admission.kinds import case_folded, declared, role
from pmanifest.admission.placement import governing, placement
from pmanifest.admission.scope import (
    EXPORTED_KINDS,
    ROLE_SCOPE,
    SCOPED,
    Covered,
    applicable,
)
from pmanifest.kube.contract import DISRUPTION_TARGET, KUBERNETES_DEFAULT_GRACE, SIGTERM_EXIT
from pmanifest.kube.profile import Profile

HEADROOM = 2  # rules.jobs.HEADROOM (a test keeps them equal: the checks are not imported here)
Roles = tuple[tuple[str, str], ...]  # the config's `roles:`

CHECKPOINT_ENV = (r"^(?:[A-Z0-9]+_)*(?:CHECKPOINTS?|CKPTS?)(?:_[A-Z0-9]+)*"
                  r"_(?:DIR|PATH|ROOT|LOCATION|FOLDER)\n?$")  # shell.pod's (Python's $)

class Exported(NamedTuple):
    """One rule as a policy: what denies a pod template, how the denial reads, which kinds it
    reads, and the match conditions that leave the objects it cannot decide to lint."""

    rule_id: str
    violates: Callable[[str], str]  # CEL on a `placed` entry: the template breaks the rule
    message: Callable[[str], str]  # CEL string for the first such entry
    kinds: tuple[str, ...] = ()  # the rule's catalogue kinds (() = every covered kind)
    roles: tuple[str, ...] = ()  # the rule's catalogue roles
    placement: bool = True  # reads the templates' placement
    scope: Callable[[Roles], tuple[tuple[str, str, str], ...]] = lambda _: ()
    # (name, CEL on the object, what lint alone decides) of each scope condition


NAME = ("has(object.metadata) && has(object.metadata.name) ? object.metadata.name : "
        "(has(object.metadata) && has(object.metadata.generateName) ? "
        "object.metadata.generateName + '*' : '')")


def _who(x: str) -> str:
    return f"object.kind + ' ' + \"'\" + variables.name + \"'\" + ': ' + {x}.title"


def placed(profile: Profile) -> str:
    """``variables.placed``: each template with its role and placement."""
    other = profile.classes_profile
    t = "t"
    where = placement(f"{t}.pod", profile)
    cap = governing(f"{t}.pod", profile, str(profile.grace_period_cap),
                    str(other.grace_period_cap))
    named = governing(f"{t}.pod", profile, string(profile.name), string(other.name))
    fields = {"pod": f"{t}.pod", "role": role(t), "containers": f"{t}.containers",
              "job": f"{t}.job", "isJob": f"{t}.isJob", "title": f"{t}.title",
              "pre": where.preemptible, "std": where.standard, "contra": where.contradiction,
              "cap": cap, "profile": named}
    body = ", ".join(f"'{key}': dyn({value})" for key, value in fields.items())
    return f"variables.templates.map({t}, {{{body}}})"


# ------------------------------------------------------------------------ PM101 - PM104

def _where(profile: Profile) -> str:
    return f"{profile.label_key}={profile.label_value}"


def _pm101(x: str) -> str:
    return f"{x}.role == 'serving' && {x}.pre && !{x}.std"


def _pm102(x: str) -> str:
    return f"{x}.role == 'serving' && {x}.pre && {x}.std"


def _pm103(x: str) -> str:
    return f"{x}.role == 'coordinator' && {x}.pre"


def _pm104(x: str) -> str:
    return f"{x}.contra && !{x}.pre && !{x}.std"


# ------------------------------------------------------------------------------------ PM201

def _grace(x: str) -> str:
    return f"{x}.pod.terminationGracePeriodSeconds"


def _over_cap(x: str) -> str:
    return all_of([f"has({_grace(x)})", f"{_grace(x)} > {x}.cap",
                   f"{_grace(x)} != {KUBERNETES_DEFAULT_GRACE}"])


def _checkpoint_env(x: str) -> str:
    """A container names a checkpoint directory in its environment (``CHECKPOINT_ENV``)."""
    c, e = fresh("c"), fresh("e")
    return (f"{x}.containers.exists({c}, has({c}.env) && {c}.env.exists({e}, has({e}.name) && "
            f"{e}.name.matches({string(CHECKPOINT_ENV)})))")


def _pm201(x: str) -> str:
    return all_of([f"{x}.role in ['worker', 'coordinator', 'serving']", f"{x}.pre",
                   _over_cap(x), f"{x}.role == 'worker' || ({_checkpoint_env(x)})"])


def _pm201_scope(roles: Roles) -> tuple[tuple[str, str, str], ...]:
    """Objects with a serving or coordinator template that runs a command and names no
    checkpoint directory: whether it checkpoints (and so whether PM201 applies) is in its
    script, which only lint reads."""
    from pmanifest.admission.kinds import templates

    t, c = fresh("t"), fresh("c")
    commands = (f"{t}.containers.exists({c}, has({c}.command) && size({c}.command) > 0)")
    undecided = all_of([f"({role(t)}) in ['coordinator', 'serving']",
                        f"!({_checkpoint_env(t)})", commands])
    expression = f"!({templates(roles)}).exists({t}, {undecided})"
    name, what = SCOPED["PM201"]
    return ((name, expression, what),)


def _role_scope(roles: Roles) -> tuple[tuple[str, str, str], ...]:
    """Objects with a template whose role lint reads from what its pod runs (a StatefulSet
    with no volumeClaimTemplates): the placement rules' verdict depends on it."""
    from pmanifest.admission.kinds import inferred, templates

    t = fresh("t")
    name, what = ROLE_SCOPE
    return ((name, f"!({templates(roles)}).exists({t}, {inferred(t)})", what),)


def _pm201_scopes(roles: Roles) -> tuple[tuple[str, str, str], ...]:
    return (*_pm201_scope(roles), *_role_scope(roles))


# ------------------------------------------------------------------------------ PM401-PM403

def _action(r: str) -> str:
    return f"(has({r}.action) ? {r}.action : '')"


def _disruption(r: str) -> str:
    """``rules.jobs._matches_disruption``: DisruptionTarget, status True or left out."""
    c = fresh("c")
    return (f"has({r}.onPodConditions) && {r}.onPodConditions.exists({c}, has({c}.type) && "
            f"{c}.type == {string(DISRUPTION_TARGET)} && (!has({c}.status) || "
            f"{c}.status == 'True'))")


def _sigterm(r: str) -> str:
    """``rules.jobs._matches_sigterm_exit``: the exit codes match 143."""
    codes = f"{r}.onExitCodes"
    values = f"{codes}.values"
    return (f"has({codes}) && has({codes}.operator) && ({codes}.operator == 'In' ? "
            f"(has({values}) && {SIGTERM_EXIT} in {values}) : ({codes}.operator == 'NotIn' && "
            f"has({values}) && size({values}) > 0 && !({SIGTERM_EXIT} in {values})))")


def _rules(x: str) -> str:
    policy = f"{x}.job.podFailurePolicy"
    return f"(has({policy}.rules) ? {policy}.rules : [])"


def _ignores_preemption(x: str) -> str:
    """``rules.jobs._ignore_problem`` is None: the first rule that decides a preempted pod
    (one matching it that does not ignore it, or an Ignore rule on DisruptionTarget) is the
    latter."""
    r = fresh("r")
    deciding = (f"{_rules(x)}.filter({r}, (({_disruption(r)}) || ({_sigterm(r)})) && "
                f"({_action(r)} != 'Ignore' || ({_disruption(r)})))")
    return f"size({deciding}) > 0 && {_action(deciding + '[0]')} == 'Ignore'"


def _pm401(x: str) -> str:
    return all_of([f"{x}.isJob", f"{x}.pre", f"!has({x}.job.podFailurePolicy) || "
                                             f"!({_ignores_preemption(x)})"])


def _pm402(x: str) -> str:
    return all_of([f"{x}.isJob", f"has({x}.job.podFailurePolicy)",
                   f"!has({x}.pod.restartPolicy) || {x}.pod.restartPolicy != 'Never'"])


def _low(x: str, key: str) -> str:
    return f"has({x}.job.{key}) && {x}.job.{key} < {HEADROOM}"


def _pm403(x: str) -> str:
    r, s = fresh("r"), fresh("s")
    ignoring = f"{_rules(x)}.filter({r}, {_action(r)} == 'Ignore')"
    return all_of([f"{x}.isJob", f"{x}.pre", f"has({x}.job.podFailurePolicy)",
                   f"{ignoring}.exists({s}, {_disruption(s)})",
                   f"!{ignoring}.exists({s}, {_sigterm(s)})",
                   any_of([_low(x, "backoffLimit"), _low(x, "backoffLimitPerIndex")])])


# --------------------------------------------------------------------------------- messages

def _message(rule_id: str, slug: str, text: Callable[[str], str]) -> Callable[[str], str]:
    def build(x: str) -> str:
        return f"'{rule_id} {slug}: ' + {_who(x)} + {text(x)}"
    return build


def _placement_text(what: str, tail: str) -> Callable[[str], str]:
    def text(x: str) -> str:
        return (f"' (role ' + {x}.role + ') {what} (' + {x}.profile + ' profile): "
                f"{tail}; see pmanifest explain'")
    return text


def _grace_text(x: str) -> str:
    return (f"': terminationGracePeriodSeconds is ' + string({_grace(x)}) + ', above the ' + "
            f"string({x}.cap) + ' s cap of preemptible nodes (' + {x}.profile + ' profile): "
            "the node is removed at the end of its drain window whatever the pod is doing; set "
            "it to the cap or less'")


def _pm401_text(x: str) -> str:
    why = (f"(has({x}.job.podFailurePolicy) ? 'its podFailurePolicy does not ignore a "
           "preempted pod first' : 'it has no podFailurePolicy')")
    return (f"' can run on preemptible nodes but ' + {why} + ': every preemption consumes "
            "backoffLimit; add a podFailurePolicy rule `action: Ignore` with `onPodConditions: "
            f"[{{type: {DISRUPTION_TARGET}}}]`'")


def _pm402_text(x: str) -> str:
    value = f"(has({x}.pod.restartPolicy) ? {x}.pod.restartPolicy : 'not set')"
    return (f"': podFailurePolicy requires restartPolicy Never, but it is ' + {value} + "
            "'; set `restartPolicy: Never`'")


def _pm403_text(x: str) -> str:
    value = (f"(has({x}.job.backoffLimit) && {x}.job.backoffLimit < {HEADROOM} ? 'backoffLimit "
             f"is ' + string({x}.job.backoffLimit) : 'backoffLimitPerIndex is ' + "
             f"string({x}.job.backoffLimitPerIndex))")
    return (f"': ' + {value} + ' and no podFailurePolicy rule ignores exit code {SIGTERM_EXIT}:"
            f" one preemption without a {DISRUPTION_TARGET} condition can fail the Job; add an "
            f"Ignore rule on exit code {SIGTERM_EXIT} or raise it to at least {HEADROOM}'")


EXPORTED: dict[str, Exported] = {
    "PM101": Exported("PM101", _pm101, _message("PM101", "serving-on-preemptible", _placement_text(
        "is long-running but only preemptible nodes can take it",
        "every replica goes down when its node is reclaimed; keep it on standard nodes")),
        scope=_role_scope),
    "PM102": Exported("PM102", _pm102, _message(
        "PM102", "serving-not-pinned-to-standard", _placement_text(
            "is long-running and can land on preemptible nodes",
            "add a required nodeAffinity NotIn on the preemptible label to every term")),
        scope=_role_scope),
    "PM103": Exported("PM103", _pm103, _message(
        "PM103", "coordinator-on-preemptible", _placement_text(
            "is a coordinator / stateful anchor and can run on preemptible nodes",
            "a preemption takes every worker that depends on it down; add a required "
            "nodeAffinity NotIn on the preemptible label to every term")),
        scope=_role_scope),
    "PM104": Exported("PM104", _pm104, _message(
        "PM104", "unschedulable-placement",
        lambda x: "': no node can run this pod: its placement rules contradict each other'")),
    "PM201": Exported("PM201", _pm201, _message("PM201", "grace-period-over-limit", _grace_text),
                      roles=("worker", "coordinator", "serving"), scope=_pm201_scopes),
    "PM401": Exported("PM401", _pm401, _message(
        "PM401", "preemption-counts-as-failure", _pm401_text),
        kinds=("batch/Job", "batch/CronJob")),
    "PM402": Exported("PM402", _pm402, _message(
        "PM402", "pod-failure-policy-restart-policy", _pm402_text),
        kinds=("batch/Job", "batch/CronJob"), placement=False),
    "PM403": Exported("PM403", _pm403, _message(
        "PM403", "backoff-limit-no-headroom", _pm403_text), kinds=("batch/Job", "batch/CronJob")),
}


# ------------------------------------------------------------------------------ suppression

def suppression_pattern(rule_id: str, slug: str) -> str:
    """An RE2 pattern that finds ``rule_id`` or ``slug`` among the comma-separated names of a
    ``pmanifest.io/ignore`` value as :func:`pmanifest.lint.suppress.rule_ids` reads them: each
    stripped of whitespace (``str.strip``), the id in any case (``str.upper``), the slug as
    written."""
    blank = _blank_class()
    upper = case_folded("upper")
    ident = "".join("[" + "".join(upper.get(ch, [ch])) + "]" if ch.isalpha() else ch
                    for ch in rule_id)
    return f"(?:^|,){blank}*(?:{ident}|{re.escape(slug)}){blank}*(?:,|$)"


@functools.cache
def _blank_class() -> str:
    """A character class of every character ``str.strip`` removes (found once: a scan of
    every code point)."""
    return "[" + "".join(_escape_in_class(chr(c)) for c in range(0x110000)
                         if chr(c).isspace()) + "]"


def _escape_in_class(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-[" else ch


def suppressed(rule_id: str, slug: str, kinds: tuple[Covered, ...]) -> str:
    """The ignore annotation of the object or of one of its pod templates names the rule."""
    from pmanifest.admission.kinds import metas
    from pmanifest.lint.suppress import IGNORE_ANNOTATION

    m = fresh("m")
    key = string(IGNORE_ANNOTATION)
    return (f"({metas(kinds)}).exists({m}, has({m}.annotations) && {key} in {m}.annotations && "
            f"{m}.annotations[{key}].matches({string(suppression_pattern(rule_id, slug))}))")


def exported_kinds(rule: Exported) -> tuple[Covered, ...]:
    return applicable(rule.kinds)


assert {k: r.kinds for k, r in EXPORTED.items()} == EXPORTED_KINDS  # one list, said twice


__all__ = ["EXPORTED", "NAME", "Exported", "declared", "exported_kinds", "suppressed"]
