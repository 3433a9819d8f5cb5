"""Where each workload kind keeps its pod templates, and the role each template plays.

Data only: :mod:`pmanifest.kube.workloads` reads this table, so teaching pmanifest a kind is one
entry here. A kind is named by its API group and kind (``""`` stands for every built-in group:
the core group, groups without a dot and ``*.k8s.io``, as in :mod:`pmanifest.schema.kubernetes`).

Template paths are dotted, with two wildcards: ``[*]`` any item of a list, ``*`` any value of
a mapping (``spec.pytorchReplicaSpecs.*.template.spec``). The name of what the last wildcard
matched (the item's ``name_key``, or the mapping key) names the template in messages and, with
``named``, decides its role: a name with a coordinator word in it (``leader``, ``rj-leader``,
``Master``, ``PS``, ``mpimaster``) makes a coordinator.

Roles: ``worker``, ``coordinator``, ``serving``, ``daemon`` as such; ``set``: the role of the
set (the ``pmanifest.io/role`` declared on the object, else the kind's ``set_role``);
``leader``: coordinator when the set's pods are workers, else the set's role.

Pods at once (``pods``, read by :mod:`pmanifest.cluster.demand` for the capacity checks):
the product of the template's counts, each a whole number at a path written with the template's own
wildcards (``spec.replicatedJobs[*].replicas`` for the template of that replicatedJob), or its
default when absent, kept within ``low``..``high`` and less ``minus``. No counts: one pod.
A kind that only describes pods for others to run (``runs=False``: a TrainingRuntime, a
WorkflowTemplate, a PodTemplate) asks for no capacity, nor does a template whose pods run
when something the table does not follow calls them (``counted=False``: Argo's templates run
as the workflow's steps reach them; only the size of one pod is checked).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from pmanifest.kube.contract import COORDINATOR_ROLE, DAEMON_ROLE, SERVING_ROLE, WORKER_ROLE

WORKER, COORDINATOR, SERVING = WORKER_ROLE, COORDINATOR_ROLE, SERVING_ROLE  # short names
SET, LEADER = "set", "leader"
BUILTIN = ""  # the group of the core kinds: any built-in API group

# Words in a replicatedJob, task or replica name that make its pods a coordinator: what holds
# the rendezvous, the parameters or the launcher of the others.
COORDINATOR_NAMES = frozenset({
    "leader", "driver", "launcher", "master", "head", "coordinator", "chief", "ps",
    "mpimaster", "scheduler", "server",
})
# Images of databases, queues and object stores: the last path component, tag and digest
# removed, is one of these with any version words (redis7, mysql-80, postgresql-16-c9s), a
# suffix of STATEFUL_SUFFIXES (redis-stack-server) or a prefix of STATEFUL_PREFIXES (cp-kafka):
# the grammar is pmanifest.kube.roles'. A Deployment running one is a stateful anchor, not a
# stateless server (PM103's rationale). `kafka-exporter` and `cp-kafka-rest` are not kafka.
STATEFUL_IMAGES = frozenset({
    "postgres", "postgresql", "postgis", "pgvector", "timescaledb", "mysql", "mariadb",
    "percona", "redis", "valkey", "keydb", "memcached", "etcd", "zookeeper", "kafka",
    "rabbitmq", "mongo", "mongodb", "cassandra", "scylla", "cockroach", "nats", "pulsar",
    "clickhouse", "minio", "neo4j", "influxdb", "elasticsearch", "opensearch", "couchdb",
    "seaweedfs", "qdrant", "milvus", "weaviate",
})
STATEFUL_SUFFIXES = frozenset({"server", "stack", "stack-server", "cluster", "standalone",
                               "sentinel", "community-server", "enterprise-server"})
STATEFUL_PREFIXES = frozenset({"cp"})  # Confluent Platform: cp-kafka, cp-zookeeper
# Where containers are in a template: (key, is a list, is init).
POD_CONTAINERS = (("initContainers", True, True), ("containers", True, False))
ARGO_CONTAINERS = (("initContainers", True, True), ("container", False, False),
                   ("script", False, False), ("sidecars", True, False))
SPARK_CONTAINERS = (("initContainers", True, True), ("sidecars", True, False))


class Count(NamedTuple):
    """One factor of the pods a template runs at once (paths are patterns, see above)."""

    path: str
    default: int = 1
    low: str | None = None  # e.g. a Ray group's minReplicas
    high: str | None = None  # e.g. a Job's completions, a Ray group's maxReplicas
    minus: int = 0  # a LeaderWorkerSet's size counts its leader


class Template(NamedTuple):
    """Where a kind keeps one pod template, its role and how many pods it runs."""

    path: str  # to the pod spec (or a pod-like mapping with the same placement fields)
    role: str
    part: str = ""  # what the template is, in messages: "head", "replicatedJob", ...
    named: bool = False  # the role follows the name of the last wildcard's match
    name_key: str = "name"  # where a list item keeps its name (KubeRay: groupName)
    job: bool = False  # the pod spec sits in a batch/v1 JobSpec (``template.spec`` below it)
    set: str | None = None  # a prefix of ``path``: the spec of the set that runs the template
    meta: str = "sibling"  # its metadata: sibling (next to ``spec``), child, self (labels in it)
    containers: tuple[tuple[str, bool, bool], ...] = POD_CONTAINERS
    requires: tuple[str, ...] = ()  # a template only when it has one of these keys
    unless: str | None = None  # not a template when it has this key (OME: a ``leader``)
    # the part of the runtime its object names (``Kind.runtime_ref``) that supplies its
    # containers when it holds none (a KServe predictor: the runtime's ``runtime``)
    from_runtime: str = ""
    partial: bool = False  # an override merged into a pod spec the manifest does not show
    if_present: str | None = None  # only when the template's holder has this key...
    if_absent: str | None = None  # ...or has not
    by_image: bool = False  # a database or queue image makes it a coordinator
    recovers: bool = False  # a framework runtime (Ray) replaces lost pods and resumes from its
    # own checkpoints: no SIGTERM handler is expected in the container (PM302)
    pods: tuple[Count, ...] = ()  # pods at once: the product of these (none: one pod)
    counted: bool = True  # False: when its pods run is not in the object (Argo's steps)
    meta_also: str | None = None  # more metadata whose role label counts (a JobSet's Job
    # template), after the template's own
    # paths from the object: a non-empty mapping or "true" at one of them makes the loss of the
    # template's pods survivable for the others (KubeRay GCS fault tolerance: the head's state
    # lives in a store, workers and Serve replicas keep running while a new head recovers it)
    fault_tolerant_if: tuple[tuple[str, ...], ...] = ()
    # a path from the object whose non-empty value (or a database image) keeps the template's
    # role; without either the role comes from what the pod runs (a StatefulSet with no
    # volumeClaimTemplates may be a singleton controller, a server, a trainer), and when that
    # tells nothing the pods are long-running ones, serving, as a Deployment's
    anchor_if: str | None = None


class Kind(NamedTuple):
    """A kind pmanifest reads: its group, its pod templates and embedded objects."""

    group: str
    kind: str
    templates: tuple[Template, ...] = ()
    embedded: tuple[str, ...] = ()  # paths of whole objects inside it, read as objects
    set_role: str = WORKER  # the role of ``set`` templates when the object declares none
    title: str = ""  # how messages name the kind, when its name alone is ambiguous
    runs: bool = True  # False: a template for others to run (it asks for no capacity)
    # where an object of the kind names the runtime (of ``runtime_kinds``, in its group) whose
    # templates supply the containers of those it holds none in (``Template.from_runtime``)
    runtime_ref: str = ""
    runtime_kinds: tuple[str, ...] = ()
    # API groups the kind had before its project renamed its group: an object under one is
    # read as this kind, named by this group (KFServing's serving.kubeflow.org for KServe)
    former_groups: tuple[str, ...] = ()


# KubeRay GCS fault tolerance, the current field and the older annotation (a RayService's
# annotations are copied to its RayCluster). A RayJob's entrypoint runs on its head, so a
# RayJob head is never survivable.
RAY_FT_ANNOTATION = ("metadata", "annotations", "ray.io/ft-enabled")


def _ray(prefix: str, workers: str, ft: bool = False) -> tuple[Template, ...]:
    group = f"{prefix}workerGroupSpecs[*]."
    # KubeRay keeps a group's replicas (default 0) within minReplicas..maxReplicas, and runs
    # numOfHosts pods for each (multi-host groups)
    pods = (Count(f"{group}replicas", 0, low=f"{group}minReplicas", high=f"{group}maxReplicas"),
            Count(f"{group}numOfHosts"))
    ft_paths = ((*[p for p in prefix.rstrip(".").split(".") if p], "gcsFaultToleranceOptions"),
                RAY_FT_ANNOTATION) if ft else ()
    return (Template(f"{prefix}headGroupSpec.template.spec", COORDINATOR, "head", recovers=True,
                     fault_tolerant_if=ft_paths),
            Template(f"{group}template.spec", workers, "worker group", name_key="groupName",
                     recovers=True, pods=pods))


def _submitter(prefix: str) -> Template:
    # the Job that submits the entrypoint: the RayJob fails when it does
    return Template(f"{prefix}submitterPodTemplate.spec", COORDINATOR, "submitter")


def _replicas(field: str) -> Template:
    return Template(f"spec.{field}.*.template.spec", WORKER, "replica", named=True,
                    pods=(Count(f"spec.{field}.*.replicas"),))


def _job(spec: str) -> tuple[Count, ...]:
    """A batch/v1 Job's pods at once: parallelism (default 1), no more than completions."""
    return (Count(f"{spec}parallelism", high=f"{spec}completions"),)


def _jobset(prefix: str, partial: bool = False) -> Template:
    job = f"{prefix}replicatedJobs[*]."
    return Template(f"{job}template.spec.template.spec", WORKER, "replicatedJob", named=True,
                    job=not partial, set=None if partial else prefix.rstrip("."),
                    partial=partial, meta_also=f"{job}template.metadata",
                    pods=(Count(f"{job}replicas"), *_job(f"{job}template.spec.")))


def _override(field: str, pod: str, meta: str = "sibling") -> Template:
    # a TrainJob's override (v2.0 podSpecOverrides, v2.1 podTemplateOverrides) of the
    # runtime's replicatedJobs named in targetJobs
    return Template(f"spec.{field}[*]{pod}", WORKER, field[:-1], named=True,
                    name_key="targetJobs[*].name", meta=meta, partial=True)


def _lws(prefix: str) -> tuple[Template, ...]:
    base = f"{prefix}leaderWorkerTemplate."
    groups = Count(f"{prefix}replicas")  # groups of `size` pods, the leader among them
    return (Template(f"{base}leaderTemplate.spec", LEADER, "leader", pods=(groups,)),
            Template(f"{base}workerTemplate.spec", SET, "workers", if_present="leaderTemplate",
                     pods=(groups, Count(f"{base}size", minus=1))),
            Template(f"{base}workerTemplate.spec", LEADER, "leader and workers",
                     if_absent="leaderTemplate", pods=(groups, Count(f"{base}size"))))


def _tasks(prefix: str) -> Template:
    return Template(f"{prefix}tasks[*].template.spec", WORKER, "task", named=True,
                    set=prefix.rstrip("."), pods=(Count(f"{prefix}tasks[*].replicas", 0),))


def _argo(prefix: str) -> Template:
    return Template(f"{prefix}templates[*]", WORKER, "template", meta="child",
                    containers=ARGO_CONTAINERS, requires=("container", "script"),
                    counted=False)


def _spark(prefix: str) -> tuple[Template, ...]:
    return (Template(f"{prefix}driver", COORDINATOR, "driver", meta="self",
                     containers=SPARK_CONTAINERS),
            Template(f"{prefix}executor", WORKER, "executor", meta="self",
                     containers=SPARK_CONTAINERS, pods=(Count(f"{prefix}executor.instances"),)))


def _kserve_llm(partial: bool) -> tuple[Template, ...]:
    # LLMInferenceService pod specs; an LLMInferenceServiceConfig holds the same ones as the
    # defaults a service is merged onto (partial: its pods' placement is the service's too)
    return tuple(Template(f"spec.{path}", SERVING, part, partial=partial) for path, part in (
        ("template", "template"), ("worker", "worker"), ("prefill.template", "prefill"),
        ("prefill.worker", "prefill worker"), ("router.scheduler.template", "scheduler"),
        ("router.scheduler.tokenizer.template", "tokenizer")))


def _kserve_runtime() -> tuple[Template, ...]:
    # a (Cluster)ServingRuntime: containers and placement merged into every predictor using it
    return (Template("spec", SERVING, "runtime", partial=True),
            Template("spec.workerSpec", SERVING, "runtime workers", partial=True))


# OME (a KServe fork under ome.io): each component's pod fields inline (multi-node: its leader
# and worker), its container as one mapping, ``runner``; a (Cluster)ServingRuntime holds the
# same components as the defaults a service is merged onto (``engineConfig``, ...)
RUNNER_CONTAINERS = (*POD_CONTAINERS, ("runner", False, False))
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
# what an input's serving runtimes tell (pmanifest.lint.inputscan reads them): (API group,
# runtime name) -> the runtime's template parts -> does the part's pod ask for an accelerator
Runtimes = Mapping[tuple[str, str], Mapping[str, bool]]


def _ome(suffix: str, partial: bool) -> tuple[Template, ...]:
    # a multi-node component's pods are its leader's and workers': its own fields make none
    return tuple(Template(f"spec.{component}{suffix}{below}", SERVING,
                          f"{component} {below[1:]}" if below else component, meta="self",
                          containers=RUNNER_CONTAINERS, partial=partial,
                          unless=None if below else "leader",
                          from_runtime="" if partial else f"{component} {below[1:]}".strip())
                 for component in ("engine", "decoder", "router")
                 for below in (("", ".leader", ".worker") if component != "router" else ("",)))


_REPLICATED = (Count("spec.replicas"),)
_SERVING = Template("spec.template.spec", SERVING, by_image=True, pods=_REPLICATED)
KINDS: tuple[Kind, ...] = (
    # built-in kinds
    Kind(BUILTIN, "Pod", (Template("spec", WORKER),)),
    Kind(BUILTIN, "Job", (Template("spec.template.spec", WORKER, job=True, pods=_job("spec.")),)),
    Kind(BUILTIN, "CronJob", (Template("spec.jobTemplate.spec.template.spec", WORKER, job=True,
                                       pods=_job("spec.jobTemplate.spec.")),)),
    Kind(BUILTIN, "Deployment", (_SERVING,)),
    Kind(BUILTIN, "ReplicaSet", (_SERVING,)),
    Kind(BUILTIN, "ReplicationController", (_SERVING,)),
    Kind(BUILTIN, "StatefulSet", (Template("spec.template.spec", COORDINATOR, pods=_REPLICATED,
                                           anchor_if="spec.volumeClaimTemplates"),)),
    Kind(BUILTIN, "DaemonSet", (Template("spec.template.spec", DAEMON_ROLE),)),
    Kind(BUILTIN, "PodTemplate", (Template("template.spec", WORKER),), runs=False),
    # KubeRay: the head holds the GCS; RayService workers host Serve replicas
    Kind("ray.io", "RayCluster", _ray("spec.", WORKER, ft=True)),
    Kind("ray.io", "RayJob", (*_ray("spec.rayClusterSpec.", WORKER), _submitter("spec."))),
    Kind("ray.io", "RayService", _ray("spec.rayClusterConfig.", SERVING, ft=True)),
    Kind("ray.io", "RayCronJob", (*_ray("spec.jobTemplate.rayClusterSpec.", WORKER),
                                  _submitter("spec.jobTemplate."))),
    # JobSet and the Kubeflow trainer's runtimes (a JobSet template) and TrainJob overrides:
    # v2.0 podSpecOverrides, v2.1 podTemplateOverrides, v2.2 runtimePatches
    Kind("jobset.x-k8s.io", "JobSet", (_jobset("spec."),)),
    Kind("trainer.kubeflow.org", "TrainingRuntime", (_jobset("spec.template.spec."),),
         runs=False),
    Kind("trainer.kubeflow.org", "ClusterTrainingRuntime", (_jobset("spec.template.spec."),),
         runs=False),
    Kind("trainer.kubeflow.org", "TrainJob",
         (_jobset("spec.runtimePatches[*].trainingRuntimeSpec.template.spec.", partial=True),
          _override("podSpecOverrides", "", meta="self"),
          _override("podTemplateOverrides", ".spec"))),
    # Kubeflow training operator v1 and the MPI operator (replicas default to 1)
    Kind("kubeflow.org", "PyTorchJob", (_replicas("pytorchReplicaSpecs"),)),
    Kind("kubeflow.org", "MPIJob", (_replicas("mpiReplicaSpecs"),)),
    Kind("kubeflow.org", "TFJob", (_replicas("tfReplicaSpecs"),)),
    Kind("kubeflow.org", "XGBoostJob", (_replicas("xgbReplicaSpecs"),)),
    Kind("kubeflow.org", "PaddleJob", (_replicas("paddleReplicaSpecs"),)),
    Kind("kubeflow.org", "JAXJob", (_replicas("jaxReplicaSpecs"),)),
    Kind("kubeflow.org", "Experiment", embedded=("spec.trialTemplate.trialSpec",)),
    # LeaderWorkerSet: multi-host serving unless the set declares another role
    Kind("leaderworkerset.x-k8s.io", "LeaderWorkerSet", _lws("spec."), set_role=SERVING),
    Kind("disaggregatedset.x-k8s.io", "DisaggregatedSet", _lws("spec.roles[*].spec."),
         set_role=SERVING),
    # Volcano (a task's replicas have no default: 0)
    Kind("batch.volcano.sh", "Job", (_tasks("spec."),), title="Volcano Job"),
    Kind("batch.volcano.sh", "CronJob", (_tasks("spec.jobTemplate.spec."),),
         title="Volcano CronJob"),
    Kind("flow.volcano.sh", "JobTemplate", (_tasks("spec."),), title="Volcano JobTemplate",
         runs=False),
    # Argo Workflows: each container or script template is a pod
    Kind("argoproj.io", "Workflow", (_argo("spec."),)),
    Kind("argoproj.io", "WorkflowTemplate", (_argo("spec."),), runs=False),
    Kind("argoproj.io", "ClusterWorkflowTemplate", (_argo("spec."),), runs=False),
    Kind("argoproj.io", "CronWorkflow", (_argo("spec.workflowSpec."),)),
    # Kueue AppWrapper: whole objects as components
    Kind("workload.codeflare.dev", "AppWrapper", embedded=("spec.components[*].template",)),
    # others seen in public manifests
    Kind("sparkoperator.k8s.io", "SparkApplication", _spark("spec.")),
    Kind("sparkoperator.k8s.io", "ScheduledSparkApplication", _spark("spec.template.")),
    Kind("agents.x-k8s.io", "Sandbox", (Template("spec.podTemplate.spec", SERVING),)),
    Kind("extensions.agents.x-k8s.io", "SandboxTemplate",
         (Template("spec.podTemplate.spec", SERVING),), runs=False),
    Kind("elasticsearch.k8s.elastic.co", "Elasticsearch",
         (Template("spec.nodeSets[*].podTemplate.spec", COORDINATOR, "node set",
                   pods=(Count("spec.nodeSets[*].count"),)),)),
    Kind("kaito.sh", "Workspace", (Template("inference.template.spec", SERVING, "inference"),)),
    # KServe and Knative Serving: model servers, each component's pod fields inline
    Kind("serving.kserve.io", "InferenceService", (
        Template("spec.predictor", SERVING, "predictor", meta="self", from_runtime="runtime"),
        Template("spec.predictor.workerSpec", SERVING, "predictor.workerSpec", meta="self",
                 from_runtime="runtime workers"),
        *(Template(f"spec.{part}", SERVING, part, meta="self")
          for part in ("transformer", "explainer"))),
        runtime_ref="spec.predictor.model.runtime", runtime_kinds=RUNTIME_KINDS,
        former_groups=("serving.kubeflow.org",)),  # KFServing, before it became KServe
    Kind("serving.kserve.io", "ServingRuntime", _kserve_runtime(), runs=False),
    Kind("serving.kserve.io", "ClusterServingRuntime", _kserve_runtime(), runs=False),
    Kind("serving.kserve.io", "LLMInferenceService", _kserve_llm(partial=False)),
    Kind("serving.kserve.io", "LLMInferenceServiceConfig", _kserve_llm(partial=True),
         runs=False),
    Kind("serving.knative.dev", "Service", (Template("spec.template.spec", SERVING),)),
    Kind("ome.io", "InferenceService", _ome("", partial=False), runtime_ref="spec.runtime.name",
         runtime_kinds=RUNTIME_KINDS),
    Kind("ome.io", "ServingRuntime", _ome("Config", partial=True), runs=False),
    Kind("ome.io", "ClusterServingRuntime", _ome("Config", partial=True), runs=False),
)
BY_KIND: dict[tuple[str, str], Kind] = {
    (group, k.kind): k for k in KINDS for group in (k.group, *k.former_groups)}
# Specs of known kinds that other kinds embed, by the key that marks them, with their templates
# (paths from the spec): a KubeRay cluster spec inside a kind pmanifest does not know keeps its
# head and worker groups' roles and exemptions (Ray replaces lost pods and resumes on its own).
EMBEDDED_SPECS: tuple[tuple[str, tuple[Template, ...]], ...] = (
    ("headGroupSpec", _ray("", WORKER, ft=True)),
)
# Where a pod template found by shape may sit: the key that holds the pod spec.
SHAPE_KEYS = frozenset({"spec", "podSpec", "template", "podTemplate"})
_WORD = re.compile(r"[a-z0-9]+")


def builtin_group(group: str) -> bool:
    """The core group, a group without a dot, or ``*.k8s.io`` (as PM002 decides)."""
    return "." not in group or group.endswith(".k8s.io")


def lookup(group: str, kind: str) -> Kind | None:
    """The table's entry for an object's API group (or a former group of the kind) and
    kind."""
    found = BY_KIND.get((group, kind))
    if found is None and builtin_group(group):
        found = BY_KIND.get((BUILTIN, kind))
    return found


def coordinator_name(name: str) -> bool:
    """``rj-leader``, ``Master``, ``PS`` -> True; ``workers``, ``trainer-node`` -> False."""
    return any(word in COORDINATOR_NAMES for word in _WORD.findall(name.lower()))

