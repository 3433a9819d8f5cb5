"""The objects of a distributed worker (``distributed`` in the spec), decided here and laid out
by the templates: which object runs where, the torchrun command line, the Ray groups.

- torchrun, output ``job``: an Indexed Job (one index per node, on the workload's compute), a
  headless Service that gives every pod a stable DNS name, and the rendezvous: a Deployment on
  standard nodes running a ``torch.distributed.TCPStore`` server, with its Service.
- torchrun, output ``jobset``: one JobSet with the rendezvous Job on standard nodes and the
  worker Job on the workload's compute.
- ray: a RayCluster or a RayJob, head (and submitter) on standard nodes, workers on the
  workload's compute.

Every worker container runs under the termination supervisor, so a preemption ends with the
exit code the Job's podFailurePolicy ignores.
"""

from __future__ import annotations

import shlex
from typing import Any

from pmanifest.kube.contract import DISRUPTION_TARGET, ROLE_LABEL, SIGTERM_EXIT, SUPERVISOR_NAME
from pmanifest.kube.profile import Profile
from pmanifest.render.context import (
    exit_code_fallback,
    supervisor_arguments,
    supervisor_deadline,
    workload_context,
)
from pmanifest.render.elastic import (
    LAUNCHER,
    SHUTDOWN_TIMEOUT_ENV,
    STORE_LOST_EXIT,
    STORE_OPS,
    shutdown_timeout,
)
from pmanifest.render.spec import Spec, WorkloadSpec
from pmanifest.render.spec.distributed import OUTPUTS, RAYCLUSTER_DEADLINE
from pmanifest.render.spec.model import DEFAULT_BACKOFF_LIMIT, Distributed
from pmanifest.schema.kubernetes import version_tuple

RDZV_SUFFIX = "-rendezvous"
RDZV_JOB = "rendezvous"  # replicatedJob names in a JobSet
WORKERS_JOB = "workers"
# The rendezvous store: a TCPStore server that lives as long as its pod (not as long as any
# worker), listens on every interface whatever host it is given, and exits 143 on SIGTERM: the
# store's end is a disruption (a drain, an upgrade of its node), never a success; 0 would
# complete a JobSet's rendezvous Job, which no failure rule restarts.
STORE_SCRIPT = (
    "import signal, sys; from torch.distributed import TCPStore; "
    "store = TCPStore('127.0.0.1', int(sys.argv[1]), is_master=True, wait_for_workers=False); "
    f"signal.signal(signal.SIGTERM, lambda *_: sys.exit({SIGTERM_EXIT})); "
    "print('rendezvous store listening on port', sys.argv[1], flush=True); signal.pause()"
)
STORE_RESOURCES = {"requests": {"cpu": "250m", "memory": "512Mi"}}  # never BestEffort
# The rendezvous id is the worker Job's UID, through the downward API: the same for every pod
# of the Job (replacements included) and new for each run, because a finished run leaves its
# rendezvous closed in the store, where a second run with the same id would exit 1 at once.
RDZV_ID_ENV = "PMANIFEST_RDZV_ID"
JOB_UID_LABEL_SINCE = (1, 27)  # batch.kubernetes.io/controller-uid; before: controller-uid
DEFAULT_ENV = {
    # NCCL errors after a peer is lost are logged with their cause, without INFO's volume.
    "NCCL_DEBUG": "WARN",
    # torch 2.3+ shares the agent's store with the trainers by default; then a node that joins
    # survivors of a preemption waits forever for the new round's MASTER_ADDR (reproduced with
    # torch 2.13): every round builds its own store instead.
    "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1",
}
SHM_VOLUME = "dshm"  # /dev/shm as RAM: NCCL's intra-node transport and DataLoader workers
PER_INDEX_SINCE = (1, 29)  # backoffLimitPerIndex and maxFailedIndexes on by default (GA 1.33)
SUCCESS_POLICY_SINCE = (1, 31)  # Job successPolicy on by default (GA 1.33)
RAY_START = "ulimit -n 65536; exec $KUBERAY_GEN_RAY_START_CMD"  # KubeRay's own recipe
RAY_HEAD_PORTS = (("gcs-server", 6379), ("dashboard", 8265), ("client", 10001))
RAY_HEAD_RESOURCES = {"requests": {"cpu": "1", "memory": "4Gi"}}
RAY_SUBMITTER_RESOURCES = {"requests": {"cpu": "500m", "memory": "200Mi"},
                           "limits": {"cpu": "1", "memory": "1Gi"}}  # KubeRay's defaults
RAY_TTL_AFTER_FINISHED = 300  # keep the cluster 5 minutes for its logs
RAY_SUBMITTER_BACKOFF = 2

Rendered = list[tuple[str, str, dict[str, Any]]]  # (kind, template, context)


def distributed_objects(w: WorkloadSpec, spec: Spec, version: str, profile: Profile,
                        wrapper: str) -> Rendered:
    d = w.distributed
    assert d is not None
    base = workload_context(w, spec, version, profile, wrapper)
    if d.framework == "ray":
        ray = _ray_context(w, d, base, profile, wrapper)
        return [("RayJob" if d.output == "rayjob" else "RayCluster",
                 f"{d.output}.yaml.j2", {"ray": ray})]
    if d.output == "jobset":
        return [("JobSet", "jobset.yaml.j2", _jobset_context(w, d, base, version, profile,
                                                             wrapper))]
    rdzv = _rendezvous_context(w, d, base, profile, restart_policy=None)
    host = w.name + RDZV_SUFFIX
    workers = {**base, "job": _worker_job(w, d, version),
               "pod": _worker_pod(w, d, base, version, profile, wrapper, host,
                                   subdomain=w.name)}
    return [
        ("Service", "headless-service.yaml.j2", base),
        ("Service", "service.yaml.j2", rdzv),
        ("Deployment", "deployment.yaml.j2", {**rdzv, "deployment": {"strategy": "Recreate"}}),
        ("Job", "distributed-job.yaml.j2", workers),
    ]


def with_output(spec: Spec, output: str) -> Spec:
    """``spec`` with ``output`` for every distributed worker (``render --distributed-output``);
    a SpecError at the first worker whose framework does not make it."""
    workloads = []
    for w in spec.workloads:
        d = w.distributed
        if d is not None:
            if output not in OUTPUTS[d.framework]:
                raise spec.error((*w.path, "distributed"), f"--distributed-output {output} is "
                                 f"not made by framework {d.framework} (workload {w.name!r}); "
                                 f"use {' or '.join(OUTPUTS[d.framework])}", value=False)
            if output == "raycluster" and w.active_deadline_seconds is not None:
                raise spec.error((*w.path, "activeDeadlineSeconds"), RAYCLUSTER_DEADLINE.format(
                    "--distributed-output raycluster"), value=False)
            w = w._replace(distributed=d._replace(output=output))
        workloads.append(w)
    return spec._replace(workloads=tuple(workloads))


# --- torchrun -------------------------------------------------------------------------------

def torchrun_argv(w: WorkloadSpec, d: Distributed, host: str) -> list[str]:
    """The worker's main command: the launcher (``render.elastic``: a new rendezvous when the
    Job's is closed, the store's loss told apart) running torchrun with its elastic flags, then
    the training program. No ``--shutdown-timeout``: torch releases without pytorch/pytorch PR
    #172596 (2026) reject the flag at start; the same value goes in SHUTDOWN_TIMEOUT_ENV,
    which they ignore (``shutdown_timeout``)."""
    conf = (f"is_host=false,join_timeout={d.join_timeout_seconds},"
            f"last_call_timeout={d.last_call_timeout_seconds}")
    return ["python", "-c", LAUNCHER, STORE_OPS, str(d.join_timeout_seconds),
            "torchrun", "--nnodes", f"{d.min_nodes}:{d.max_nodes}",
            "--nproc-per-node", str(d.nproc_per_node), "--max-restarts", str(d.max_restarts),
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{host}:{d.rdzv_port}",
            "--rdzv-id", f"$({RDZV_ID_ENV})", "--rdzv-conf", conf, *d.program]


def _supervised(w: WorkloadSpec, profile: Profile, main: list[str], wrapper: str
                ) -> tuple[list[str], list[str]]:
    """(command, args) running ``main`` under the termination supervisor, in the mode the
    workload's checkpoint asks for (signal: TERM reaches torchrun, which stops its trainers);
    it exits 143 on a preemption, the code the Job's podFailurePolicy ignores."""
    return ["/bin/sh", "-c", wrapper, SUPERVISOR_NAME, *supervisor_arguments(w, profile)], main


def _worker_pod(w: WorkloadSpec, d: Distributed, base: dict[str, Any], version: str,
                profile: Profile, wrapper: str, host: str, subdomain: str | None
                ) -> dict[str, Any]:
    pod = dict(base["pod"])
    container = dict(pod["container"])
    main = torchrun_argv(w, d, host)
    container["command"], container["args"] = _supervised(w, profile, main, wrapper)
    label = ("batch.kubernetes.io/controller-uid" if version_tuple(version)
             >= JOB_UID_LABEL_SINCE else "controller-uid")
    defaults = {**DEFAULT_ENV, SHUTDOWN_TIMEOUT_ENV: str(shutdown_timeout(
        supervisor_deadline(w, profile)))}
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in defaults.items()
                                 if k not in w.env]
    env.append({"name": RDZV_ID_ENV,
                "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{label}']"}}})
    container["env"] = [*env, *container["env"]]
    if not any(m["mountPath"] == "/dev/shm" for m in container["volume_mounts"]):
        container["volume_mounts"] = [*container["volume_mounts"],
                                      {"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
        pod["volumes"] = [*pod["volumes"], {"name": SHM_VOLUME,
                                            "emptyDir": {"medium": "Memory"}}]
    pod["container"] = container
    pod["subdomain"] = subdomain
    pod["restart_policy"] = "Never"
    return pod


def _pod_failure_rules(container: str, version: str, fallback: bool) -> list[dict[str, Any]]:
    """``fallback``: the supervisor's 143 alone means a termination (no liveness or startup
    probe, whose kill the kubelet also starts with the preStop hook: see exit_code_fallback)."""
    exit_codes: dict[str, Any] = {
        "action": "Ignore",
        "onExitCodes": {"containerName": container, "operator": "In",
                        "values": [SIGTERM_EXIT]},
    }
    # the launcher's status when torchrun failed because the rendezvous store went away (a
    # store restarted or moved): a disruption of the run, not a failure of its work
    store_lost: dict[str, Any] = {
        "action": "Ignore",
        "onExitCodes": {"containerName": container, "operator": "In",
                        "values": [STORE_LOST_EXIT]},
    }
    if version_tuple(version) < (1, 29):
        exit_codes["onPodConditions"] = []  # required by the schema before 1.29
        store_lost["onPodConditions"] = []
    return [{"action": "Ignore",
             "onPodConditions": [{"type": DISRUPTION_TARGET, "status": "True"}]},
            *([exit_codes] if fallback else []), store_lost]


def _worker_job(w: WorkloadSpec, d: Distributed, version: str) -> dict[str, Any]:
    """completions == parallelism == maxNodes: every index is a node slot that is refilled
    after a preemption (a work-queue Job would not replace a preempted pod once another one
    succeeded). Real failures count per index where the version has it, otherwise in a
    backoffLimit sized for every node; one index that succeeds completes the Job."""
    v = version_tuple(version)
    per_index = v >= PER_INDEX_SINCE
    rt = w.runtime
    limit = w.backoff_limit if w.backoff_limit is not None else DEFAULT_BACKOFF_LIMIT
    return {
        "backoff_limit": None if per_index else limit * d.max_nodes,
        "backoff_limit_per_index": (rt.backoff_limit_per_index if rt.backoff_limit_per_index
                                    is not None else limit) if per_index else None,
        "max_failed_indexes": (rt.max_failed_indexes if rt.max_failed_indexes is not None
                               else d.max_nodes - d.min_nodes),
        "ttl_seconds_after_finished": rt.ttl_seconds_after_finished,
        "active_deadline_seconds": w.active_deadline_seconds,
        "completions": d.max_nodes,
        "parallelism": d.max_nodes,
        "success_policy": v >= SUCCESS_POLICY_SINCE,
        "pod_replacement_policy": "Failed" if per_index else None,
        "pod_failure_rules": _pod_failure_rules(w.name, version, exit_code_fallback(w)),
    }


def _standard_pod(profile: Profile, container: dict[str, Any],
                  restart_policy: str | None) -> dict[str, Any]:
    """A pod kept off preemptible nodes by the required NotIn affinity."""
    return {
        "node_selector": {},
        "required_affinity": {"key": profile.label_key, "operator": "NotIn",
                              "values": [profile.label_value]},
        "grace_period_seconds": None,
        "service_account_name": None,
        "tolerations": [],
        "volumes": [],
        "restart_policy": restart_policy,
        "container": {"args": None, "env": [], "ports": [], "resources": {}, "pre_stop": None,
                      "volume_mounts": [], **container},
    }


def _named(w: WorkloadSpec, base: dict[str, Any], name: str, role: str) -> dict[str, Any]:
    """The ``workload`` context of an object derived from ``w`` (the rendezvous, the head)."""
    labels = {**base["workload"]["labels"], "app.kubernetes.io/name": name,
              ROLE_LABEL: role}
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if w.namespace is not None:
        metadata = {"name": name, "namespace": w.namespace, "labels": labels}
    return {**base["workload"], "name": name, "role": role, "compute": "standard",
            "metadata": metadata, "labels": labels,
            "selector": {"app.kubernetes.io/name": name}, "replicas": 1}


def _rendezvous_context(w: WorkloadSpec, d: Distributed, base: dict[str, Any], profile: Profile,
                        restart_policy: str | None) -> dict[str, Any]:
    name = w.name + RDZV_SUFFIX
    container = {
        "name": RDZV_JOB, "image": w.image,
        "command": ["python", "-c", STORE_SCRIPT, str(d.rdzv_port)],
        "ports": [{"name": f"port-{d.rdzv_port}", "containerPort": d.rdzv_port}],
        "resources": STORE_RESOURCES,
    }
    probe = {"tcpSocket": {"port": d.rdzv_port}, "periodSeconds": 5}
    return {**base, "workload": {**_named(w, base, name, "coordinator"),
                                 "ports": [d.rdzv_port]},
            "pod": _standard_pod(profile, container, restart_policy),
            "runtime": _runtime(probes={"readinessProbe": probe},
                                strategy={"type": "Recreate"})}


def _runtime(**given: Any) -> dict[str, Any]:
    """The ``runtime`` context of an object pmanifest adds (rendezvous, head, submitter): none
    of the workload's run-time fields, which are its workers'."""
    return {"pod_annotations": {}, "priority_class_name": None, "env_from": [], "probes": {},
            "strategy": None, "progress_deadline_seconds": None,
            "ttl_seconds_after_finished": None,
            "backoff_limit_per_index": None, "max_failed_indexes": None, **given}


def _jobset_context(w: WorkloadSpec, d: Distributed, base: dict[str, Any], version: str,
                    profile: Profile, wrapper: str) -> dict[str, Any]:
    rdzv = _rendezvous_context(w, d, base, profile, restart_policy="Never")
    v = version_tuple(version)
    store_term: dict[str, Any] = {"action": "FailJob", "onExitCodes": {
        "containerName": RDZV_JOB, "operator": "In", "values": [SIGTERM_EXIT]}}
    if v < (1, 29):
        store_term["onPodConditions"] = []  # required by the schema before 1.29
    rdzv_job = {
        "backoff_limit": 0, "backoff_limit_per_index": None, "max_failed_indexes": 0,
        "ttl_seconds_after_finished": None, "active_deadline_seconds": None,
        "completions": 1, "parallelism": 1, "success_policy": False,
        "pod_replacement_policy": "Failed" if v >= PER_INDEX_SINCE else None,
        # the store's state goes with its pod: a drain (DisruptionTarget) or any TERM (143:
        # only the kubelet signals the store) fails this Job at once by its podFailurePolicy,
        # and the rule below restarts the whole JobSet without counting it
        "pod_failure_rules": [{"action": "FailJob", "onPodConditions": [
            {"type": DISRUPTION_TARGET, "status": "True"}]}, store_term],
    }
    # JobSet pod hostnames: <jobset>-<replicatedJob>-<job index>-<pod index>.<jobset>
    host = f"{w.name}-{RDZV_JOB}-0-0.{w.name}"
    return {
        **base,
        "jobset": {
            "workers": WORKERS_JOB,
            "max_restarts": d.jobset_max_restarts,
            "failure_rules": [
                {"name": "rendezvousDisrupted", "action": "RestartJobSetAndIgnoreMaxRestarts",
                 "onJobFailureReasons": ["PodFailurePolicy"], "targetReplicatedJobs": [RDZV_JOB]},
                {"name": "failed", "action": "RestartJobSet"},
            ],
            "replicated_jobs": [
                {"name": RDZV_JOB, "job": rdzv_job, "pod": rdzv["pod"],
                 "workload": rdzv["workload"], "runtime": rdzv["runtime"]},
                {"name": WORKERS_JOB, "job": _worker_job(w, d, version),
                 "pod": _worker_pod(w, d, base, version, profile, wrapper, host,
                                   subdomain=None),
                 "workload": base["workload"], "runtime": base["runtime"]},
            ],
        },
    }


# --- Ray --------------------------------------------------------------------------------------

def _ray_context(w: WorkloadSpec, d: Distributed, base: dict[str, Any], profile: Profile,
                 wrapper: str) -> dict[str, Any]:
    pod = base["pod"]
    head = _standard_pod(profile, {
        "name": "ray-head", "image": w.image, "command": ["/bin/bash", "-c", RAY_START],
        "env": pod["container"]["env"],
        "ports": [{"name": n, "containerPort": p} for n, p in RAY_HEAD_PORTS],
        "resources": RAY_HEAD_RESOURCES, "volume_mounts": pod["container"]["volume_mounts"],
    }, restart_policy=None)
    head["volumes"] = pod["volumes"]
    worker = dict(pod)
    command, args = _supervised(w, profile, ["/bin/bash", "-c", RAY_START], wrapper)
    worker["container"] = {**pod["container"], "name": "ray-worker", "command": command,
                           "args": args}
    worker["restart_policy"] = "Never"  # KubeRay replaces a worker pod that ended
    submitter = _standard_pod(profile, {"name": "ray-job-submitter", "image": w.image,
                                        "command": None,  # KubeRay writes `ray job submit`
                                        "resources": RAY_SUBMITTER_RESOURCES},
                              restart_policy="Never")
    metadata = {**base["workload"]["metadata"],
                "annotations": {"ray.io/overwrite-container-cmd": "true"}}
    return {
        "metadata": metadata,
        "version": d.ray_version,
        "gcs": _gcs(d),
        "group_name": WORKERS_JOB,
        "min_nodes": d.min_nodes,
        "max_nodes": d.max_nodes,
        "entrypoint": shlex.join(d.program),
        "ttl_seconds_after_finished": RAY_TTL_AFTER_FINISHED,
        "backoff_limit": w.backoff_limit,
        "active_deadline_seconds": w.active_deadline_seconds,  # RayJob only
        "submitter_backoff_limit": RAY_SUBMITTER_BACKOFF,
        "head": {"pod": head, "workload": _named(w, base, w.name + "-head", "coordinator"),
                 "runtime": _runtime()},
        "worker": {"pod": worker, "workload": base["workload"], "runtime": base["runtime"]},
        "submitter": {"pod": submitter, "runtime": _runtime(),
                      "workload": _named(w, base, w.name + "-submitter", "coordinator")},
    }


def _gcs(d: Distributed) -> dict[str, Any] | None:
    if d.gcs is None:
        return None
    gcs: dict[str, Any] = {"redisAddress": d.gcs.redis_address}
    if d.gcs.password_secret is not None:
        name, key = d.gcs.password_secret
        gcs["redisPassword"] = {"valueFrom": {"secretKeyRef": {"name": name, "key": key}}}
    if d.gcs.external_storage_namespace is not None:
        gcs["externalStorageNamespace"] = d.gcs.external_storage_namespace
    return gcs
