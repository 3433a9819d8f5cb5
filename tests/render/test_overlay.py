"""The podTemplate overlay (issue 26): what a platform team ships renders exactly, validates
strictly and lints clean; lists merge as kubectl's strategic merge does (keys read from the
Kubernetes schema); whatever would undo the preemption contract or change what render wrote
is refused at its line, naming the spec field to use."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.cli.render_warnings import render_checked
from pmanifest.kube.resources import GUARANTEED, pod_qos
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.render.engine import RenderOptions
from pmanifest.render.overlay import Merger
from pmanifest.schema.kubernetes import supported_versions, validate
from tests.stderr import render_stderr

SHIPPED = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
defaults:
  namespace: llm
  podTemplate:
    spec:
      imagePullSecrets: [{name: registry-acme}]
workloads:
  - name: chat
    role: serving
    image: vllm/vllm-openai:v0.8.5
    args: [--model, meta-llama/Llama-3.1-8B-Instruct]
    gpus: 1
    replicas: 3
    podTemplate:
      metadata:
        annotations: {vault.hashicorp.com/agent-inject: "true"}
        labels: {cost-center: ml-serving}
      spec:
        securityContext: {runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000,
                          seccompProfile: {type: RuntimeDefault}}
        topologySpreadConstraints:
          - maxSkew: 1
            topologyKey: topology.kubernetes.io/zone
            whenUnsatisfiable: ScheduleAnyway
            labelSelector: {matchLabels: {app.kubernetes.io/name: chat}}
        containers:
          - name: chat
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          - name: auth-proxy
            image: quay.io/oauth2-proxy/oauth2-proxy:v7.6.0
            args: [--upstream=http://127.0.0.1:8000]
            ports: [{containerPort: 4180, name: proxy}]
            resources: {requests: {cpu: 100m, memory: 128Mi}}
  - name: finetune
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
    checkpoint: {trigger: sigterm, mode: signal, dir: /mnt/shared/ckpt/finetune}
    podTemplate:
      spec:
        securityContext: {runAsNonRoot: true, runAsUser: 1000}
        initContainers:
          - name: log-shipper
            image: fluent/fluent-bit:3.0
            restartPolicy: Always
            resources: {requests: {cpu: 100m, memory: 64Mi}}
"""


def _render(text: str, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    result = CliRunner().invoke(main, ["render", "-f", "-", *args],
                                input=textwrap.dedent(text))
    objects = [o for o in yaml.safe_load_all(result.stdout) if o] if result.stdout else []
    return result.exit_code, objects, result.stderr


def _pod(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    obj = next(o for o in objects if (o["kind"], o["metadata"]["name"]) == (kind, name))
    template: dict[str, Any] = obj["spec"]["template"]
    return template


def test_what_a_platform_team_ships_renders_exactly() -> None:
    code, objects, err = _render(SHIPPED)
    assert (code, render_stderr(err)) == (0, "")
    overlay = yaml.safe_load(SHIPPED)["workloads"][0]["podTemplate"]
    chat = _pod(objects, "Deployment", "chat")
    spec = chat["spec"]
    assert chat["metadata"]["annotations"] == overlay["metadata"]["annotations"]
    assert chat["metadata"]["labels"]["cost-center"] == "ml-serving"
    assert spec["securityContext"] == overlay["spec"]["securityContext"]
    assert spec["imagePullSecrets"] == [{"name": "registry-acme"}]
    # pmanifest's spread across nodes, then the overlay's across zones
    assert [c["topologyKey"] for c in spec["topologySpreadConstraints"]] == [
        "kubernetes.io/hostname", "topology.kubernetes.io/zone"]
    assert spec["topologySpreadConstraints"][1] == overlay["spec"]["topologySpreadConstraints"][0]
    main_container, proxy = spec["containers"]
    assert main_container["securityContext"] == overlay["spec"]["containers"][0]["securityContext"]
    assert main_container["image"] == "vllm/vllm-openai:v0.8.5"  # the rest is render's
    assert "nvidia.com/gpu" in main_container["resources"]["limits"]
    assert proxy == overlay["spec"]["containers"][1]
    # the worker: a native sidecar, the pull secret from defaults, the contract untouched
    job = _pod(objects, "Job", "finetune")["spec"]
    assert job["initContainers"][0]["name"] == "log-shipper"
    assert job["imagePullSecrets"] == [{"name": "registry-acme"}]
    assert (job["restartPolicy"], job["terminationGracePeriodSeconds"]) == ("Never", 300)
    assert job["nodeSelector"] == {"together.ai/compute-class": "preemptible"}


@pytest.mark.parametrize("version", [v for v in supported_versions() if v >= "1.29"])
def test_it_validates_strictly_and_lints_clean(version: str) -> None:
    rendered = render_checked(SHIPPED, "spec.yaml", RenderOptions(kubernetes_version=version))
    assert rendered.warnings == ()
    for obj in yaml.safe_load_all(rendered.text):
        assert validate(obj, version) == []
    options = LintOptions(kubernetes_version=version)
    assert lint_bytes(rendered.text.encode(), "rendered.yaml", options) == []


SERVING = """\
apiVersion: pmanifest/v1
defaults:
  podTemplate:
    spec:
      securityContext: {runAsUser: 1000, runAsGroup: 1000}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
workloads:
  - name: api
    role: serving
    image: x
    env: {MODE: prod}
    volumes: [{name: cache, mountPath: /cache, emptyDir: {}}]
    podTemplate:
      spec:
        securityContext: {runAsUser: 2000}
        tolerations:
          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
          - {key: dedicated, value: llm, effect: NoSchedule}
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [H100]}]
                - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [B200]}]
            preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 10
                preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}
          podAntiAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 50
                podAffinityTerm:
                  topologyKey: kubernetes.io/hostname
                  labelSelector: {matchLabels: {app: batch}}
        volumes: [{name: tmp, emptyDir: {}}]
        containers:
          - name: api
            env: [{name: EXTRA, value: "1"}]
            volumeMounts: [{name: tmp, mountPath: /tmp}]
"""


def test_lists_merge_by_their_schema_key_and_others_are_appended() -> None:
    code, objects, err = _render(SERVING)
    assert code == 0, err
    spec = _pod(objects, "Deployment", "api")["spec"]
    # mappings merge; the workload's overlay wins over the one in defaults
    assert spec["securityContext"] == {"runAsUser": 2000, "runAsGroup": 1000}
    # an atomic list is appended to, an item already there is not repeated
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists",
                                    "effect": "NoSchedule"},
                                   {"key": "dedicated", "value": "llm", "effect": "NoSchedule"}]
    # required terms are ORed: the NotIn exclusion is ANDed into each of the overlay's
    not_in = {"key": "together.ai/compute-class", "operator": "NotIn",
              "values": ["preemptible"]}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {"matchExpressions": [not_in, {"key": "nvidia.com/gpu.product", "operator": "In",
                                       "values": [gpu]}]} for gpu in ("H100", "B200")]
    assert spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0][
        "weight"] == 10
    assert "podAntiAffinity" in spec["affinity"]
    # volumes, env and mounts by name / mountPath: pmanifest's first, the overlay's added
    assert [v["name"] for v in spec["volumes"]] == ["cache", "tmp"]
    [api] = spec["containers"]
    assert [e["name"] for e in api["env"]] == ["MODE", "EXTRA"]
    assert [m["mountPath"] for m in api["volumeMounts"]] == ["/cache", "/tmp"]


def test_the_merge_keys_come_from_the_schema() -> None:
    merger = Merger("1.31")
    pod = {"$ref": "#/$defs/io.k8s.api.core.v1.PodSpec"}
    keys = {path: key for path, key, _ in merger.keyed_lists({
        "containers": [{"name": "a", "ports": [{"containerPort": 1}], "env": [],
                        "volumeMounts": []}],
        "initContainers": [], "volumes": [], "imagePullSecrets": [], "hostAliases": [],
        "topologySpreadConstraints": [], "tolerations": [], "schedulingGates": []}, pod)}
    assert keys == {("containers",): "name", ("containers", 0, "ports"): "containerPort",
                    ("containers", 0, "env"): "name",
                    ("containers", 0, "volumeMounts"): "mountPath", ("initContainers",): "name",
                    ("volumes",): "name", ("imagePullSecrets",): "name",
                    ("hostAliases",): "ip", ("topologySpreadConstraints",): "topologyKey",
                    ("schedulingGates",): "name"}  # tolerations: atomic, no key
    merged = merger.merge({"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}]},
                          {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b"]},
                                           {"ip": "10.0.0.2", "hostnames": ["c"]}]},
                          pod, (), ())
    assert merged == {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a", "b"]},
                                      {"ip": "10.0.0.2", "hostnames": ["c"]}]}


def test_pmanifest_own_pods_take_the_pull_secret_and_the_security_context_only() -> None:
    code, objects, err = _render("""\
        apiVersion: pmanifest/v1
        workloads:
          - name: trainer
            image: registry.acme/trainer:1.4
            command: [python, train.py]
            gpus: 8
            distributed: {minNodes: 2, maxNodes: 4}
            checkpoint: {trigger: sigterm, mode: signal}
            podTemplate:
              metadata: {labels: {team: ml}}
              spec:
                imagePullSecrets: [{name: acme}]
                securityContext: {runAsNonRoot: true}
                runtimeClassName: nvidia
                containers: [{name: trainer, securityContext: {privileged: false}}]
        """)
    assert code == 0, err
    workers = _pod(objects, "Job", "trainer")
    store = _pod(objects, "Deployment", "trainer-rendezvous")
    assert workers["metadata"]["labels"]["team"] == "ml"
    assert workers["spec"]["runtimeClassName"] == "nvidia"
    assert workers["spec"]["containers"][0]["securityContext"] == {"privileged": False}
    assert store["spec"]["imagePullSecrets"] == [{"name": "acme"}]
    assert store["spec"]["securityContext"] == {"runAsNonRoot": True}
    assert "team" not in store["metadata"]["labels"]
    assert "runtimeClassName" not in store["spec"]
    assert "securityContext" not in store["spec"]["containers"][0]


def _with(spec: str, path: str, value: str) -> str:
    """``spec`` with a line inserted under the finetune workload's podTemplate.spec."""
    return spec.replace("        securityContext: {runAsNonRoot: true, runAsUser: 1000}\n",
                        f"        securityContext: {{runAsNonRoot: true, runAsUser: 1000}}\n"
                        f"        {path}: {value}\n")


PLACEMENT = ("placement on preemptible nodes is decided by compute (workers: compute: "
             "preemptible or standard; coordinators and serving always stay on standard "
             "nodes); use compute")
REFUSED: list[tuple[str, str, str]] = [
    ("a worker on standard nodes by nodeSelector",
     _with(SHIPPED, "nodeSelector", "{together.ai/compute-class: standard}"),
     f"<stdin>:44:24: podTemplate cannot select nodes by 'together.ai/compute-class': "
     f"{PLACEMENT}"),
    ("a worker kept off preemptible nodes by affinity",
     _with(SHIPPED, "affinity", "{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution"
           ": {nodeSelectorTerms: [{matchExpressions: [{key: together.ai/compute-class, "
           "operator: NotIn, values: [preemptible]}]}]}}}"),
     f"<stdin>:44:125: podTemplate cannot place pods by 'together.ai/compute-class': "
     f"{PLACEMENT}"),
    ("a preferred term on the label",
     _with(SHIPPED, "affinity", "{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution"
           ": [{weight: 1, preference: {matchExpressions: [{key: together.ai/compute-class, "
           "operator: In, values: [standard]}]}}]}}"),
     f"<stdin>:44:130: podTemplate cannot place pods by 'together.ai/compute-class': "
     f"{PLACEMENT}"),
    ("a named node", _with(SHIPPED, "nodeName", "gpu-dp-1"),
     f"<stdin>:44:9: podTemplate cannot pin pods to a named node, which may be a preemptible "
     f"one: {PLACEMENT}, and nodeSelector for other node labels"),
    ("the grace period past the cap", _with(SHIPPED, "terminationGracePeriodSeconds", "900"),
     "<stdin>:44:9: podTemplate cannot set the grace period: it is the checkpoint's window, "
     "which the supervisor's deadline and the preemption contract are sized to (at most 300 s "
     "on preemptible nodes, which are removed 300 s after the notice); set "
     "checkpoint.gracePeriodSeconds"),
    ("restartPolicy", _with(SHIPPED, "restartPolicy", "OnFailure"),
     "<stdin>:44:9: podTemplate cannot set restartPolicy: pmanifest sets it from the role "
     "(Never for a worker, which its podFailurePolicy needs; a Deployment's is Always); "
     "remove it"),
    ("a shared process namespace",
     _with(SHIPPED, "shareProcessNamespace", "true"),
     "<stdin>:44:9: podTemplate cannot share the pod's process namespace: the termination "
     "supervisor must be PID 1, which the preStop hook signals to mark a termination "
     "(shared, PID 1 is the pause process, and the kubelet's TERM would be taken for one "
     "from inside the container); remove it"),
    ("the supervisor's command",
     _with(SHIPPED, "containers", "[{name: finetune, command: [python, train.py]}]"),
     "<stdin>:44:39: podTemplate cannot set command of the main container: it is the main's "
     "argv, run under pmanifest's termination supervisor; set command instead"),
    ("a preStop hook on the main container",
     _with(SHIPPED, "containers",
           "[{name: finetune, lifecycle: {preStop: {exec: {command: [save]}}}}]"),
     "<stdin>:44:51: podTemplate cannot add a preStop hook to the main container: it is a "
     "checkpoint trigger, and a pod has exactly one (the hook or the supervisor's TERM "
     "handling); use checkpoint: {trigger: preStop, command: [...]}"),
    ("the main container's resources",
     _with(SHIPPED, "containers", "[{name: finetune, resources: {limits: {cpu: 1}}}]"),
     "<stdin>:44:39: podTemplate cannot set resources of the main container: it is its "
     "requests and limits (GPUs, the per-GPU requests, the QoS class); set resources, gpus and "
     "qos instead"),
    ("an unknown field, at its line",
     _with(SHIPPED, "schedulerNam", "gpu-scheduler"),
     "<stdin>:44:9: unknown key 'schedulerNam' in podTemplate.spec; did you mean "
     "'schedulerName'? (the pod spec of Kubernetes 1.31)"),
    ("a field of the wrong type",
     _with(SHIPPED, "hostNetwork", "'yes'"),
     "<stdin>:44:22: podTemplate.spec.hostNetwork must be a boolean, got string; give a "
     "boolean (the pod spec of Kubernetes 1.31)"),
    ("a container without its merge key",
     _with(SHIPPED, "containers", "[{image: busybox}]"),
     "<stdin>:44:22: podTemplate.spec.containers[0] has no name: items of containers are "
     "merged by name; add name"),
    ("a regular container in a worker's pod",
     _with(SHIPPED, "containers", "[{name: shipper, image: busybox}]"),
     "<stdin>:44:23: podTemplate adds the container 'shipper' to a worker's pod, where it "
     "would keep running after the main exits, so the pod never completes; add it under "
     "initContainers with restartPolicy: Always (a native sidecar, stopped once the main has "
     "exited; Kubernetes 1.29+)"),
    ("a mount over the shared volume",
     _with(SHIPPED, "containers",
           "[{name: finetune, volumeMounts: [{name: x, mountPath: /mnt/shared/ckpt}]}]"),
     "<stdin>:44:64: podTemplate mounts /mnt/shared/ckpt on the shared volume (mounted at "
     "/mnt/shared), which would hide it and catch the checkpoints written there; mount it "
     "elsewhere"),
    ("a rendered env value changed",
     _with(SHIPPED, "containers",
           "[{name: finetune, env: [{name: CHECKPOINT_DIR, value: /tmp}]}]"),
     "<stdin>:44:45: podTemplate merges into spec.containers[0].env[0] of the rendered pod "
     "template, which pmanifest makes from checkpoint.dir; change checkpoint.dir instead "
     "(podTemplate adds items, it never changes pmanifest's)"),
    ("the shared volume replaced",
     _with(SHIPPED, "volumes", "[{name: shared, emptyDir: {}}]"),
     "<stdin>:44:19: podTemplate merges into spec.volumes[0] of the rendered pod template, "
     "which pmanifest makes from cluster.sharedVolume; change cluster.sharedVolume instead "
     "(podTemplate adds items, it never changes pmanifest's)"),
    ("a rendered value changed",
     _with(SHIPPED, "serviceAccountName", "x").replace(
         "    checkpoint: {trigger: sigterm", "    serviceAccountName: trainer\n"
         "    checkpoint: {trigger: sigterm"),
     "<stdin>:45:29: podTemplate changes spec.serviceAccountName of the rendered pod template "
     "('trainer' to 'x'), which pmanifest sets from serviceAccountName; set it there "
     "(podTemplate adds, it never changes what render wrote)"),
    ("pmanifest's spread changed through the overlay",
     SHIPPED.replace("topologyKey: topology.kubernetes.io/zone",
                     "topologyKey: kubernetes.io/hostname").replace(
         "whenUnsatisfiable: ScheduleAnyway\n            labelSelector",
         "whenUnsatisfiable: DoNotSchedule\n            labelSelector"),
     "<stdin>:24:13: podTemplate merges into spec.topologySpreadConstraints[0] of the rendered "
     "pod template, which pmanifest makes from spread; change spread instead (podTemplate adds "
     "items, it never changes pmanifest's)"),
]


@pytest.mark.parametrize(("name", "spec", "message"), REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_at_its_line(name: str, spec: str, message: str) -> None:
    assert _render(spec) == (2, [], message + "\n")


def test_a_toleration_of_the_preemptible_taint_is_refused() -> None:
    spec = _with(SHIPPED, "tolerations",
                 "[{key: kubernetes.azure.com/scalesetpriority, operator: Exists}]")
    code, objects, err = _render(spec, "--profile", "aks")
    assert (code, objects) == (2, [])
    assert err.startswith("<stdin>:44:23: podTemplate cannot tolerate the taint "
                          "'kubernetes.azure.com/scalesetpriority' of preemptible nodes")


def test_qos_guaranteed_holds_with_the_overlay_containers() -> None:
    spec = SHIPPED.replace("    checkpoint: {trigger: sigterm", "    qos: Guaranteed\n"
                           "    checkpoint: {trigger: sigterm")
    code, objects, err = _render(spec)
    assert (code, objects) == (2, [])
    assert err == ("<stdin>:46:13: qos: Guaranteed needs every container to limit CPU and "
                   "memory at its requests, and podTemplate adds 'log-shipper'; give it "
                   "resources with limits equal to requests\n")
    fixed = spec.replace("resources: {requests: {cpu: 100m, memory: 64Mi}}\n",
                         "resources: {requests: {cpu: 100m, memory: 64Mi}, "
                         "limits: {cpu: 100m, memory: 64Mi}}\n")
    code, objects, err = _render(fixed)
    assert code == 0, err
    assert pod_qos(_pod(objects, "Job", "finetune")["spec"]) == GUARANTEED


@pytest.mark.parametrize(("value", "message"), [
    ("'true'", None),  # the same value: no change
    ("'false'", "<stdin>:19:57: podTemplate changes metadata.annotations.vault.hashicorp.com/"
                "agent-inject of the rendered pod template ('true' to 'false'), which "
                "pmanifest sets from podAnnotations; set it there (podTemplate adds, it never "
                "changes what render wrote)"),
])
def test_only_a_different_value_is_a_change(value: str, message: str | None) -> None:
    spec = SHIPPED.replace("    replicas: 3\n", "    replicas: 3\n    podAnnotations: "
                           "{vault.hashicorp.com/agent-inject: 'true'}\n")
    spec = spec.replace('annotations: {vault.hashicorp.com/agent-inject: "true"}',
                        f"annotations: {{vault.hashicorp.com/agent-inject: {value}}}")
    code, objects, err = _render(spec)
    if message is None:
        assert (code, render_stderr(err)) == (0, "")
    else:
        assert (code, objects, err) == (2, [], message + "\n")


def test_a_process_namespace_that_is_not_shared_is_accepted() -> None:
    """shareProcessNamespace: false keeps the supervisor PID 1: nothing to refuse."""
    code, objects, stderr = _render(_with(SHIPPED, "shareProcessNamespace", "false"))
    assert code == 0, stderr
    [job] = [o for o in objects if o["kind"] == "Job"]
    assert job["spec"]["template"]["spec"]["shareProcessNamespace"] is False
