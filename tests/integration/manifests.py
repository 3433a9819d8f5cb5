"""Manifests shared by the integration tests, each with one planted mistake at a known line."""

from __future__ import annotations

# PM002 at 8:7: a typo in the grace-period field name
BAD_FIELD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSecond: 300
      containers: [{name: main, image: busybox}]
"""

# PM201 at 9:7: 600 s on a Job that selects preemptible nodes (the cap is 300 s)
LONG_GRACE = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      terminationGracePeriodSeconds: 600
      containers: [{name: main, image: busybox}]
"""

# A Deployment pinned to standard nodes: nothing for any rule to say
GOOD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: together.ai/compute-class, operator: NotIn, values: [preemptible]}
      containers: [{name: web, image: nginx:1.27}]
"""

NOT_KUBERNETES = "name: my-app\nvalues: [1, 2]\n"
