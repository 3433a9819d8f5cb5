"""Everything the templates need, decided here and laid out there: the context of one
workload (metadata, Job knobs, pod placement, volumes, the main container)."""

from __future__ import annotations

import posixpath
from typing import Any

from pmanifest.kube.contract import (
    DISRUPTION_TARGET,
    KUBERNETES_DEFAULT_GRACE,
    ROLE_LABEL,
    SIGTERM_EXIT,
    SUPERVISOR_AFTER_HOOK,
    SUPERVISOR_NAME,
    SUPERVISOR_NO_CHECKPOINT,
)
from pmanifest.kube.profile import Profile
from pmanifest.render.runtime import env_entries, runtime_context, with_annotations
from pmanifest.render.spec import SHARED_VOLUME_NAME, Spec, Volume, WorkloadSpec
from pmanifest.render.spec.model import DEFAULT_MARGIN_SECONDS
from pmanifest.render.spec.pod import main_resources
from pmanifest.schema.kubernetes import version_tuple

# The preStop hook of a supervised container marks the termination for the supervisor (PID 1,
# templates/supervisor.sh): a TERM that follows the mark is the kubelet's, one without it came
# from inside the container. With trigger preStop the hook then runs the checkpoint, bounded
# to BOUND seconds (gracePeriodSeconds - marginSeconds) so that the kubelet's TERM, and the
# supervisor's margin after it, come before its SIGKILL: the kubelet gives an overrunning hook
# 2 s only (killContainer's minimumGracePeriodInSeconds).
# The mark is a handshake: SIGUSR1 to PID 1, again until PID 1 shows USR1 ignored (its trap,
# once run, ignores further ones), so the mark has been taken before the kubelet's TERM (bash
# can lose a trap whose signal comes right before another); no sleep: a short spin on /proc.
PRESTOP_MARK = (
    "pm_i=0\n"
    "while [ \"$pm_i\" -lt 3000 ]; do\n"
    "  [ $((pm_i % 100)) != 0 ] || kill -USR1 1 2>/dev/null || break\n"
    "  pm_ign=0\n"
    "  while read -r pm_key pm_value; do\n"
    "    [ \"$pm_key\" != SigIgn: ] || { pm_ign=${pm_value#\"${pm_value%???}\"}; break; }\n"
    "  done </proc/1/status\n"
    "  [ $((0x$pm_ign & 512)) = 0 ] || break  # USR1 (10) ignored: the mark is taken\n"
    "  pm_i=$((pm_i + 1))\n"
    "done\n")
PRESTOP_HOOK = PRESTOP_MARK + (
    "pm_bound=$1\n"
    "shift\n"
    '"$@" &\n'
    "pm_ckpt=$!\n"
    '(sleep "$pm_bound"; echo "pmanifest-prestop: the checkpoint still runs after'
    ' ${pm_bound}s; SIGKILL" >&2; kill -KILL "$pm_ckpt") &\n'
    "pm_dog=$!\n"
    'wait "$pm_ckpt"\n'
    "pm_status=$?\n"
    'kill "$pm_dog" 2>/dev/null\n'
    'exit "$pm_status"\n')
PRESTOP_NAME = "pmanifest-prestop"  # $0 of the hook with trigger preStop
POD_REPLACEMENT_SINCE = (1, 29)  # podReplacementPolicy beta, on by default (GA 1.34)
# Before 1.29 the OpenAPI schema marks onPodConditions required in every podFailurePolicy rule,
# even in an onExitCodes rule; the API server accepts an empty list there.
CONDITIONS_OPTIONAL_SINCE = (1, 29)


def workload_context(w: WorkloadSpec, spec: Spec, version: str, profile: Profile,
                     wrapper: str) -> dict[str, Any]:
    labels = {
        "app.kubernetes.io/name": w.name,
        "app.kubernetes.io/managed-by": "pmanifest",
        ROLE_LABEL: w.role,
        **w.labels,
    }
    metadata: dict[str, Any] = {"name": w.name, "labels": labels}
    if w.namespace is not None:
        metadata = {"name": w.name, "namespace": w.namespace, "labels": labels}
    metadata = with_annotations(metadata, w)
    return {
        "workload": {
            "name": w.name,
            "role": w.role,
            "compute": w.compute,
            "metadata": metadata,
            "labels": labels,
            "selector": {"app.kubernetes.io/name": w.name},
            "replicas": w.replicas,
            "ports": list(w.ports),
        },
        "job": _job_context(w, version),
        # (the strategy type, kept for --templates written before runtime.strategy)
        "deployment": {"strategy": w.runtime.strategy.type if w.runtime.strategy else None},
        "pod": _pod_context(w, spec, profile, wrapper),
        "runtime": runtime_context(w),
        "kubernetes_version": version,
    }


def _job_context(w: WorkloadSpec, version: str) -> dict[str, Any]:
    return {
        "backoff_limit": w.backoff_limit,
        "active_deadline_seconds": w.active_deadline_seconds,
        "parallelism": w.parallelism,
        "completions": w.completions,
        # Indexed when completions are given: each index is one shard, and the pod that
        # replaces a preempted one resumes the same shard (JOB_COMPLETION_INDEX) from its
        # checkpoint instead of starting an arbitrary one.
        "completion_mode": "Indexed" if w.completions is not None else None,
        "pod_replacement_policy": (
            "Failed" if version_tuple(version) >= POD_REPLACEMENT_SINCE else None),
        "handler_exit_code": SIGTERM_EXIT,
        # 143 alone (no DisruptionTarget) is ignored only where the kubelet cannot have killed
        # the container for a probe (it runs the preStop hook for a probe kill too)
        "exit_code_fallback": exit_code_fallback(w),
        "disruption_condition": DISRUPTION_TARGET,  # the pod condition a drain sets
        "empty_pod_conditions": version_tuple(version) < CONDITIONS_OPTIONAL_SINCE,
    }


def exit_code_fallback(w: WorkloadSpec) -> bool:
    """Whether the supervisor's 143 can only mean a termination that is no failure: the
    kubelet also kills a container whose liveness or startup probe fails, preStop hook first,
    and nothing in the container tells that kill from a preemption's."""
    return not any(kind in w.runtime.probes for kind in ("liveness", "startup"))


def pre_stop_hook(w: WorkloadSpec, supervised: bool) -> list[str] | None:
    """The preStop exec command: the supervisor's mark, then the checkpoint (trigger preStop),
    bounded below the grace period."""
    ckpt = w.checkpoint
    if ckpt is not None and ckpt.trigger == "preStop":
        if not supervised:
            return list(ckpt.command)
        bound = max(1, ckpt.grace_period_seconds - ckpt.margin_seconds)
        return ["/bin/sh", "-c", PRESTOP_HOOK, PRESTOP_NAME, str(bound), *ckpt.command]
    return ["/bin/sh", "-c", PRESTOP_MARK] if supervised else None


def _pod_context(w: WorkloadSpec, spec: Spec, profile: Profile, wrapper: str) -> dict[str, Any]:
    node_selector = dict(w.node_selector)
    affinity = None
    tolerations = [dict(t) for t in w.tolerations]
    if w.compute == "preemptible":
        node_selector = {**profile.preemptible_selector, **node_selector}
        taint = _taint_toleration(profile)
        if taint is not None and taint not in tolerations:
            tolerations.append(taint)
    else:
        affinity = {"key": profile.label_key, "operator": "NotIn",
                    "values": [profile.label_value]}
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if spec.shared_volume is not None:
        volumes.append({"name": SHARED_VOLUME_NAME,
                        "claimName": spec.shared_volume.claim_name,
                        "mountPath": spec.shared_volume.mount_path})
        mounts.append({"name": SHARED_VOLUME_NAME, "mountPath": spec.shared_volume.mount_path})
    for volume in w.volumes:
        volumes.append({"name": volume.name, volume.source: volume.value})
        mounts.append(_mount(volume))
    return {
        "node_selector": node_selector,
        "required_affinity": affinity,
        "grace_period_seconds": w.checkpoint.grace_period_seconds if w.checkpoint else None,
        "service_account_name": w.service_account_name,
        "tolerations": tolerations,
        "topology_spread": _spread(w),
        "volumes": volumes,
        "container": _container_context(w, profile, wrapper, mounts),
    }


def _spread(w: WorkloadSpec) -> list[dict[str, Any]]:
    """The topologySpreadConstraints of a serving workload's replicas (``spread``)."""
    if w.spread is None:
        return []
    return [{"maxSkew": w.spread.max_skew, "topologyKey": w.spread.topology_key,
             "whenUnsatisfiable": w.spread.when_unsatisfiable,
             "labelSelector": {"matchLabels": {"app.kubernetes.io/name": w.name}}}]


def _mount(volume: Volume) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": volume.name, "mountPath": volume.mount_path}
    if volume.read_only:
        mount["readOnly"] = True
    if volume.sub_path is not None:
        mount["subPath"] = volume.sub_path
    return mount


def _taint_toleration(profile: Profile) -> dict[str, Any] | None:
    """The toleration preemptible pods need where the provider taints its nodes (AKS)."""
    taint = profile.taint
    if taint is None:
        return None
    if taint.value is None:
        return {"key": taint.key, "operator": "Exists", "effect": taint.effect}
    return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}


def supervisor_deadline(w: WorkloadSpec, profile: Profile) -> int:
    """Seconds from the supervisor's TERM to its SIGKILL of whatever still runs."""
    ckpt = w.checkpoint
    if ckpt is None:  # the pod gets Kubernetes' default grace period, or the provider's cap
        grace = min(KUBERNETES_DEFAULT_GRACE, profile.grace_period_cap)
        return max(1, grace - DEFAULT_MARGIN_SECONDS)
    if ckpt.trigger == "preStop":  # the hook has used its share; the main gets the margin
        return ckpt.margin_seconds
    return ckpt.grace_period_seconds - ckpt.margin_seconds


def supervisor_arguments(w: WorkloadSpec, profile: Profile) -> list[str]:
    """MODE DEADLINE N CHECKPOINT_ARGV... of templates/supervisor.sh (see its header)."""
    ckpt = w.checkpoint
    deadline = str(supervisor_deadline(w, profile))
    if ckpt is None:
        return [SUPERVISOR_NO_CHECKPOINT, deadline, "0"]
    if ckpt.trigger == "preStop":
        return [SUPERVISOR_AFTER_HOOK, deadline, "0"]
    mode = ckpt.mode or "command"
    argv = list(ckpt.command) if mode == "command" else []
    return [mode, deadline, str(len(argv)), *argv]


def _container_context(w: WorkloadSpec, profile: Profile, wrapper: str,
                       mounts: list[dict[str, Any]]) -> dict[str, Any]:
    command = list(w.command) if w.command is not None else None
    args = list(w.args) if w.args else None
    ckpt = w.checkpoint
    supervised = w.role == "worker" or (ckpt is not None and ckpt.trigger == "sigterm")
    main = w.main_argv if supervised else None
    pre_stop = pre_stop_hook(w, main is not None)
    if main is not None:
        # /bin/sh -c SUPERVISOR $0 MODE DEADLINE N CHECKPOINT_ARGV... and, as args, the main
        command = ["/bin/sh", "-c", wrapper, SUPERVISOR_NAME, *supervisor_arguments(w, profile)]
        args = list(main)
    env = env_entries(w.env)
    if ckpt is not None and ckpt.dir is not None:
        env.append({"name": "CHECKPOINT_DIR", "value": posixpath.normpath(ckpt.dir)})
    return {
        "name": w.name,
        "image": w.image,
        "command": command,
        "args": args,
        "env": env,
        "ports": [{"name": f"port-{p}", "containerPort": p} for p in w.ports],
        "resources": main_resources(w.gpus, w.resources, w.qos),
        "pre_stop": pre_stop,
        "volume_mounts": mounts,
    }
