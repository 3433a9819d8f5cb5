"""Impact decides severity: a placement finding (PM101-PM103) on a pod whose object requests
no accelerator is one severity level below the same finding on a GPU pod, and says so; one
function (kube.resources.requests_accelerator) decides what an accelerator request is."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.rules.impact import NO_ACCELERATOR

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
    "{limits: {example.com/gpu: 1}}", "{requests: {acme.io/tpu: '1'}}",
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


def test_a_device_asked_for_by_annotation_is_an_accelerator() -> None:
    """A GPU-sharing scheduler's pod annotation (KAI, Run:ai) and KServe's managed DRA
    annotation on the object ask for a device outside ``resources``; an empty or zero value,
    or another annotation, asks for none."""
    base = DEPLOYMENT.format(placement=PREEMPTIBLE, claims="", resources="{}")
    pod_meta = "    metadata: {labels: {app: api}}\n"
    assert pod_meta in base
    for annotation in ("{gpu-fraction: '0.5'}", "{gpu-memory: '4000'}"):
        text = base.replace(pod_meta, pod_meta[:-2] + f", annotations: {annotation}}}\n")
        assert severities(text) == [("PM101", "error", False)]
    for annotation in ("{gpu-fraction: '0'}", "{gpu-fraction: ''}", "{acme.io/gpu: '1'}"):
        text = base.replace(pod_meta, pod_meta[:-2] + f", annotations: {annotation}}}\n")
        assert severities(text) == [("PM101", "warning", True)]
    llmisvc = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: qwen
  annotations: {ANNOTATIONS}
spec:
  model: {uri: hf://Qwen/Qwen2.5-7B-Instruct}
  template:
    containers:
      - name: main
        resources: {limits: {cpu: '4', memory: 32Gi}}
"""
    managed = llmisvc.replace("ANNOTATIONS",
                              "serving.kserve.io/exp-dra-device-class: gpu.nvidia.com")
    assert severities(managed) == [("PM102", "warning", False)]
    assert severities(llmisvc.replace("ANNOTATIONS", "a: b")) == [("PM102", "info", True)]


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
    # workers that share a GPU through the scheduler's annotation (KAI's gpu-fraction)
    shared = RAY.replace("nvidia.com/gpu: 8", "cpu: 8").replace(
        "      template:\n        spec:\n          containers:",
        "      template:\n        metadata: {annotations: {gpu-fraction: '0.5'}}\n"
        "        spec:\n          containers:")
    assert "gpu-fraction" in shared
    assert severities(shared) == [("PM103", "error", False)]


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


CERT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: admission-create}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: create
          image: registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.4.1
          args: [create, --host=svc, --secret-name=cert]
          resources: {resources}
"""
JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train}
spec:
  replicatedJobs:
    - name: initializer
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: fetch, image: ghcr.io/acme/fetch:1}]
    - name: node
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - {name: t, image: ghcr.io/acme/t:1, resources: {limits: {GPU}}}
"""


def test_job_resilience_weighs_impact_too() -> None:
    """PM401 on a CPU Job (an admission cert Job) is info; on a GPU Job a warning."""
    found = lint_bytes(CERT_JOB.replace("{resources}", "{}").encode(), "a.yaml",
                       LintOptions(select=frozenset({"PM401"})))
    assert [(f.rule, f.severity, f.message.endswith(NO_ACCELERATOR)) for f in found] == [
        ("PM401", "info", True)]
    gpu = CERT_JOB.replace("{resources}", "{limits: {gpu.intel.com/i915: 1}}")
    found = lint_bytes(gpu.encode(), "a.yaml", LintOptions(select=frozenset({"PM401"})))
    assert [(f.rule, f.severity) for f in found] == [("PM401", "warning")]


def test_a_jobset_finding_weighs_each_replicated_job() -> None:
    """A CPU initializer's Job is one level below the GPU trainer's beside it."""
    def pm404(text: str) -> list[tuple[str, str]]:
        found = lint_bytes(text.encode(), "a.yaml", LintOptions(select=frozenset({"PM404"})))
        return [(f.rule, f.severity) for f in found]

    assert pm404(JOBSET.replace("{GPU}", "{nvidia.com/gpu: 8}")) == [
        ("PM404", "info"), ("PM404", "warning")]
    assert pm404(JOBSET.replace("{GPU}", "{cpu: 8}")) == [("PM404", "info"), ("PM404", "info")]


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
            spec:
              template:
                spec:
                  restartPolicy: Never
                  containers: [{name: dataset-initializer, image: ghcr.io/kubeflow/init:v2}]
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  restartPolicy: Never
                  containers: [{name: node, image: pytorch/pytorch:2.7.1, command: [torchrun]}]
"""


def test_a_trainer_runtime_s_jobs_keep_their_severity() -> None:
    """A ClusterTrainingRuntime's trainer gets its resources from the TrainJob that runs it
    (resourcesPerNode): what its pods ask for cannot be told, so it is not lowered; its
    dataset initializer's are as written (CPU: one level lower)."""
    found = lint_bytes(RUNTIME.encode(), "a.yaml", LintOptions(select=frozenset({"PM404"})))
    assert [(f.rule, f.severity) for f in found] == [("PM404", "info"), ("PM404", "warning")]


# An OME service that names its runtime and writes no container: the runtime supplies them
OME_SERVICE = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: stablelm}
spec:
  model: {name: stablelm-tuned-alpha-7b}
  engine: {minReplicas: 1}
  router: {minReplicas: 1}
  runtime: {name: srt-stablelm}
"""
OME_RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: srt-stablelm}
spec:
  engineConfig:
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5
      resources: {limits: {cpu: 10, memory: 30Gi, nvidia.com/gpu: 1}}
  routerConfig:
    runner: {name: router, image: ghcr.io/moirai-internal/sgl-router:0.1.4}
"""
KSERVE_SERVICE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec:
  predictor:
    model: {modelFormat: {name: huggingface}, runtime: vllm-gpu}
"""
KSERVE_RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-gpu}
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.9.0
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_service_without_containers_takes_the_accelerator_of_the_runtime_it_names() -> None:
    """The engine's pods come from the runtime's engineConfig (GPUs): the rule's severity; the
    router's from its routerConfig (no accelerator): one level lower. A KServe predictor that
    names a GPU runtime likewise. Without the runtime in the input nothing tells: lower."""
    both = OME_SERVICE + "---\n" + OME_RUNTIME
    assert severities(both) == [("PM102", "warning", False), ("PM102", "info", True)]
    assert severities(OME_SERVICE) == [("PM102", "info", True), ("PM102", "info", True)]
    assert severities(KSERVE_SERVICE + "---\n" + KSERVE_RUNTIME) == [("PM102", "warning", False)]
    assert severities(KSERVE_SERVICE) == [("PM102", "info", True)]
    # another runtime's name, or a service that holds its own (CPU) container: the runtime
    # named elsewhere does not answer for it
    other = OME_SERVICE.replace("srt-stablelm}", "srt-other}") + "---\n" + OME_RUNTIME
    assert severities(other) == [("PM102", "info", True), ("PM102", "info", True)]
    own = OME_SERVICE.replace("engine: {minReplicas: 1}",
                              "engine: {runner: {name: cpu, image: ghcr.io/acme/echo:1}}")
    assert severities(own + "---\n" + OME_RUNTIME) == [("PM102", "info", True),
                                                      ("PM102", "info", True)]


def test_the_runtimes_of_the_whole_input_count(tmp_path: object, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """``lint DIR``: the runtime in another file of the input answers for the service."""
    from pathlib import Path

    root = Path(str(tmp_path))
    monkeypatch.chdir(root)
    (root / "isvc.yaml").write_text(OME_SERVICE)
    (root / "runtime.yaml").write_text(OME_RUNTIME)
    for args in ([], ["--profile", "together"]):
        result = CliRunner().invoke(main, ["lint", "--select", "PM102", *args, "."])
        assert [line.split(" ")[1] for line in result.stdout.splitlines()] == ["warning", "info"]


def test_a_runtime_that_makes_the_component_multi_node_answers_through_its_leader() -> None:
    """deepseek-r1's runtime keeps its GPUs in engineConfig.leader and .worker: the service's
    engine (no container, no leader of its own) runs as those pods."""
    runtime = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: srt-stablelm}
spec:
  engineConfig:
    leader:
      runner: {name: leader, image: docker.io/lmsysorg/sglang:v0.5.5}
    worker:
      runner:
        name: worker
        image: docker.io/lmsysorg/sglang:v0.5.5
        resources: {limits: {cpu: 10, memory: 30Gi, nvidia.com/gpu: 8}}
"""
    assert severities(OME_SERVICE + "---\n" + runtime) == [("PM102", "warning", False),
                                                          ("PM102", "info", True)]
