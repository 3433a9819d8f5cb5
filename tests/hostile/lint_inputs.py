"""Generators of large hostile lint inputs (issue 15, items 6-8), shared by the CLI tests and
``bench/hostile_lint.py``, which prints their time and memory."""

from __future__ import annotations

JOB = """\
  - apiVersion: batch/v1
    kind: Job
    metadata: {{name: j{i}}}
    spec:
      podFailurePolicy:
        rules:
          - {{action: Ignore, onPodConditions: [{{type: DisruptionTarget}}]}}
          - {{action: Ignore, onExitCodes: {{operator: In, values: [143]}}}}
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {{together.ai/compute-class: preemptible}}
          terminationGracePeriodSeconds: 300
          containers:
            - name: main
              image: busybox
              command:
                - sh
                - -c
                - |
                  trap './ckpt.sh; exit 143' TERM
                  exec ./train
"""


def job_list(count: int) -> str:
    """A ``kind: List`` of ``count`` Jobs, each with one shell finding (PM303: exec discards
    the trap), so every item needs a position inside a script."""
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(JOB.format(i=i)
                                                            for i in range(count))


def selector_keys(count: int, width: int = 80) -> str:
    """A Pod with ``count`` long nodeSelector keys (PM105 compares each with the label)."""
    keys = "".join(f"    k{i:06d}-{'x' * width}: v\n" for i in range(count))
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector:\n" + keys
            + "  containers: [{name: a, image: b}]\n")


def long_comment(size: int) -> str:
    """A Pod with a finding (PM201) under a comment line of ``size`` characters that almost
    looks like a suppression (the old inline-ignore pattern was quadratic on it)."""
    comment = "# pmanifest: ignore=" + "PM201 " * (size // 6) + "x"
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            f"  {comment}\n  terminationGracePeriodSeconds: 900\n"
            "  containers: [{name: a, image: b}]\n")
