"""Messages that tell the user what to do must lead to a clean manifest when followed."""

from __future__ import annotations

from pmanifest.kube.profile import get_profile, profile_names
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.rules.placement import NO_ACCELERATOR

ON_FAILURE_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      nodeSelector: {together.ai/compute-class: preemptible}
      containers: [{name: main, image: busybox}]
"""
FOLLOWED = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      containers: [{name: main, image: busybox}]
"""


def messages(text: str, profile: str = "together",
             rules: tuple[str, ...] = ("PM401", "PM402")) -> list[str]:
    options = LintOptions(profile_name=profile, select=frozenset(rules))
    found = lint_bytes(text.encode(), "m.yaml", options)
    return [f"{f.line}:{f.column} {f.rule} {f.message}" for f in found]


def test_pm401_on_an_onfailure_job_says_restart_policy_never_is_needed_too() -> None:
    assert messages(ON_FAILURE_JOB) == [
        "4:1 PM401 Job can run on preemptible nodes but no podFailurePolicy: every preemption "
        "consumes backoffLimit and can fail the Job; add a podFailurePolicy rule `action: "
        "Ignore` with `onPodConditions: [{type: DisruptionTarget}]`, and set the pod "
        "template's `restartPolicy: Never` (it is 'OnFailure'; a podFailurePolicy requires "
        "Never)",
    ]
    # doing exactly that (and only that) leaves nothing to report: no PM402 behind it
    assert messages(FOLLOWED) == []


def test_pm401_on_a_never_job_does_not_mention_the_restart_policy() -> None:
    text = ON_FAILURE_JOB.replace("OnFailure", "Never")
    assert [m for m in messages(text) if "restartPolicy" in m] == []
    assert len(messages(text)) == 1


SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
"""
AKS_TOLERATING = SERVING.replace("      containers:", """\
      tolerations:
        - {key: kubernetes.azure.com/scalesetpriority, operator: Equal, value: spot,
           effect: NoSchedule}
      containers:""")
AUTOPILOT_PREFERS_SPOT = SERVING.replace("      containers:", """\
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference:
                matchExpressions: [{key: cloud.google.com/gke-spot, operator: In,
                                    values: ["true"]}]
      containers:""")


def test_pm102_says_why_preemptible_nodes_can_take_the_pod_in_the_profile_s_words() -> None:
    assert messages(SERVING, "karpenter", ("PM102",)) == [
        "8:5 PM102 Deployment (role serving) is long-running and can land on preemptible nodes "
        "(nothing in its placement keeps it off them); add a required nodeAffinity "
        "`karpenter.sh/capacity-type NotIn [spot]` to every term" + NO_ACCELERATOR]
    # aks taints its Spot nodes: the pod gets there through its own toleration
    assert messages(AKS_TOLERATING, "aks", ("PM102",)) == [
        "8:5 PM102 Deployment (role serving) is long-running and can land on preemptible nodes "
        "(it tolerates their taint `kubernetes.azure.com/scalesetpriority=spot:NoSchedule` and "
        "nothing in its placement keeps it off them); add a required nodeAffinity "
        "`kubernetes.azure.com/scalesetpriority NotIn [spot]` to every term, or drop the "
        "toleration for `kubernetes.azure.com/scalesetpriority`" + NO_ACCELERATOR]
    assert messages(SERVING, "aks", ("PM102",)) == []  # tainted, not tolerated
    # GKE Autopilot adds the toleration to a pod that asks for Spot, even a preferred ask
    assert messages(AUTOPILOT_PREFERS_SPOT, "gke-autopilot", ("PM102",)) == [
        "9:7 PM102 Deployment (role serving) is long-running and can land on preemptible nodes "
        "(it asks for them in its node affinity, and the provider adds the toleration for their "
        "taint `cloud.google.com/gke-spot=true:NoSchedule` (gke-autopilot profile)); add a "
        "required nodeAffinity `cloud.google.com/gke-spot NotIn [true]` to every term"
        + NO_ACCELERATOR]
    untainted = [p for p in profile_names() if get_profile(p).taint is None]
    assert untainted and all("not tainted" not in m for p in untainted
                             for m in messages(AKS_TOLERATING, p, ("PM102", "PM103")))
