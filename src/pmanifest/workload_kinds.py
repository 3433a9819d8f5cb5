"""Where each workload kind keeps its pod templates, and the role each template plays.

Data only: :mod:`pmanifest.workloads` reads this table, so teaching pmanifest a kind is one
entry here. A kind is named by its API group and kind (``""`` stands for every built-in group:
the core group, groups without a dot and ``*.k8s.io``, as in :mod:`pmanifest.schema`).

Template paths are dotted, with two wildcards: ``[*]`` any item of a list, ``*`` any value of
a mapping (``spec.pytorchReplicaSpecs.*.template.spec``). The name of what the last wildcard
matched (the item's ``name_key``, or the mapping key) names the template in messages and, with
``named``, decides its role: a name with a coordinator word in it (``leader``, ``rj-leader``,
``Master``, ``PS``, ``mpimaster``) makes a coordinator.

Roles: ``worker``, ``coordinator``, ``serving``, ``daemon`` as such; ``set``: the role of the
set (the ``pmanifest.io/role`` declared on the object, else the kind's ``set_role``);
``leader``: coordinator when the set's pods are workers, else the set's role.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pmanifest.contract import COORDINATOR_ROLE, DAEMON_ROLE, SERVING_ROLE, WORKER_ROLE

WORKER, COORDINATOR, SERVING = WORKER_ROLE, COORDINATOR_ROLE, SERVING_ROLE  # short names
SET, LEADER = "set", "leader"
BUILTIN = ""  # the group of the core kinds: any built-in API group

# Words in a replicatedJob, task or replica name that make its pods a coordinator: what holds
# the rendezvous, the parameters or the launcher of the others.
COORDINATOR_NAMES = frozenset({
    "leader", "driver", "launcher", "master", "head", "coordinator", "chief", "ps",
    "mpimaster", "scheduler", "server",
})
# Images of databases and queues: the last path component, tag and digest removed, is one of
# these, or one of these with a suffix of STATEFUL_SUFFIXES (redis-stack-server) or a prefix of
# STATEFUL_PREFIXES (cp-kafka). A Deployment running one is a stateful anchor, not a stateless
# server (PM103's rationale). `kafka-exporter` and `cp-kafka-rest` are not kafka.
STATEFUL_IMAGES = frozenset({
    "postgres", "postgresql", "postgis", "pgvector", "timescaledb", "mysql", "mariadb",
    "percona", "redis", "valkey", "keydb", "memcached", "etcd", "zookeeper", "kafka",
    "rabbitmq", "mongo", "mongodb", "cassandra", "scylla", "cockroach", "nats", "pulsar",
    "clickhouse", "minio", "neo4j", "influxdb", "elasticsearch", "opensearch", "couchdb",
})
STATEFUL_SUFFIXES = frozenset({"server", "stack", "stack-server", "cluster", "standalone"})
STATEFUL_PREFIXES = frozenset({"cp"})  # Confluent Platform: cp-kafka, cp-zookeeper
# Where containers are in a template: (key, is a list, is init).
POD_CONTAINERS = (("initContainers", True, True), ("containers", True, False))
ARGO_CONTAINERS = (("initContainers", True, True), ("container", False, False),
                   ("script", False, False), ("sidecars", True, False))
SPARK_CONTAINERS = (("initContainers", True, True), ("sidecars", True, False))


@dataclass(frozen=True)
class Template:
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
    partial: bool = False  # an override merged into a pod spec the manifest does not show
    if_present: str | None = None  # only when the template's holder has this key...
    if_absent: str | None = None  # ...or has not
    by_image: bool = False  # a database or queue image makes it a coordinator
    recovers: bool = False  # a framework runtime (Ray) replaces lost pods and resumes from its
    # own checkpoints: no SIGTERM handler is expected in the container (PM302)


@dataclass(frozen=True)
class Kind:
    group: str
    kind: str
    templates: tuple[Template, ...] = ()
    embedded: tuple[str, ...] = ()  # paths of whole objects inside it, read as objects
    set_role: str = WORKER  # the role of ``set`` templates when the object declares none
    title: str = ""  # how messages name the kind, when its name alone is ambiguous


def _ray(prefix: str, workers: str) -> tuple[Template, ...]:
    return (Template(f"{prefix}headGroupSpec.template.spec", COORDINATOR, "head", recovers=True),
            Template(f"{prefix}workerGroupSpecs[*].template.spec", workers, "worker group",
                     name_key="groupName", recovers=True))


def _submitter(prefix: str) -> Template:
    # the Job that submits the entrypoint: the RayJob fails when it does
    return Template(f"{prefix}submitterPodTemplate.spec", COORDINATOR, "submitter")


def _replicas(field: str) -> Template:
    return Template(f"spec.{field}.*.template.spec", WORKER, "replica", named=True)


def _jobset(prefix: str, partial: bool = False) -> Template:
    return Template(f"{prefix}replicatedJobs[*].template.spec.template.spec", WORKER,
                    "replicatedJob", named=True, job=not partial,
                    set=None if partial else prefix.rstrip("."), partial=partial)


def _lws(prefix: str) -> tuple[Template, ...]:
    base = f"{prefix}leaderWorkerTemplate."
    return (Template(f"{base}leaderTemplate.spec", LEADER, "leader"),
            Template(f"{base}workerTemplate.spec", SET, "workers", if_present="leaderTemplate"),
            Template(f"{base}workerTemplate.spec", LEADER, "leader and workers",
                     if_absent="leaderTemplate"))


def _tasks(prefix: str) -> Template:
    return Template(f"{prefix}tasks[*].template.spec", WORKER, "task", named=True,
                    set=prefix.rstrip("."))


def _argo(prefix: str) -> Template:
    return Template(f"{prefix}templates[*]", WORKER, "template", meta="child",
                    containers=ARGO_CONTAINERS, requires=("container", "script"))


def _spark(prefix: str) -> tuple[Template, ...]:
    return tuple(Template(f"{prefix}{part}", role, part, meta="self",
                          containers=SPARK_CONTAINERS)
                 for part, role in (("driver", COORDINATOR), ("executor", WORKER)))


_SERVING = Template("spec.template.spec", SERVING, by_image=True)
KINDS: tuple[Kind, ...] = (
    # built-in kinds
    Kind(BUILTIN, "Pod", (Template("spec", WORKER),)),
    Kind(BUILTIN, "Job", (Template("spec.template.spec", WORKER, job=True),)),
    Kind(BUILTIN, "CronJob", (Template("spec.jobTemplate.spec.template.spec", WORKER, job=True),)),
    Kind(BUILTIN, "Deployment", (_SERVING,)),
    Kind(BUILTIN, "ReplicaSet", (_SERVING,)),
    Kind(BUILTIN, "ReplicationController", (_SERVING,)),
    Kind(BUILTIN, "StatefulSet", (Template("spec.template.spec", COORDINATOR),)),
    Kind(BUILTIN, "DaemonSet", (Template("spec.template.spec", DAEMON_ROLE),)),
    Kind(BUILTIN, "PodTemplate", (Template("template.spec", WORKER),)),
    # KubeRay: the head holds the GCS; RayService workers host Serve replicas
    Kind("ray.io", "RayCluster", _ray("spec.", WORKER)),
    Kind("ray.io", "RayJob", (*_ray("spec.rayClusterSpec.", WORKER), _submitter("spec."))),
    Kind("ray.io", "RayService", _ray("spec.rayClusterConfig.", SERVING)),
    Kind("ray.io", "RayCronJob", (*_ray("spec.jobTemplate.rayClusterSpec.", WORKER),
                                  _submitter("spec.jobTemplate."))),
    # JobSet and the Kubeflow trainer's runtimes (a JobSet template) and TrainJob patches
    Kind("jobset.x-k8s.io", "JobSet", (_jobset("spec."),)),
    Kind("trainer.kubeflow.org", "TrainingRuntime", (_jobset("spec.template.spec."),)),
    Kind("trainer.kubeflow.org", "ClusterTrainingRuntime", (_jobset("spec.template.spec."),)),
    Kind("trainer.kubeflow.org", "TrainJob",
         (_jobset("spec.runtimePatches[*].trainingRuntimeSpec.template.spec.", partial=True),)),
    # Kubeflow training operator v1 and the MPI operator
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
    # Volcano
    Kind("batch.volcano.sh", "Job", (_tasks("spec."),), title="Volcano Job"),
    Kind("batch.volcano.sh", "CronJob", (_tasks("spec.jobTemplate.spec."),),
         title="Volcano CronJob"),
    Kind("flow.volcano.sh", "JobTemplate", (_tasks("spec."),), title="Volcano JobTemplate"),
    # Argo Workflows: each container or script template is a pod
    Kind("argoproj.io", "Workflow", (_argo("spec."),)),
    Kind("argoproj.io", "WorkflowTemplate", (_argo("spec."),)),
    Kind("argoproj.io", "ClusterWorkflowTemplate", (_argo("spec."),)),
    Kind("argoproj.io", "CronWorkflow", (_argo("spec.workflowSpec."),)),
    # Kueue AppWrapper: whole objects as components
    Kind("workload.codeflare.dev", "AppWrapper", embedded=("spec.components[*].template",)),
    # others seen in public manifests
    Kind("sparkoperator.k8s.io", "SparkApplication", _spark("spec.")),
    Kind("sparkoperator.k8s.io", "ScheduledSparkApplication", _spark("spec.template.")),
    Kind("agents.x-k8s.io", "Sandbox", (Template("spec.podTemplate.spec", SERVING),)),
    Kind("extensions.agents.x-k8s.io", "SandboxTemplate",
         (Template("spec.podTemplate.spec", SERVING),)),
    Kind("elasticsearch.k8s.elastic.co", "Elasticsearch",
         (Template("spec.nodeSets[*].podTemplate.spec", COORDINATOR, "node set"),)),
    Kind("kaito.sh", "Workspace", (Template("inference.template.spec", SERVING, "inference"),)),
)
BY_KIND: dict[tuple[str, str], Kind] = {(k.group, k.kind): k for k in KINDS}
# Where a pod template found by shape may sit: the key that holds the pod spec.
SHAPE_KEYS = frozenset({"spec", "podSpec", "template", "podTemplate"})
_WORD = re.compile(r"[a-z0-9]+")


def builtin_group(group: str) -> bool:
    """The core group, a group without a dot, or ``*.k8s.io`` (as PM002 decides)."""
    return "." not in group or group.endswith(".k8s.io")


def lookup(group: str, kind: str) -> Kind | None:
    """The table's entry for an object's API group and kind."""
    found = BY_KIND.get((group, kind))
    if found is None and builtin_group(group):
        found = BY_KIND.get((BUILTIN, kind))
    return found


def coordinator_name(name: str) -> bool:
    """``rj-leader``, ``Master``, ``PS`` -> True; ``workers``, ``trainer-node`` -> False."""
    return any(word in COORDINATOR_NAMES for word in _WORD.findall(name.lower()))


def stateful_image(image: str) -> bool:
    """``docker.io/bitnami/postgresql:16`` -> True; ``danielqsj/kafka-exporter`` -> False."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    if name in STATEFUL_IMAGES:
        return True
    head, _, tail = name.partition("-")
    return (head in STATEFUL_IMAGES and tail in STATEFUL_SUFFIXES) or \
        (head in STATEFUL_PREFIXES and tail in STATEFUL_IMAGES)
