"""Impact decides severity: a placement finding (PM101-PM103) on a pod whose object requests
no accelerator is one severity level below the same finding on a GPU pod, and says so; one
function (kube.resources.requests_accelerator) decides what an accelerator request is."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.rules.placement import NO_ACCELERATOR

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api}}
spec:
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec:
      {placement}
      {claims}
      containers:
        - name: api
          image: ghcr.io/acme/api:2
          resources: {resources}
"""
PREEMPTIBLE = "nodeSelector: {together.ai/compute-class: preemptible}"
PLACEMENT = frozenset({"PM101", "PM102", "PM103"})


def severities(text: str, **options: object) -> list[tuple[str, str, bool]]:
    found = lint_bytes(text.encode(), "a.yaml", LintOptions(select=PLACEMENT, **options))  # type: ignore[arg-type]
    return [(f.rule, f.severity, f.message.endswith(NO_ACCELERATOR)) for f in found]


@pytest.mark.parametrize("resources", [
    "{limits: {nvidia.com/gpu: 1}}", "{requests: {nvidia.com/gpu: '2'}}",
    "{limits: {nvidia.com/mig-1g.10gb: 1}}", "{limits: {nvidia.com/gpu.shared: 1}}",
    "{limits: {amd.com/gpu: 1}}", "{limits: {gpu.intel.com/i915: 1}}",
    "{limits: {aws.amazon.com/neuroncore: 2}}", "{limits: {aws.amazon.com/neuron: 1}}",
    "{limits: {google.com/tpu: 4}}", "{limits: {habana.ai/gaudi: 8}}",
    "{limits: {npu.intel.com/accel: 1}}",
    "{claims: [{name: gpu}]}",
])
def test_a_pod_with_an_accelerator_keeps_the_rule_s_severity(resources: str) -> None:
    text = DEPLOYMENT.format(placement=PREEMPTIBLE, claims="", resources=resources)
    assert severities(text) == [("PM101", "error", False)]


@pytest.mark.parametrize(("resources", "claims"), [
    ("{}", ""), ("{limits: {cpu: '2', memory: 4Gi}}", ""), ("{limits: {nvidia.com/gpu: 0}}", ""),
    ("{limits: {example.com/gpu-like: 1}}", ""),
])
def test_a_pod_without_one_is_one_level_lower_and_says_so(resources: str, claims: str) -> None:
    text = DEPLOYMENT.format(placement=PREEMPTIBLE, claims=claims, resources=resources)
    assert severities(text) == [("PM101", "warning", True)]
    unpinned = DEPLOYMENT.format(placement="", claims=claims, resources=resources)
    assert severities(unpinned) == [("PM102", "info", True)]


def test_a_dra_claim_on_the_pod_is_an_accelerator() -> None:
    text = DEPLOYMENT.format(placement=PREEMPTIBLE, resources="{}",
                             claims="resourceClaims: [{name: gpu, resourceClaimName: a100}]")
    assert severities(text) == [("PM101", "error", False)]


def test_the_configured_severity_is_the_one_lowered() -> None:
    text = DEPLOYMENT.format(placement=PREEMPTIBLE, claims="", resources="{}")
    assert severities(text, severities=MappingProxyType({"PM101": "warning"})) == [
        ("PM101", "info", True)]


KSERVE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec:
  predictor:
    nodeSelector: {together.ai/compute-class: preemptible}
    model:
      modelFormat: {name: huggingface}
      resources: {limits: {nvidia.com/gpu: "1"}}
"""
RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    template:
      spec:
        nodeSelector: {together.ai/compute-class: preemptible}
        containers: [{name: head, image: rayproject/ray:2.41.0}]
  workerGroupSpecs:
    - groupName: gpu
      template:
        spec:
          containers:
            - {name: w, image: rayproject/ray:2.41.0, resources: {limits: {nvidia.com/gpu: 8}}}
"""
POSTGRES = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      nodeSelector: {together.ai/compute-class: preemptible}
      containers: [{name: pg, image: postgres:16}]
"""


def test_a_kserve_model_s_resources_are_the_predictor_s() -> None:
    assert severities(KSERVE) == [("PM101", "error", False)]


def test_a_coordinator_s_impact_is_the_gpu_pods_of_its_object() -> None:
    assert severities(RAY) == [("PM103", "error", False)]
    assert severities(RAY.replace("nvidia.com/gpu: 8", "cpu: 8")) == [("PM103", "warning", True)]
    assert severities(POSTGRES) == [("PM103", "warning", True)]


def test_explain_says_impact_decides_severity() -> None:
    for rule in ("PM101", "PM102", "PM103"):
        text = " ".join(CliRunner().invoke(main, ["explain", rule]).stdout.split())
        assert "Impact decides severity: on a pod that requests no accelerator" in text
        assert "reported one severity level lower (error to warning, warning to info)" in text


def test_a_serving_pod_s_impact_is_its_own() -> None:
    """A CPU transformer beside a GPU predictor is one level lower; the predictor is not."""
    transformer = KSERVE + """\
  transformer:
    nodeSelector: {together.ai/compute-class: preemptible}
    containers: [{name: t, image: ghcr.io/acme/tokenizer:1}]
"""
    assert severities(transformer) == [("PM101", "error", False), ("PM101", "warning", True)]


def test_an_accelerator_in_an_init_container_counts() -> None:
    text = DEPLOYMENT.format(
        placement=PREEMPTIBLE, resources="{}",
        claims="initContainers: [{name: warm, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]")
    assert severities(text) == [("PM101", "error", False)]
