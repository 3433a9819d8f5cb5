"""Refusals of the run-time fields of the container and the rollout (issue 14): env sources,
envFrom, probes, strategy. Exit 2, one exact line on stderr naming file:line:col, no
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
        "env value that is a list",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: api, role: serving, image: x, env: {MODELS: [a, b]}}
        """,
        "spec.yaml:3:56: workloads[0].env.MODELS must be a string or integer or mapping, got "
        "list; quote it to make it a string",
    ),
    (
        "env value that is a boolean",
        """\
        apiVersion: pmanifest/v1
        defaults:
          env: {DEBUG: true}
        workloads:
          - {name: api, role: serving, image: x}
        """,
        "spec.yaml:3:16: defaults.env.DEBUG must be a string or integer or mapping, got "
        "boolean; quote it to make it a string",
    ),
    (
        "env value with no source",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              HF_TOKEN: {}
        """,
        "spec.yaml:7:7: workloads[0].env.HF_TOKEN has no source; add one of secretKeyRef, "
        "configMapKeyRef, fieldRef, resourceFieldRef (e.g. {secretKeyRef: {name: hf-token, "
        "key: token}})",
    ),
    (
        "env value with two sources",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              HF_TOKEN:
                secretKeyRef: {name: hf-token, key: token}
                configMapKeyRef: {name: settings, key: token}
        """,
        "spec.yaml:9:9: workloads[0].env.HF_TOKEN has 2 sources (secretKeyRef, "
        "configMapKeyRef); keep exactly one",
    ),
    (
        "secretKeyRef without a key",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              HF_TOKEN: {secretKeyRef: {name: hf-token}}
        """,
        "spec.yaml:7:18: workloads[0].env.HF_TOKEN.secretKeyRef is missing 'key'; add key: "
        "<the key whose value the variable gets>",
    ),
    (
        "secretRef where secretKeyRef belongs",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              HF_TOKEN: {secretRef: {name: hf-token, key: token}}
        """,
        "spec.yaml:7:18: unknown key 'secretRef' in workloads[0].env.HF_TOKEN; did you mean "
        "'secretKeyRef'?",
    ),
    (
        "Secret name not a DNS-1123 subdomain",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              HF_TOKEN: {secretKeyRef: {name: HF_Token, key: token}}
        """,
        f"spec.yaml:7:39: workloads[0].env.HF_TOKEN.secretKeyRef.name 'HF_Token' {SUBDOMAIN}",
    ),
    (
        "fieldRef to a field the downward API does not give env",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              LABELS: {fieldRef: {fieldPath: metadata.labels}}
        """,
        "spec.yaml:7:38: workloads[0].env.LABELS.fieldRef.fieldPath 'metadata.labels' is not a "
        "pod field env can read; use metadata.name, .namespace, .uid, .labels['KEY'] or "
        ".annotations['KEY'], spec.nodeName or .serviceAccountName, status.hostIP, .podIP or "
        ".podIPs",
    ),
    (
        "resourceFieldRef to an unknown resource",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            env:
              MEM: {resourceFieldRef: {resource: limits.memroy}}
        """,
        "spec.yaml:7:42: workloads[0].env.MEM.resourceFieldRef.resource is 'limits.memroy', "
        "which is not one of limits.cpu, limits.memory, limits.ephemeral-storage, "
        "requests.cpu, requests.memory, requests.ephemeral-storage; did you mean "
        "'limits.memory'?",
    ),
    (
        "envFrom item with no source",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            envFrom:
              - {prefix: APP_}
        """,
        "spec.yaml:7:9: workloads[0].envFrom[0] has no source; add one of secretRef, "
        "configMapRef (e.g. {secretRef: {name: app-secrets}})",
    ),
    (
        "envFrom item with two sources",
        """\
        apiVersion: pmanifest/v1
        defaults:
          envFrom:
            - {secretRef: {name: app-secrets}, configMapRef: {name: app-settings}}
        workloads:
          - {name: api, role: serving, image: x}
        """,
        "spec.yaml:4:40: defaults.envFrom[0] has 2 sources (secretRef, configMapRef); keep "
        "exactly one",
    ),
    (
        "envFrom prefix that is not a variable name",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            envFrom:
              - {configMapRef: {name: settings}, prefix: 1ST_}
        """,
        "spec.yaml:7:50: workloads[0].envFrom[0].prefix '1ST_' is not a valid start of a "
        "variable name; use letters, digits, '_', '-' and '.', not starting with a digit",
    ),
    (
        "probe with no handler",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              readiness: {periodSeconds: 5}
        """,
        "spec.yaml:7:7: workloads[0].probes.readiness has no handler; add one of httpGet, "
        "tcpSocket, exec, grpc (e.g. {httpGet: {path: /health, port: 8000}})",
    ),
    (
        "probe with two handlers",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              liveness: {httpGet: {port: 8000}, tcpSocket: {port: 8000}}
        """,
        "spec.yaml:7:41: workloads[0].probes.liveness has 2 handlers (httpGet, tcpSocket); "
        "keep exactly one",
    ),
    (
        "readiness probe on a worker",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            probes:
              readiness: {exec: {command: [cat, /tmp/ready]}}
        """,
        "spec.yaml:7:7: probes.readiness applies to coordinator or serving workloads (a Job's "
        "pods take no Service traffic); remove it, or use liveness or startup",
    ),
    (
        "startup probe with a success threshold",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              startup: {grpc: {port: 9000}, successThreshold: 2}
        """,
        "spec.yaml:7:55: probes.startup.successThreshold must be 1 (the API server accepts no "
        "other value for startup probes); remove it",
    ),
    (
        "exec probe with an empty command",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              liveness: {exec: {command: ""}}
        """,
        "spec.yaml:7:34: workloads[0].probes.liveness.exec.command must not be empty; give a "
        "value or remove the key",
    ),
    (
        "HTTP probe path without a slash",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              readiness: {httpGet: {path: health, port: 8000}}
        """,
        "spec.yaml:7:35: workloads[0].probes.readiness.httpGet.path 'health' is not an absolute "
        "HTTP path; start it with /, e.g. /health",
    ),
    (
        "HTTP probe without a port",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              readiness:
                httpGet: {path: /health}
        """,
        "spec.yaml:8:9: workloads[0].probes.readiness.httpGet is missing 'port'; add port: "
        "<the container port to probe>",
    ),
    (
        "unknown probe",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            probes:
              ready: {httpGet: {port: 8000}}
        """,
        "spec.yaml:7:7: unknown key 'ready' in workloads[0].probes; remove it (allowed: "
        "liveness, readiness, startup)",
    ),
    (
        "strategy on a worker",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            strategy: {type: Recreate}
        """,
        "spec.yaml:6:5: strategy applies to serving workloads, not worker; remove it or change "
        "role",
    ),
    (
        "strategy on a coordinator",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: rdzv
            role: coordinator
            image: x
            strategy: {maxSurge: 1}
        """,
        "spec.yaml:6:5: strategy applies to serving workloads, not coordinator; a coordinator "
        "always uses Recreate, so a rollout never runs two rendezvous hosts at once; remove it "
        "or change role",
    ),
    (
        "rollout knobs with Recreate",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            strategy: {type: Recreate, maxUnavailable: 1}
        """,
        "spec.yaml:6:32: maxUnavailable applies to type: RollingUpdate; remove it, or remove "
        "type: Recreate",
    ),
    (
        "a rollout that could never replace a pod",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            replicas: 3
            strategy: {maxUnavailable: "0%"}
        """,
        "spec.yaml:7:5: maxSurge and maxUnavailable are both 0 (with 3 replicas), so a rollout "
        "could never replace a pod; set maxUnavailable: 1 (one replica down at a time) or "
        "maxSurge: 1 (needs room for one more pod)",
    ),
    (
        "maxUnavailable above 100%",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            strategy: {maxUnavailable: 150%}
        """,
        "spec.yaml:6:32: maxUnavailable '150%' is above 100%; use at most 100%",
    ),
    (
        "maxSurge neither a count nor a percentage",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            strategy: {maxSurge: "1"}
        """,
        "spec.yaml:6:26: workloads[0].strategy.maxSurge '1' is neither a count nor a "
        "percentage; write an integer (1) or a percentage ('25%')",
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
