"""Rules: Jobs (see policies/rules-jobs.yaml for their metadata).

Both read the Job spec (``spec`` of a Job, ``spec.jobTemplate.spec`` of a CronJob) through the
workload view, never by walking the manifest themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pmanifest.kube.contract import DISRUPTION_TARGET, SIGTERM_EXIT
from pmanifest.kube.workloads import get, mapping, sequence
from pmanifest.loader.positions import Path
from pmanifest.rules import Context, Fix, Hit, rule
from pmanifest.rules.impact import by_impact

DISRUPTION = DISRUPTION_TARGET


def matches_disruption(policy_rule: dict[str, Any]) -> bool:
    """Does the rule's onPodConditions match the DisruptionTarget condition of a preempted pod?
    ``status`` defaults to "True" on the API server."""
    for cond in sequence(policy_rule, ("onPodConditions",)):
        if isinstance(cond, dict) and cond.get("type") == DISRUPTION \
                and cond.get("status", "True") in ("True", None):
            return True
    return False


def matches_sigterm_exit(policy_rule: dict[str, Any]) -> bool:
    """Does the rule's onExitCodes match a pod whose handler exited 143?"""
    codes = mapping(policy_rule, ("onExitCodes",))
    values = sequence(codes, ("values",))
    if codes.get("operator") == "In":
        return SIGTERM_EXIT in values
    if codes.get("operator") == "NotIn":
        return bool(values) and SIGTERM_EXIT not in values
    return False


def _ignore_problem(rules: list[Any], rules_path: Path) -> tuple[Path | None, str] | None:
    """None when a preempted pod is ignored; else (where to point, why).

    Rules are evaluated in order and the first match wins, so an earlier non-Ignore rule that
    also matches a preempted pod (its DisruptionTarget condition or its exit code 143) shadows
    the Ignore rule.
    """
    for i, policy_rule in enumerate(rules):
        if not isinstance(policy_rule, dict):
            continue
        disruption = matches_disruption(policy_rule)
        if not disruption and not matches_sigterm_exit(policy_rule):
            continue
        action = policy_rule.get("action")
        if action != "Ignore":
            return (*rules_path, i), (
                f"rule {i} ({action}) matches a preempted pod before any rule ignores it")
        if disruption:
            return None
    return None, f"no rule with action Ignore on onPodConditions type {DISRUPTION}"


# The rule PM401's fix adds (first: rules are evaluated in order). `status` is written out:
# the OpenAPI schema requires it until 1.37, though the API server defaults it to "True".
IGNORE_DISRUPTION = {"action": "Ignore",
                     "onPodConditions": [{"type": DISRUPTION, "status": "True"}]}


def _ignore_fix(policy_path: Path, policy: Any) -> Fix | None:
    """The podFailurePolicy with IGNORE_DISRUPTION first: a new policy, or the rule put
    before the others (which then match no preempted pod: the fix is proposed only when none
    did). None when the policy is not a mapping with a list of rules, or no policy at all."""
    if policy is None:
        return Fix(policy_path, {"rules": [IGNORE_DISRUPTION]})
    rules = policy.get("rules") if isinstance(policy, dict) else None
    if isinstance(policy, dict) and rules is None:
        return Fix((*policy_path, "rules"), [IGNORE_DISRUPTION])
    if isinstance(rules, list):
        return Fix((*policy_path, "rules"), [IGNORE_DISRUPTION, *rules])
    return None


@rule("PM401")
def preemption_counts_as_failure(ctx: Context) -> Iterator[Hit]:
    w = ctx.workload
    if w.job_path is None or not w.placement.preemptible:
        return
    policy_path: Path = (*w.job_path, "podFailurePolicy")
    policy = get(w.doc.data, policy_path)
    fix = _ignore_fix(policy_path, policy)
    if policy is None:
        where, why = w.job_path, "no podFailurePolicy"
    else:
        problem = _ignore_problem(sequence(policy, ("rules",)), (*policy_path, "rules"))
        if problem is None:
            return
        path, why = problem
        where = path or policy_path
        if path is not None:  # an earlier rule acts on preemptions: the author's call
            fix = None
    restart = w.pod.get("restartPolicy")
    also = "" if restart == "Never" else (
        f", and set the pod template's `restartPolicy: Never` (it is {restart!r}; a "
        "podFailurePolicy requires Never)" if restart is not None else
        ", and set the pod template's `restartPolicy: Never` (a podFailurePolicy requires it)")
    yield by_impact(w, Hit(
        where,
        f"{w.kind} can run on preemptible nodes but {why}: every preemption consumes "
        f"backoffLimit and can fail the {w.kind}; add a podFailurePolicy rule "
        f"`action: Ignore` with `onPodConditions: [{{type: {DISRUPTION}}}]`{also}",
        fix=fix))


@rule("PM402")
def pod_failure_policy_restart_policy(ctx: Context) -> Iterator[Hit]:
    w = ctx.workload
    if w.job_path is None or get(w.doc.data, (*w.job_path, "podFailurePolicy")) is None:
        return
    restart = w.pod.get("restartPolicy")
    fix = Fix((*w.pod_path, "restartPolicy"), "Never")  # the only value the API server takes
    if restart is None:
        # a JobSet's webhook defaults it to OnFailure (a TrainingRuntime makes a JobSet)
        default = "Always" if w.kind in ("Job", "CronJob") else "OnFailure"
        yield Hit((*w.job_path, "podFailurePolicy"),
                  "podFailurePolicy requires the pod template's restartPolicy to be Never, but "
                  f"it is not set (it defaults to {default}, which the API server rejects for a "
                  "Job with a podFailurePolicy); add `restartPolicy: Never`", fix=fix)
    elif restart != "Never":
        yield Hit((*w.pod_path, "restartPolicy"),
                  f"podFailurePolicy requires restartPolicy Never, not {restart!r}: the API "
                  "server rejects this Job; set `restartPolicy: Never`", fix=fix)


HEADROOM = 2  # fewer retries than this leave no room for a preemption the policy misses


@rule("PM403")
def backoff_limit_no_headroom(ctx: Context) -> Iterator[Hit]:
    w = ctx.workload
    if w.job_path is None or not w.placement.preemptible:
        return
    rules = [r for r in sequence(w.doc.data, (*w.job_path, "podFailurePolicy", "rules"))
             if isinstance(r, dict) and r.get("action") == "Ignore"]
    if not any(matches_disruption(r) for r in rules):
        return  # no policy that ignores preemptions at all: PM401's finding
    if any(matches_sigterm_exit(r) for r in rules):
        return  # the exit-code fallback catches what the condition misses
    job = mapping(w.doc.data, w.job_path)
    for key in ("backoffLimit", "backoffLimitPerIndex"):
        limit = job.get(key)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit < HEADROOM:
            yield Hit((*w.job_path, key),
                      f"{key} is {limit} and no podFailurePolicy rule ignores exit code "
                      f"{SIGTERM_EXIT}: a preempted pod that gets no {DISRUPTION} condition "
                      "(whether a drain sets it depends on how the pod is removed) counts as a "
                      f"failure, so one preemption can fail the {w.kind}; add an Ignore rule "
                      f"`onExitCodes: {{operator: In, values: [{SIGTERM_EXIT}]}}` or raise "
                      f"{key} to at least {HEADROOM}")
            return
