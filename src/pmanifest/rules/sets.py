"""Rules: sets of Jobs and gang jobs (see policies/rules-jobs.yaml): how a JobSet and a Volcano
job answer a preempted pod. PM401-PM403 are about a batch/v1 Job alone; a JobSet decides with
its own failurePolicy what a failed child Job costs, and a Volcano job with its policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard

from pmanifest.kube.contract import DISRUPTION_TARGET
from pmanifest.kube.workloads import Workload, get, mapping, sequence
from pmanifest.loader.positions import Path
from pmanifest.rules import Hit, ObjectContext, rule
from pmanifest.rules.impact import by_impact
from pmanifest.rules.jobs import matches_disruption, matches_sigterm_exit

JOBSET_GROUPS = ("jobset.x-k8s.io", "trainer.kubeflow.org")  # JobSets and trainer runtimes
VOLCANO_GROUPS = ("batch.volcano.sh", "flow.volcano.sh")
IGNORE_MAX_RESTARTS = ("RestartJobSetAndIgnoreMaxRestarts", "RestartJobAndIgnoreMaxRestarts")
POD_FAILURE_POLICY = "PodFailurePolicy"  # the child Job's failure reason after FailJob
BACKOFF_LIMIT = "BackoffLimitExceeded"
UNLIMITED = 2**31 - 1  # backoffLimit of a Job that restarts pods in place forever
FIX_JOBSET = (f"fail the child Job fast (podFailurePolicy `action: FailJob` on "
              f"{DISRUPTION_TARGET}) and add a failurePolicy rule `{{action: "
              f"RestartJobSetAndIgnoreMaxRestarts, onJobFailureReasons: [{POD_FAILURE_POLICY}]}}`"
              f", or ignore {DISRUPTION_TARGET} in the child Job's podFailurePolicy")


def _child_outcome(data: Any, w: Workload) -> tuple[str | None, Path | None]:
    """(the child Job's failure reason after a preemption, or None when the Job ignores it;
    the podFailurePolicy rule that decided, if any)."""
    assert w.job_path is not None
    rules_path = (*w.job_path, "podFailurePolicy", "rules")
    for i, policy_rule in enumerate(sequence(data, rules_path)):
        if not isinstance(policy_rule, dict):
            continue
        if matches_disruption(policy_rule) or matches_sigterm_exit(policy_rule):
            action = policy_rule.get("action")
            if action == "Ignore":
                return None, (*rules_path, i)
            return (POD_FAILURE_POLICY if action == "FailJob" else BACKOFF_LIMIT), \
                (*rules_path, i)
    return BACKOFF_LIMIT, None


def _set_answer(data: Any, w: Workload, reason: str) -> tuple[str | None, Path | None]:
    """What the JobSet does with a child Job failed for ``reason``: None when it restarts
    without counting; else (what happens, the failurePolicy rule that decided, if any)."""
    assert w.set_path is not None
    policy = get(data, (*w.set_path, "failurePolicy"))
    if not isinstance(policy, dict):
        return "fails the JobSet (it has no failurePolicy)", None
    limit = policy.get("maxRestarts", 0)
    for i, set_rule in enumerate(sequence(policy, ("rules",))):
        if not isinstance(set_rule, dict):
            continue
        reasons = sequence(set_rule, ("onJobFailureReasons",))
        targets = sequence(set_rule, ("targetReplicatedJobs",))
        if (reasons and reason not in reasons) or (targets and w.name not in targets):
            continue
        action = set_rule.get("action")
        if action in IGNORE_MAX_RESTARTS:
            return None, None
        what = ("fails the JobSet" if action == "FailJobSet"
                else f"restarts {'the Job' if action == 'RestartJob' else 'the JobSet'} and "
                     f"counts against maxRestarts ({limit})")
        return f"{what} (failurePolicy rule {i}, {action})", \
            (*w.set_path, "failurePolicy", "rules", i)
    return f"restarts the JobSet and counts against maxRestarts ({limit})", \
        (*w.set_path, "failurePolicy")


def _jobset_hit(data: Any, w: Workload) -> Hit | None:
    reason, decided = _child_outcome(data, w)
    assert w.job_path is not None
    limit = mapping(data, w.job_path).get("backoffLimit", 6)
    if reason is None or (reason == BACKOFF_LIMIT and limit == UNLIMITED):
        return None  # ignored, or never fails for counted pods (JobSet's in-place restart)
    answer, set_rule = _set_answer(data, w, reason)
    if answer is None:
        return None
    if reason == POD_FAILURE_POLICY:
        how = f"a preemption fails its Job at once ({POD_FAILURE_POLICY})"
        where = set_rule or decided
    else:
        how = f"every preemption counts against its Job's backoffLimit ({limit})"
        where = decided or w.name_path or w.job_path
    assert where is not None
    return Hit(where, f"{w.title} can run on preemptible nodes and {how}; the failed Job "
                      f"then {answer}: {FIX_JOBSET}")


@rule("PM404")
def jobset_counts_preemptions(ctx: ObjectContext) -> Iterator[Hit]:
    found: dict[Path, Hit] = {}  # one per path: the rule's severity if any of its Jobs runs
    for w in ctx.workloads:  # accelerators (a CPU initializer's beside the GPU trainer's)
        if w.group not in JOBSET_GROUPS or w.set_path is None or w.job_path is None \
                or not w.placement.preemptible:
            continue
        hit = _jobset_hit(ctx.doc.data, w)
        if hit is not None and (hit.path not in found or found[hit.path].lower):
            found[hit.path] = by_impact(w, hit)
    yield from found.values()


# --------------------------------------------------------------------------- Volcano

EVICTED = "PodEvicted"
ANY_EVENT = "*"
RESTARTS = ("RestartJob", "RestartTask", "RestartPod")


def _answers_eviction(policy: dict[str, Any]) -> bool:
    events = [policy.get("event"), *sequence(policy, ("events",))]
    return EVICTED in events or ANY_EVENT in events


def _eviction_policy(data: Any, w: Workload) -> tuple[Path, dict[str, Any]] | None:
    """The policy a Volcano job applies to an evicted pod of ``w``'s task: the task's own
    policies first, then the job's (as the Volcano controller reads them)."""
    assert w.set_path is not None
    for base in (w.pod_path[:-2], w.set_path):
        for i, policy in enumerate(sequence(data, (*base, "policies"))):
            if isinstance(policy, dict) and _answers_eviction(policy):
                return (*base, "policies", i), policy
    return None


def _volcano_hit(data: Any, w: Workload) -> Hit | None:
    """A policy that answers PodEvicted without restarting; None when there is none (or it
    restarts)."""
    found = _eviction_policy(data, w)
    if found is None or found[1].get("action") in RESTARTS:
        return None
    path, policy = found
    return Hit(path, f"{w.title} can run on preemptible nodes and this policy answers "
                     f"{EVICTED} with {policy.get('action')}: a preemption ends the job instead "
                     "of restarting it; use RestartJob (or RestartTask, RestartPod)")


def _gang(data: Any, set_path: Path) -> bool:
    """Do the job's pods run as a gang? Volcano schedules ``minAvailable`` pods together (its
    webhook defaults it to every task's replicas); a job whose minAvailable is 1 (one pod, or
    pods that work alone) loses nothing when an evicted pod is recreated alone. Replicas that
    are not integers count as a gang: the job is reported."""
    spec = mapping(data, set_path)
    least = spec.get("minAvailable")
    if _count(least):
        return least > 1
    total = 0
    for task in sequence(spec, ("tasks",)):
        replicas = mapping(task).get("replicas")
        if not _count(replicas):
            return True
        total += replicas
    return total > 1


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _unanswered_hit(data: Any, tasks: list[Workload]) -> Hit:
    """One hit for the tasks no policy answers PodEvicted for."""
    first = tasks[0]
    assert first.set_path is not None
    policies = (*first.set_path, "policies")
    where = policies if get(data, policies) is not None else (first.name_path or first.pod_path)
    names = list(dict.fromkeys(repr(t.name) for t in tasks if t.name is not None))
    which = f"task{'s' if len(names) > 1 else ''} {', '.join(names)}" if names else "its tasks"
    return Hit(where,
               f"{first.kind_title or first.kind} can run on preemptible nodes but no policy "
               f"answers {EVICTED} for {which}: Volcano only recreates an evicted pod alone, which "
               f"the other pods of a gang job cannot take back; add `{{event: {EVICTED}, action: "
               "RestartJob}` to the job's policies (RestartTask or RestartPod for pods that "
               "work alone)")


@rule("PM405")
def volcano_no_eviction_policy(ctx: ObjectContext) -> Iterator[Hit]:
    seen: set[Path] = set()
    unanswered: list[Workload] = []
    for w in ctx.workloads:
        if w.group not in VOLCANO_GROUPS or w.set_path is None or not w.placement.preemptible:
            continue
        if _eviction_policy(ctx.doc.data, w) is None:
            unanswered.append(w)
        hit = _volcano_hit(ctx.doc.data, w)
        if hit is not None and hit.path not in seen:
            seen.add(hit.path)
            yield hit
    if unanswered and unanswered[0].set_path is not None \
            and _gang(ctx.doc.data, unanswered[0].set_path):
        yield _unanswered_hit(ctx.doc.data, unanswered)
