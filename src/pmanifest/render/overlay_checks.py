"""What a ``podTemplate`` overlay may not do (issue 26), each refused at its line with the spec
field to use instead.

- Its ``spec`` must be a (partial) PodSpec of the target version: unknown fields and wrong
  types are refused as the API server would (required fields aside: it is merged into a pod
  that has them); an item of a list merged by key needs that key, once.
- It cannot undo the preemption contract: the grace period (``checkpoint.gracePeriodSeconds``),
  ``restartPolicy`` (the role's), a shared process namespace (the supervisor is PID 1),
  placement on the preemptible label or on named nodes, or a
  toleration of the preemptible taint (``compute``), the main container's command and args
  (the supervisor's; ``command``/``args``), its preStop hook or stop signal (the checkpoint
  trigger; ``checkpoint.trigger``), its image, resources and probes, nor mount anything over
  the shared volume.
- It adds, it never changes: a value render wrote, or a named item render made (a volume, a
  mount, an env variable, a port, the spread constraint), is changed in the spec field that
  made it (``Refusing``, the guard of :class:`pmanifest.render.overlay.Merger`).
"""

from __future__ import annotations

import posixpath
from typing import Any

from pmanifest.kube.placement import toleration
from pmanifest.kube.resources import GUARANTEED, pod_qos
from pmanifest.loader.positions import Path, dotted
from pmanifest.render.overlay import Merger
from pmanifest.render.spec import Spec, WorkloadSpec
from pmanifest.render.spec.model import Overlay
from pmanifest.schema.kubernetes import partial_problems

POD_SPEC = "io.k8s.api.core.v1.PodSpec"
WRAPPER = "podTemplate.spec"  # what messages call the overlay's spec
REQUIRED = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
PREFERRED = ("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
# fields of the main container the spec decides: field -> (why, what to set instead)
MAIN_FIELDS = {
    "command": ("the main's argv, run under pmanifest's termination supervisor", "command"),
    "args": ("the main's argv, run under pmanifest's termination supervisor", "args"),
    "image": ("the workload's image", "image"),
    "resources": ("its requests and limits (GPUs, the per-GPU requests, the QoS class)",
                  "resources, gpus and qos"),
    "readinessProbe": ("its probe", "probes"),
    "livenessProbe": ("its probe", "probes"),
    "startupProbe": ("its probe", "probes"),
}
# where a rendered value or named item comes from: path in the pod template -> spec field
OWNERS = {
    "metadata.labels": "labels", "metadata.annotations": "podAnnotations",
    "spec.serviceAccountName": "serviceAccountName",
    "spec.priorityClassName": "priorityClassName", "spec.nodeSelector": "nodeSelector",
    "spec.tolerations": "tolerations (and compute)", "spec.volumes": "volumes",
    "spec.topologySpreadConstraints": "spread", "spec.affinity": "compute",
    "spec.subdomain": "distributed", "spec.containers[0].env": "env",
    "spec.containers[0].volumeMounts": "volumes", "spec.containers[0].ports": "ports",
    "spec.containers[0].name": "name",
}


def check_overlays(spec: Spec, version: str) -> None:
    """Refuse overlays that are not partial PodSpecs of ``version`` or would undo the
    contract (a SpecError at the offending field)."""
    checked: set[Path] = set()
    for w in spec.workloads:
        for overlay in w.overlays:
            if overlay.path not in checked:
                _check_schema(spec, overlay, version)
                checked.add(overlay.path)
            _check_contract(spec, w, overlay)


def _check_schema(spec: Spec, overlay: Overlay, version: str) -> None:
    data = overlay.data.get("spec", {})
    problems = partial_problems(data, version, POD_SPEC, WRAPPER)
    if problems:  # unknown keys first: their did-you-mean explains most else
        path, message, at_key = min(problems, key=lambda p: (not p[2], [str(x) for x in p[0]]))
        raise spec.error((*overlay.path, "spec", *path[1:]), f"{message} (the pod spec of "
                         f"Kubernetes {version})", value=not at_key)
    merger = Merger(version)
    for path, key, items in merger.keyed_lists(data, {"$ref": POD_SPEC}, ("spec",)):
        _check_keys(spec, overlay.path, path, key, items)


def _check_keys(spec: Spec, base: Path, rel: Path, key: str, items: list[Any]) -> None:
    """Every item of a list merged by ``key`` has it, and no two the same."""
    seen: dict[Any, int] = {}
    what, path = "podTemplate." + dotted(rel), (*base, *rel)
    for i, item in enumerate(items):
        if key not in item:
            raise spec.error((*path, i), f"{what}[{i}] has no {key}: items of {path[-1]} are "
                             f"merged by {key}; add {key}", value=False)
        if item[key] in seen:
            raise spec.error((*path, i, key), f"{what} has {key} {item[key]!r} twice (items "
                             f"{seen[item[key]]} and {i}); make them one item")
        seen[item[key]] = i


def _check_contract(spec: Spec, w: WorkloadSpec, overlay: Overlay) -> None:
    pod = overlay.data.get("spec", {})
    base = (*overlay.path, "spec")
    profile = spec.profile

    def refuse(path: Path, message: str) -> None:
        raise spec.error((*base, *path), message, value=False)

    if "terminationGracePeriodSeconds" in pod:
        cap = (f" (at most {profile.grace_period_cap} s on preemptible nodes, which are removed "
               f"{profile.drain_window_seconds} s after the notice)"
               if w.compute == "preemptible" else "")
        refuse(("terminationGracePeriodSeconds",), "podTemplate cannot set the grace period: "
               "it is the checkpoint's window, which the supervisor's deadline and the "
               f"preemption contract are sized to{cap}; set checkpoint.gracePeriodSeconds")
    if "restartPolicy" in pod:
        refuse(("restartPolicy",), "podTemplate cannot set restartPolicy: pmanifest sets it "
               "from the role (Never for a worker, which its podFailurePolicy needs; a "
               "Deployment's is Always); remove it")
    supervised = w.role == "worker" or (w.checkpoint is not None
                                        and w.checkpoint.trigger == "sigterm")
    if pod.get("shareProcessNamespace") is True and supervised:
        refuse(("shareProcessNamespace",), "podTemplate cannot share the pod's process "
               "namespace: the termination supervisor must be PID 1, which the preStop hook "
               "signals to mark a termination (shared, PID 1 is the pause process, and the "
               "kubelet's TERM would be taken for one from inside the container); remove it")
    if "resources" in pod:
        refuse(("resources",), "podTemplate cannot set pod-level resources: pmanifest sets "
               "the main container's from resources, gpus and qos; set those")
    _check_placement(spec, pod, refuse)
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(pod.get(kind, [])):
            _check_container(spec, w, container, (kind, i), refuse)


def _check_placement(spec: Spec, pod: dict[str, Any], refuse: Any) -> None:
    profile = spec.profile
    label = profile.label_key
    use = ("placement on preemptible nodes is decided by compute (workers: compute: "
           "preemptible or standard; coordinators and serving always stay on standard nodes); "
           "use compute")
    if "nodeName" in pod:
        refuse(("nodeName",), f"podTemplate cannot pin pods to a named node, which may be a "
               f"preemptible one: {use}, and nodeSelector for other node labels")
    if label in pod.get("nodeSelector", {}):
        refuse(("nodeSelector", label), f"podTemplate cannot select nodes by {label!r}: {use}")
    affinity = pod.get("affinity", {}).get("nodeAffinity", {})
    terms: list[tuple[Path, Any]] = [
        ((*REQUIRED, "nodeSelectorTerms", t), term)
        for t, term in enumerate(affinity.get(REQUIRED[2], {}).get("nodeSelectorTerms", []))]
    terms += [((*PREFERRED, p, "preference"), pref.get("preference", {}))
              for p, pref in enumerate(affinity.get(PREFERRED[2], []))]
    for path, term in terms:
        for e, expression in enumerate(term.get("matchExpressions", [])):
            if expression.get("key") == label:
                refuse((*path, "matchExpressions", e, "key"), f"podTemplate cannot place "
                       f"pods by {label!r}: {use}")
        if term.get("matchFields"):
            refuse((*path, "matchFields"), f"podTemplate cannot pin pods to named nodes "
                   f"(matchFields), which may be preemptible ones: {use}")
    taint = profile.taint
    for t, item in enumerate(pod.get("tolerations", [])):
        if taint is not None and toleration({"tolerations": [item]}, profile) == "explicit":
            refuse(("tolerations", t), f"podTemplate cannot tolerate the taint {taint.key!r} "
                   f"of preemptible nodes: {use}")


def _check_container(spec: Spec, w: WorkloadSpec, container: dict[str, Any], path: Path,
                     refuse: Any) -> None:
    name = container.get("name")
    if name != w.name:
        if path[0] == "containers" and w.role == "worker":
            refuse((*path, "name"), f"podTemplate adds the container {name!r} to a worker's "
                   "pod, where it would keep running after the main exits, so the pod never "
                   "completes; add it under initContainers with restartPolicy: Always (a "
                   "native sidecar, stopped once the main has exited; Kubernetes 1.29+)")
        if "image" not in container:
            refuse((*path, "name"), f"podTemplate adds the container {name!r} (the main "
                   f"container is named after the workload, {w.name!r}), and it has no image; "
                   "add image, or name the main container")
        return
    if path[0] == "initContainers":
        refuse((*path, "name"), f"podTemplate names an init container {name!r}, the name of "
               "the main container; give it another name")
    for key, (what, field) in MAIN_FIELDS.items():
        if key in container:
            refuse((*path, key), f"podTemplate cannot set {key} of the main container: it is "
                   f"{what}; set {field} instead")
    lifecycle = container.get("lifecycle", {})
    if "preStop" in lifecycle:
        refuse((*path, "lifecycle", "preStop"), "podTemplate cannot add a preStop hook to the "
               "main container: it is a checkpoint trigger, and a pod has exactly one (the "
               "hook or the supervisor's TERM handling); use checkpoint: {trigger: preStop, "
               "command: [...]}")
    if "stopSignal" in lifecycle:
        refuse((*path, "lifecycle", "stopSignal"), "podTemplate cannot change the main "
               "container's stop signal: a preemption's SIGTERM is what the supervisor handles "
               "and its exit code 143 what the Job ignores; remove it")
    shared = spec.shared_volume
    for m, mount in enumerate(container.get("volumeMounts", [])):
        where = "/" + posixpath.normpath(str(mount.get("mountPath", "/"))).lstrip("/")
        if shared is not None and (where == shared.mount_path
                                   or where.startswith(shared.mount_path.rstrip("/") + "/")):
            refuse((*path, "volumeMounts", m, "mountPath"), f"podTemplate mounts {where} on "
                   f"the shared volume (mounted at {shared.mount_path}), which would hide it "
                   "and catch the checkpoints written there; mount it elsewhere")


class Refusing:
    """The guard of the merge into a copy of the rendered template: a rendered value changed,
    or a rendered named item merged into, is refused at the overlay's value."""

    def __init__(self, spec: Spec, template: dict[str, Any]) -> None:
        self.spec = spec
        self.template = template

    def changed(self, base: Path, at: Path, old: Any, new: Any) -> None:
        field = _owner(base)
        raise self.spec.error(at, f"podTemplate changes {dotted(base)} of the rendered pod "
                              f"template ({old!r} to {new!r}), which pmanifest sets from "
                              f"{field}; set it there (podTemplate adds, it never changes "
                              "what render wrote)")

    def matched(self, base: Path, at: Path) -> None:
        if base[:2] == ("spec", "containers") and len(base) == 3:
            return  # the main container takes additions (MAIN_FIELDS refused them)
        item: Any = self.template
        for part in base:
            item = item[part]
        field = _owner(base)
        if item.get("name") == "CHECKPOINT_DIR":
            field = "checkpoint.dir"
        elif base[:2] == ("spec", "volumes") and item.get("name") == "shared":
            field = "cluster.sharedVolume"
        raise self.spec.error(at, f"podTemplate merges into {dotted(base)} of the rendered "
                              f"pod template, which pmanifest makes from {field}; change "
                              f"{field} instead (podTemplate adds items, it never changes "
                              "pmanifest's)", value=False)


def _owner(base: Path) -> str:
    text = dotted(base)
    for prefix in sorted(OWNERS, key=len, reverse=True):
        if text == prefix or text.startswith((prefix + ".", prefix + "[")):
            return OWNERS[prefix]
    return "the spec"


def refusing(spec: Spec) -> Any:
    def guard(_: WorkloadSpec, template: dict[str, Any], __: Path) -> Refusing:
        return Refusing(spec, template)
    return guard


def check_merged(spec: Spec) -> Any:
    """What is checked on a merged template of the workload's own pods: qos: Guaranteed
    holds with the overlay's containers too."""
    def after(w: WorkloadSpec, template: dict[str, Any], _: Path) -> None:
        if w.qos != GUARANTEED or pod_qos(template["spec"]) == GUARANTEED:
            return
        for overlay in w.overlays:
            for kind in ("containers", "initContainers"):
                for i, container in enumerate(overlay.data.get("spec", {}).get(kind, [])):
                    if container.get("name") != w.name and \
                            pod_qos({"containers": [container]}) != GUARANTEED:
                        raise spec.error((*overlay.path, "spec", kind, i), "qos: Guaranteed "
                                         "needs every container to limit CPU and memory at "
                                         f"its requests, and podTemplate adds "
                                         f"{container.get('name')!r}; give it resources with "
                                         "limits equal to requests", value=False)
        raise spec.error((*w.path, "qos"), "qos: Guaranteed does not hold with podTemplate "
                         "merged; give every container CPU and memory limits equal to its "
                         "requests")
    return after
