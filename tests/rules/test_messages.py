"""Messages that tell the user what to do must lead to a clean manifest when followed."""

from __future__ import annotations

from pmanifest.lint import LintOptions, lint_bytes

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
