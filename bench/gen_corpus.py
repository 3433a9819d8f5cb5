"""Deterministic benchmark corpus: N files x 3 documents (Job, Deployment, Service), a
realistic mix of preemptible and standard placement, some with mistakes.

    python bench/gen_corpus.py OUTDIR [--files 400]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train-{i}
  namespace: ml
  labels: {{app.kubernetes.io/name: train-{i}, pmanifest.io/role: worker}}
spec:
  backoffLimit: 6
  parallelism: {par}
  completions: {par}
  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions:
          - {{type: DisruptionTarget, status: "True"}}
  template:
    metadata:
      labels: {{app.kubernetes.io/name: train-{i}}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: {grace}
      nodeSelector:
        together.ai/compute-class: preemptible
      containers:
        - name: trainer
          image: ghcr.io/acme/trainer:1.{i}
          command: ["/bin/sh", "-c"]
          args:
            - |
              trap 'python /app/ckpt.py --out /mnt/shared/ckpt/{i}; exit 143' TERM
              python /app/train.py --epochs {par} &
              child=$!
              wait "$child"
          env:
            - {{name: CHECKPOINT_DIR, value: /mnt/shared/ckpt/{i}}}
          resources:
            limits: {{nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}}
          volumeMounts:
            - {{name: shared, mountPath: /mnt/shared}}
      volumes:
        - name: shared
          persistentVolumeClaim: {{claimName: shared-fs}}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve-{i}
  namespace: ml
  labels: {{app.kubernetes.io/name: serve-{i}}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app.kubernetes.io/name: serve-{i}}}
  template:
    metadata:
      labels: {{app.kubernetes.io/name: serve-{i}}}
    spec:
{placement}
      containers:
        - name: server
          image: ghcr.io/acme/server:2.{i}
          args: ["--port", "8000", "--model", "/mnt/shared/models/m{i}"]
          ports:
            - {{containerPort: 8000, name: http}}
          readinessProbe:
            httpGet: {{path: /healthz, port: http}}
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""
STANDARD = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: together.ai/compute-class
                    operator: NotIn
                    values: [preemptible]"""
PREEMPTIBLE = """\
      nodeSelector:
        together.ai/compute-class: preemptible"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: serve-{i}
  namespace: ml
spec:
  selector: {{app.kubernetes.io/name: serve-{i}}}
  ports:
    - {{name: http, port: 80, targetPort: http}}
"""


def generate(out: Path, files: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        grace = 300 if rng.random() < 0.9 else 600  # some over the cap
        placement = STANDARD if rng.random() < 0.85 else PREEMPTIBLE
        text = "---\n".join([
            JOB.format(i=i, par=rng.randint(1, 8), grace=grace),
            DEPLOYMENT.format(i=i, placement=placement),
            SERVICE.format(i=i),
        ])
        path = out / f"app-{i:05d}.yaml"
        path.write_text(text)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=400)
    args = parser.parse_args()
    generate(args.out, args.files)


if __name__ == "__main__":
    main()
