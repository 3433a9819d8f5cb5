"""GPU pods are never BestEffort (issue 26): the per-GPU requests, qos: Guaranteed, the QoS
class computed as Kubernetes does, and the spread of serving replicas over nodes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.kube.document import Document
from pmanifest.kube.profile import get_profile
from pmanifest.kube.resources import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_gpus, pod_qos
from pmanifest.kube.workloads import workloads_of
from pmanifest.loader.documents import load_single

from .test_example_profiles import USABLE


def _render(spec: str, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    result = CliRunner().invoke(main, ["render", "-f", "-", *args],
                                input=textwrap.dedent(spec))
    objects = [o for o in yaml.safe_load_all(result.stdout) if o] if result.stdout else []
    return result.exit_code, objects, result.stderr


def _main(spec: str) -> dict[str, Any]:
    code, objects, err = _render(spec)
    assert code == 0, err
    workload = next(o for o in objects if o["kind"] in ("Job", "Deployment"))
    container: dict[str, Any] = workload["spec"]["template"]["spec"]["containers"][0]
    return container


def _qos(obj: dict[str, Any]) -> str:
    return pod_qos(obj["spec"]["template"]["spec"])


WORKER = """\
apiVersion: pmanifest/v1
workloads:
  - name: train
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
"""


def test_a_gpu_worker_gets_the_per_gpu_requests_and_is_burstable() -> None:
    code, [job], _ = _render(WORKER)
    assert code == 0
    assert job["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "32", "memory": "256Gi"}, "limits": {"nvidia.com/gpu": 8}}
    assert _qos(job) == BURSTABLE


@pytest.mark.parametrize(("resources", "expected"), [
    # what the spec gives wins, the default fills the other resource
    ({"requests": {"cpu": 12}}, {"requests": {"cpu": 12, "memory": "64Gi"},
                                 "limits": {"nvidia.com/gpu": 2}}),
    # a limit without a request: the API server defaults the request to it, so no default
    ({"limits": {"memory": "100Gi"}}, {"requests": {"cpu": "8"},
                                       "limits": {"memory": "100Gi", "nvidia.com/gpu": 2}}),
    ({"requests": {"cpu": 1, "memory": "1Gi"}},
     {"requests": {"cpu": 1, "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 2}}),
])
def test_given_amounts_win_over_the_default(resources: dict[str, Any],
                                            expected: dict[str, Any]) -> None:
    spec = WORKER.replace("gpus: 8", f"gpus: 2\n    resources: {json.dumps(resources)}")
    assert _main(spec)["resources"] == expected


def test_a_workload_without_gpus_gets_no_default() -> None:
    assert "resources" not in _main(WORKER.replace("gpus: 8", "gpus: 0"))


@pytest.mark.parametrize(("resources", "expected"), [
    ({}, {"cpu": "32", "memory": "256Gi"}),
    ({"requests": {"cpu": 16, "memory": "200Gi"}}, {"cpu": 16, "memory": "200Gi"}),
    ({"limits": {"cpu": 16}}, {"cpu": 16, "memory": "256Gi"}),
    ({"requests": {"cpu": "16"}, "limits": {"cpu": "16000m"}}, {"cpu": "16", "memory": "256Gi"}),
])
def test_qos_guaranteed_limits_cpu_and_memory_at_their_requests(
        resources: dict[str, Any], expected: dict[str, Any]) -> None:
    spec = WORKER.replace("gpus: 8", f"gpus: 8\n    qos: Guaranteed\n    resources: "
                                     f"{json.dumps(resources)}")
    code, [job], err = _render(spec)
    assert code == 0, err
    got = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert {k: got["requests"][k] for k in ("cpu", "memory")} == expected
    assert {k: got["limits"][k] for k in ("cpu", "memory")} == expected
    assert got["limits"]["nvidia.com/gpu"] == 8
    assert _qos(job) == GUARANTEED


@pytest.mark.parametrize(("extra", "message"), [
    ("qos: Guaranteed\n    resources: {requests: {memory: 64Gi}, limits: {memory: 65Gi}}",
     "<stdin>:8:60: qos: Guaranteed needs the memory limit equal to its request, and "
     "resources.limits memory is 65Gi while the request is 64Gi; make them equal or remove "
     "the limit (it is then set from the request)"),
    ("qos: Guaranteed\n    gpus: 0\n    resources: {requests: {memory: 64Gi}}",
     "<stdin>:6:10: qos: Guaranteed needs a cpu amount, and the workload has neither "
     "resources.requests cpu nor gpus (whose default requests it would use); add "
     "resources.requests cpu"),
    ("qos: BestEffort",
     "<stdin>:7:10: workloads[0].qos is 'BestEffort', which is not one of Burstable, Guaranteed; "
     "use one of: Burstable, Guaranteed"),
])
def test_qos_refusals(extra: str, message: str) -> None:
    spec = WORKER.replace("gpus: 8", extra) if "gpus: 0" in extra else \
        WORKER.replace("gpus: 8", "gpus: 8\n    " + extra)
    code, objects, err = _render(spec)
    assert (code, objects, err) == (2, [], message + "\n")


def _gpu_pods(text: str, profile: str) -> list[tuple[str, str]]:
    """(object, QoS class) of every rendered pod template that uses GPUs."""
    out = []
    for n, raw in enumerate(text.split("\n---\n")):
        loaded = load_single(raw)
        doc = Document("out.yaml", n, loaded.data, loaded.positions)
        for w in workloads_of(doc, get_profile(profile)):
            if pod_gpus(w)[0] > 0:
                out.append((f"{doc.data['kind']} {doc.data['metadata']['name']}",
                            pod_qos(w.pod)))
    return out


@pytest.mark.parametrize(("example", "profile"), USABLE,
                         ids=[f"{e.name}-{p}" for e, p in USABLE])
def test_no_rendered_gpu_pod_is_best_effort(example: Path, profile: str) -> None:
    result = CliRunner().invoke(main, ["render", "-f", str(example), "--profile", profile])
    assert result.exit_code == 0, result.stderr
    pods = _gpu_pods(result.stdout, profile)
    with_gpus = any(w.get("gpus") for w in yaml.safe_load(example.read_text())["workloads"])
    assert bool(pods) == with_gpus
    assert [p for p in pods if p[1] == BEST_EFFORT] == []


GPU_ONLY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 2
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.8.5
          resources:
            limits: {nvidia.com/gpu: 8}
"""


def _lint(text: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["lint", "-", "--select", "PM106", "--format", "json",
                                       "--stdin-filename", "d.yaml"], input=text)
    found: list[dict[str, Any]] = json.loads(result.stdout)["findings"]
    return found


def test_the_rule_fires_on_a_gpu_only_deployment_and_its_fix_clears_it() -> None:
    [finding] = _lint(GPU_ONLY)
    assert (finding["rule"], finding["line"], finding["column"]) == ("PM106", 15, 11)
    assert finding["fix"] == {"path": "spec.template.spec.containers[0].resources.requests",
                              "value": {"cpu": "32", "memory": "256Gi"}}
    data = yaml.safe_load(GPU_ONLY)
    data["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = \
        finding["fix"]["value"]
    assert _lint(yaml.safe_dump(data)) == []
    assert pod_qos(data["spec"]["template"]["spec"]) == BURSTABLE


# --- spread ---------------------------------------------------------------------------------

SERVING = """\
apiVersion: pmanifest/v1
workloads:
  - name: api
    role: serving
    image: vllm/vllm-openai:v0.8.5
    gpus: 1
"""
HOSTNAME_SPREAD = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "api"}}}]


def _spread(spec: str) -> Any:
    code, objects, err = _render(spec)
    assert code == 0, err
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    return deployment["spec"]["template"]["spec"].get("topologySpreadConstraints")


@pytest.mark.parametrize(("extra", "expected"), [
    ("", HOSTNAME_SPREAD),  # the default replicas: 2
    ("replicas: 3", HOSTNAME_SPREAD),
    ("replicas: 1", None),  # nothing to spread
    ("replicas: 3\n    spread: false", None),
    ("replicas: 1\n    spread: {}", HOSTNAME_SPREAD),  # asked for
    ("spread: {topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, "
     "maxSkew: 2}",
     [{**HOSTNAME_SPREAD[0], "maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
       "whenUnsatisfiable": "DoNotSchedule"}]),
])
def test_serving_replicas_spread_over_nodes(extra: str, expected: Any) -> None:
    assert _spread(SERVING + (f"    {extra}\n" if extra else "")) == expected


@pytest.mark.parametrize(("spec", "message"), [
    (WORKER + "    spread: {}\n", "<stdin>:7:5: spread applies to serving workloads, not worker; "
                                   "remove it or change role"),
    (SERVING + "    spread: true\n", "<stdin>:7:13: workloads[0].spread must be False, got True; "
                                     "set spread: False"),
    (SERVING + "    spread: {maxSkew: 0}\n", "<stdin>:7:23: workloads[0].spread.maxSkew must be at "
                                             "least 1, got 0; change the value"),
])
def test_spread_refusals(spec: str, message: str) -> None:
    assert _render(spec) == (2, [], message + "\n")


def test_coordinators_and_workers_do_not_spread() -> None:
    code, objects, _ = _render("""\
        apiVersion: pmanifest/v1
        workloads:
          - {name: coord, role: coordinator, image: x, replicas: 2}
          - {name: train, image: x, command: [run], parallelism: 4}
        """)
    assert code == 0
    assert all("topologySpreadConstraints" not in o["spec"]["template"]["spec"]
               for o in objects if o["kind"] in ("Deployment", "Job"))
