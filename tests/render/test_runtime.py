"""The run-time fields (issue 14) as rendered: env sources and envFrom, probes, the rollout of
serving Deployments, annotations, priorityClassName and the Job knobs; schema-valid on every
version that has them, clean under lint, and one snapshot with every field."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion

from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.loader.documents import Loaded, load_documents
from pmanifest.render.engine import RenderOptions, render_text
from pmanifest.schema.kubernetes import supported_versions, validate

EVERY_FIELD = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
defaults:
  namespace: ml
  env:
    POD_NAMESPACE: {fieldRef: {fieldPath: metadata.namespace}}
    LOG_LEVEL: info
  envFrom:
    - {configMapRef: {name: team-settings}}
  annotations: {acme.io/owner: llm-team}
  podAnnotations: {logs.acme.io/format: json}
  priorityClassName: training-low
workloads:
  - name: api
    role: serving
    image: ghcr.io/acme/tgi:2.4
    args: [--model-id, /mnt/shared/models/llama, --port, 8080]
    env:
      LOG_LEVEL: debug
      HF_TOKEN: {secretKeyRef: {name: hf-token, key: token, optional: false}}
      MAX_BATCH: {configMapKeyRef: {name: tgi-settings, key: max-batch}}
      MEM_LIMIT_MI: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
      POD_IP: {fieldRef: {fieldPath: status.podIP, apiVersion: v1}}
      HUGGING_FACE_HUB_TOKEN: $(HF_TOKEN)
    envFrom:
      - {secretRef: {name: tgi-secrets, optional: true}, prefix: TGI_}
    ports: [8080, 9000]
    replicas: 4
    resources:
      requests: {cpu: 1500m, memory: 64Gi}
      limits: {cpu: "1.5", memory: 65536Mi}
    probes:
      readiness:
        httpGet:
          path: /health
          port: 8080
          scheme: HTTP
          httpHeaders: [{name: X-Probe, value: kubelet}]
        periodSeconds: 5
        timeoutSeconds: 2
        successThreshold: 2
      liveness: {tcpSocket: {port: 8080}, initialDelaySeconds: 10, failureThreshold: 5}
      startup: {grpc: {port: 9000, service: health}, periodSeconds: 10, failureThreshold: 60}
    strategy: {maxSurge: 25%}
    annotations: {acme.io/owner: serving-team}
    priorityClassName: serving-high
  - name: rendezvous
    role: coordinator
    image: ghcr.io/acme/trainer:1.4
    args: [--port, 29400]
    ports: [29400]
    probes:
      liveness: {exec: {command: [python, -c, "import socket", 1]}}
      startup: {exec: {command: "test -e /tmp/ready"}}
  - name: sweep
    image: ghcr.io/acme/evals:2.0
    command: [python, -m, evals.run]
    gpus: 1
    resources:
      requests: {nvidia.com/gpu: 1}
    parallelism: 8
    completions: 64
    backoffLimitPerIndex: 2
    maxFailedIndexes: 6
    ttlSecondsAfterFinished: 3600
    priorityClassName: eval
    checkpoint: {command: [python, -m, evals.flush], trigger: preStop, gracePeriodSeconds: 120}
"""


def _objects(text: str, version: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    rendered = render_text(textwrap.dedent(text), "s.yaml",
                           RenderOptions(kubernetes_version=version))
    return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(rendered)}


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = obj["spec"]["template"]["spec"]["containers"][0]
    return container


def test_every_field_snapshot(snapshot: SnapshotAssertion) -> None:
    assert render_text(EVERY_FIELD, "s.yaml") == snapshot


@pytest.mark.parametrize("version", [v for v in supported_versions() if v >= "1.29"])
def test_every_field_is_schema_valid_and_lints_clean(version: str) -> None:
    rendered = render_text(EVERY_FIELD, "s.yaml", RenderOptions(kubernetes_version=version))
    objects = list(yaml.safe_load_all(rendered))
    assert len(objects) == 6
    for obj in objects:
        assert validate(obj, version) == [], obj["kind"]
    options = LintOptions(kubernetes_version=version)
    assert lint_bytes(rendered.encode(), "r.yaml", options) == []


def test_env_sources_in_order_with_defaults_first() -> None:
    api = _container(_objects(EVERY_FIELD)[("Deployment", "api")])
    assert api["env"] == [
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "LOG_LEVEL", "value": "debug"},  # the workload's value, defaults' place
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token",
                                                            "optional": False}}},
        {"name": "MAX_BATCH", "valueFrom": {"configMapKeyRef": {"name": "tgi-settings",
                                                                "key": "max-batch"}}},
        {"name": "MEM_LIMIT_MI", "valueFrom": {"resourceFieldRef": {
            "resource": "limits.memory", "divisor": "1Mi"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP",
                                                      "apiVersion": "v1"}}},
        {"name": "HUGGING_FACE_HUB_TOKEN", "value": "$(HF_TOKEN)"},  # after HF_TOKEN
    ]
    assert api["envFrom"] == [{"configMapRef": {"name": "team-settings"}},
                              {"secretRef": {"name": "tgi-secrets", "optional": True},
                               "prefix": "TGI_"}]


def test_args_only_run_the_image_entrypoint() -> None:
    objects = _objects(EVERY_FIELD)
    for name in ("api", "rendezvous"):
        container = _container(objects[("Deployment", name)])
        assert "command" not in container
    assert _container(objects[("Deployment", "api")])["args"] == [
        "--model-id", "/mnt/shared/models/llama", "--port", "8080"]


def test_probes_in_kubernetes_shape() -> None:
    objects = _objects(EVERY_FIELD)
    api = _container(objects[("Deployment", "api")])
    assert api["readinessProbe"]["httpGet"]["httpHeaders"] == [{"name": "X-Probe",
                                                                "value": "kubelet"}]
    assert api["livenessProbe"] == {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10,
                                    "failureThreshold": 5}
    assert api["startupProbe"]["grpc"] == {"port": 9000, "service": "health"}
    rendezvous = _container(objects[("Deployment", "rendezvous")])
    assert rendezvous["livenessProbe"] == {"exec": {"command": ["python", "-c",
                                                                "import socket", "1"]}}
    assert rendezvous["startupProbe"] == {"exec": {"command": ["/bin/sh", "-c",
                                                             "test -e /tmp/ready"]}}
    assert "readinessProbe" not in rendezvous


def test_annotations_on_every_object_and_the_pod() -> None:
    objects = _objects(EVERY_FIELD)
    for kind in ("Service", "PodDisruptionBudget", "Deployment"):
        assert objects[(kind, "api")]["metadata"]["annotations"] == {
            "acme.io/owner": "serving-team"}
    pod = objects[("Deployment", "api")]["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"logs.acme.io/format": "json"}
    assert pod["spec"]["priorityClassName"] == "serving-high"
    sweep = objects[("Job", "sweep")]
    assert sweep["metadata"]["annotations"] == {"acme.io/owner": "llm-team"}
    assert sweep["spec"]["template"]["spec"]["priorityClassName"] == "eval"
    assert objects[("Deployment", "rendezvous")]["spec"]["template"]["spec"][
        "priorityClassName"] == "training-low"


def test_job_knobs_and_no_global_backoff_limit_with_per_index() -> None:
    spec = _objects(EVERY_FIELD)[("Job", "sweep")]["spec"]
    assert (spec["backoffLimitPerIndex"], spec["maxFailedIndexes"],
            spec["ttlSecondsAfterFinished"], spec["completionMode"]) == (2, 6, 3600, "Indexed")
    assert "backoffLimit" not in spec
    both = EVERY_FIELD.replace("    backoffLimitPerIndex: 2\n",
                               "    backoffLimitPerIndex: 2\n    backoffLimit: 10\n")
    spec = _objects(both)[("Job", "sweep")]["spec"]
    assert (spec["backoffLimit"], spec["backoffLimitPerIndex"]) == (10, 2)


SERVING = """\
apiVersion: pmanifest/v1
workloads:
  - name: api
    role: serving
    image: x
    replicas: {replicas}
{strategy}
"""


@pytest.mark.parametrize(("replicas", "strategy", "expected"), [
    (3, "", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
    (2, "", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
    (1, "", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
    (3, "    strategy: {maxSurge: 1}",
     {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}),
    (3, "    strategy: {maxSurge: 1, maxUnavailable: 0}",
     {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
    (1, "    strategy: {maxUnavailable: 50%}",
     {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "50%"}}),
    (3, "    strategy: {type: Recreate}", {"type": "Recreate"}),
])
def test_serving_rollout(replicas: int, strategy: str, expected: dict[str, Any]) -> None:
    text = SERVING.format(replicas=replicas, strategy=strategy)
    assert _objects(text)[("Deployment", "api")]["spec"]["strategy"] == expected


def test_coordinator_stays_recreate() -> None:
    text = "apiVersion: pmanifest/v1\nworkloads:\n  - {name: r, role: coordinator, image: x}\n"
    assert _objects(text)[("Deployment", "r")]["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(("probes", "deadline"), [
    ("", None),  # no probe: Kubernetes' 600 s
    ("startup: {httpGet: {path: /health, port: 8000}}", None),  # 30 s allowed
    # 60 x 5 s + 300 s margin = 600 s: the default is enough, so it is not written
    ("startup: {exec: {command: [ready]}, periodSeconds: 5, failureThreshold: 60}", None),
    ("startup: {exec: {command: [ready]}, periodSeconds: 5, failureThreshold: 61}", 605),
    # vLLM loading 70B weights: 30 minutes, then ready after 2 x 5 s
    ("startup: {httpGet: {path: /health, port: 8000}, periodSeconds: 10, failureThreshold: 180,"
     " initialDelaySeconds: 20}\n      readiness: {httpGet: {path: /health, port: 8000},"
     " periodSeconds: 5, successThreshold: 2}", 20 + 1800 + 10 + 300),
    ("liveness: {httpGet: {path: /health, port: 8000}, failureThreshold: 1000}", None),
])
def test_a_slow_starter_gets_a_progress_deadline_that_covers_its_probes(
        probes: str, deadline: int | None) -> None:
    text = SERVING.format(replicas=3, strategy=f"    probes:\n      {probes}" if probes else "")
    spec = _objects(text)[("Deployment", "api")]["spec"]
    assert spec.get("progressDeadlineSeconds") == deadline


def test_the_vllm_example_rolls_out_within_its_progress_deadline() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "serving-vllm.yaml"
    spec = _objects(path.read_text())[("Deployment", "llama-70b")]["spec"]
    startup = spec["template"]["spec"]["containers"][0]["startupProbe"]
    assert spec["progressDeadlineSeconds"] > startup["periodSeconds"] * startup["failureThreshold"]


@pytest.mark.parametrize(("requests", "limits"), [
    ("{cpu: 1500m}", "{cpu: '1.5'}"),
    ("{memory: 1Gi}", "{memory: 1024Mi}"),
    ("{memory: '1e3'}", "{memory: 1k}"),  # (unquoted, 1e3 is the number 1000)
    ("{cpu: 8}", "{}"),
    ("{ephemeral-storage: 100Gi}", "{ephemeral-storage: 0.5Ti}"),
    ("{hugepages-2Mi: 1Gi}", "{hugepages-2Mi: 1024Mi}"),
])
def test_requests_up_to_their_limits_render(requests: str, limits: str) -> None:
    text = (f"apiVersion: pmanifest/v1\nworkloads:\n  - name: w\n    image: x\n"
            f"    command: [run]\n    resources: {{requests: {requests}, limits: {limits}}}\n")
    job = _objects(text)[("Job", "w")]
    # the spec's scalars are read as kubectl reads them: 1e3 is the number 1000 there
    read = next(iter(load_documents(requests)))
    assert isinstance(read, Loaded)
    assert _container(job)["resources"]["requests"] == read.data
