"""Refusals of workload fields (issue 14): args without command on a worker, annotations,
priorityClassName, the Job knobs of workers, requests the API server rejects, and Kubernetes
manifests given as a spec. Exit 2, one exact line on stderr naming file:line:col, no
stdout."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

SUBDOMAIN = ("is not a DNS-1123 subdomain; use at most 253 lowercase letters, digits, '-' and "
             "'.', starting and ending with a letter or digit")

CASES: list[tuple[str, str, str]] = [
    (
        "args without command on a worker",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: ghcr.io/acme/trainer:1.4
            args: [--epochs, 3]
        """,
        "spec.yaml:5:5: a worker needs command as well as args: its main process runs under "
        "pmanifest's termination supervisor, which must be given the whole argv, and the "
        "image's ENTRYPOINT cannot be known from the spec; add the line command: [<the "
        "ENTRYPOINT of the image>] above args (docker inspect --format "
        "'{{json .Config.Entrypoint}}' ghcr.io/acme/trainer:1.4 prints it)",
    ),
    (
        "annotation key with a space",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            annotations: {"owner team": llm}
        """,
        "spec.yaml:6:19: annotation key 'owner team' is not a valid Kubernetes annotation key; "
        "use [prefix/]name with a DNS prefix and a name of at most 63 alphanumerics, '-', '_' "
        "or '.'",
    ),
    (
        "pod annotation key in defaults",
        """\
        apiVersion: pmanifest/v1
        defaults:
          podAnnotations: {Prometheus.IO/scrape: "true"}
        workloads:
          - {name: api, role: serving, image: x}
        """,
        "spec.yaml:3:20: annotation key 'Prometheus.IO/scrape' is not a valid Kubernetes "
        "annotation key; use [prefix/]name with a DNS prefix and a name of at most 63 "
        "alphanumerics, '-', '_' or '.'",
    ),
    (
        "annotation value that is a number",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            podAnnotations: {prometheus.io/port: 8000}
        """,
        "spec.yaml:6:42: workloads[0].podAnnotations.prometheus.io/port must be a string, got "
        "integer; quote it to make it a string",
    ),
    (
        "annotations above the API server's size",
        f"""\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            annotations: {{notes: {"x" * 262140}}}
        """,
        "spec.yaml:6:5: annotations of workload 'api' take 262145 bytes, above the API "
        "server's 262144; put large data in a ConfigMap",
    ),
    (
        "priorityClassName not a DNS-1123 subdomain",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            priorityClassName: Training_High
        """,
        f"spec.yaml:5:24: workloads[0].priorityClassName 'Training_High' {SUBDOMAIN}",
    ),
    (
        "ttlSecondsAfterFinished on serving",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: api, role: serving, image: x, ttlSecondsAfterFinished: 60}
        """,
        "spec.yaml:3:42: ttlSecondsAfterFinished applies to worker workloads, not serving; "
        "remove it or change role",
    ),
    (
        "negative ttlSecondsAfterFinished",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, ttlSecondsAfterFinished: -1}
        """,
        "spec.yaml:3:54: workloads[0].ttlSecondsAfterFinished must be at least 0, got -1; "
        "change the value",
    ),
    (
        "backoffLimitPerIndex without completions",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: sweep
            image: x
            command: [run]
            parallelism: 8
            backoffLimitPerIndex: 2
        """,
        "spec.yaml:7:5: backoffLimitPerIndex needs an Indexed Job; add completions: N (one "
        "index per shard)",
    ),
    (
        "maxFailedIndexes without backoffLimitPerIndex",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: sweep
            image: x
            command: [run]
            completions: 32
            maxFailedIndexes: 4
        """,
        "spec.yaml:7:5: maxFailedIndexes counts the indexes that used up backoffLimitPerIndex; "
        "add backoffLimitPerIndex: N",
    ),
    (
        "maxFailedIndexes above completions",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: sweep
            image: x
            command: [run]
            completions: 32
            backoffLimitPerIndex: 1
            maxFailedIndexes: 40
        """,
        "spec.yaml:8:23: maxFailedIndexes 40 is above completions 32; use at most 32",
    ),
    (
        "too many completions for backoffLimitPerIndex",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: sweep
            image: x
            command: [run]
            completions: 100001
            backoffLimitPerIndex: 1
        """,
        "spec.yaml:6:18: completions 100001 is above 100000, the most the API server allows "
        "with backoffLimitPerIndex; split the sweep or remove backoffLimitPerIndex",
    ),
    (
        "backoffLimitPerIndex before its schema",
        """\
        apiVersion: pmanifest/v1
        cluster: {kubernetesVersion: "1.27"}
        workloads:
          - name: sweep
            image: x
            command: [run]
            completions: 32
            backoffLimitPerIndex: 1
        """,
        "spec.yaml:8:5: the Job schema of Kubernetes 1.27 has no backoffLimitPerIndex; set "
        "cluster.kubernetesVersion or --kubernetes-version to 1.29 or later, or remove "
        "backoffLimitPerIndex",
    ),
    (
        "maxFailedIndexes while it is alpha",
        """\
        apiVersion: pmanifest/v1
        cluster: {kubernetesVersion: "1.28"}
        workloads:
          - name: sweep
            image: x
            command: [run]
            completions: 32
            maxFailedIndexes: 2
            backoffLimitPerIndex: 1
        """,
        "spec.yaml:9:5: backoffLimitPerIndex is alpha in Kubernetes 1.28, off by default, and "
        "the API server drops a disabled field without a word; set cluster.kubernetesVersion "
        "or --kubernetes-version to 1.29 or later, or remove backoffLimitPerIndex",
    ),
    (
        "cpu request above its limit",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            resources:
              requests: {cpu: 64}
              limits: {cpu: 8}
        """,
        "spec.yaml:7:23: resources.requests cpu: 64 is above its limit 8, which the API server "
        "rejects; lower the request or raise resources.limits",
    ),
    (
        "memory request above its limit in other units",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            resources:
              requests: {memory: 2Gi}
              limits: {memory: 2000Mi}
        """,
        "spec.yaml:7:26: resources.requests memory: 2Gi is above its limit 2000Mi, which the "
        "API server rejects; lower the request or raise resources.limits",
    ),
    (
        "GPU request other than gpus",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            gpus: 8
            resources:
              requests: {nvidia.com/gpu: 4}
        """,
        "spec.yaml:8:34: resources.requests nvidia.com/gpu: 4 differs from its limit 8 (gpus), "
        "and nvidia.com/gpu cannot be overcommitted; remove the request (it defaults to the "
        "limit) or make it 8",
    ),
    (
        "GPU request without gpus",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            resources:
              requests: {nvidia.com/gpu: 4}
        """,
        "spec.yaml:7:34: resources.requests nvidia.com/gpu: 4 has no limit, and nvidia.com/gpu "
        "cannot be overcommitted (the limit is what the pod gets); set gpus: 4 and remove the "
        "request",
    ),
    (
        "extended resource request without a limit",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            resources:
              requests: {rdma/hca: 1}
        """,
        "spec.yaml:7:28: resources.requests rdma/hca: 1 has no limit, and rdma/hca cannot be "
        "overcommitted (the limit is what the pod gets); add resources.limits rdma/hca: 1 and "
        "remove the request",
    ),
    (
        "GPU limit beside gpus",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            gpus: 8
            resources:
              limits: {nvidia.com/gpu: 8}
        """,
        "spec.yaml:8:16: nvidia.com/gpu is set from gpus; remove it from resources.limits",
    ),
    (
        "a Kubernetes manifest",
        """\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        """,
        "spec.yaml:2:1: this is a Kubernetes manifest (kind: Job); use pmanifest lint "
        "spec.yaml to check it (render takes a spec: apiVersion: pmanifest/v1, see examples/)",
    ),
    (
        "a multi-document Kubernetes manifest",
        """\
        ---
        apiVersion: v1
        kind: Service
        metadata: {name: api}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}
        """,
        "spec.yaml:3:1: this is a Kubernetes manifest (kind: Service); use pmanifest lint "
        "spec.yaml to check it (render takes a spec: apiVersion: pmanifest/v1, see examples/)",
    ),
    (
        "kind in a spec",
        """\
        apiVersion: pmanifest/v1
        kind: Spec
        workloads: [{name: a, image: x}]
        """,
        "spec.yaml:2:1: unknown key 'kind' in the spec; remove it (allowed: apiVersion, "
        "cluster, defaults, workloads)",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refusal(spec: str, expected: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch
                 ) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    with open("spec.yaml", "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(spec))
    result = CliRunner().invoke(main, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected + "\n")


def test_kubernetes_manifest_from_stdin_points_to_lint_of_stdin() -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    result = CliRunner().invoke(main, ["render", "-f", "-"], input=manifest)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "<stdin>:2:1: this is a Kubernetes manifest (kind: ConfigMap); use pmanifest "
        "lint - to check it (render takes a spec: apiVersion: pmanifest/v1, see examples/)\n")
