"""Find the pod template of any workload kind, its role and its containers.

Every rule goes through here instead of walking manifests on its own, so a new workload kind
or a new container list is taught once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pmanifest.contract import DAEMON_ROLE, ROLE_LABEL, ROLES
from pmanifest.document import Document, Path
from pmanifest.placement import Placement, placement_of
from pmanifest.profile import Profile

POD_SPEC_PATHS: dict[str, Path] = {
    "Pod": ("spec",),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
JOB_SPEC_PATHS: dict[str, Path] = {"Job": ("spec",), "CronJob": ("spec", "jobTemplate", "spec")}
DEFAULT_ROLES = {
    "Deployment": "serving",
    "ReplicaSet": "serving",
    "ReplicationController": "serving",
    "StatefulSet": "coordinator",
    "DaemonSet": DAEMON_ROLE,
}
CONTAINER_LISTS = ("initContainers", "containers")


def get(data: Any, path: Path) -> Any:
    """Follow ``path`` through dicts and lists; None where a step is missing or mistyped."""
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not -len(data) <= part < len(data):
                return None
        elif not isinstance(data, dict):
            return None
        else:
            if part not in data:
                return None
        data = data[part]
    return data


def mapping(data: Any, path: Path = ()) -> dict[str, Any]:
    value = get(data, path)
    return value if isinstance(value, dict) else {}


def sequence(data: Any, path: Path = ()) -> list[Any]:
    value = get(data, path)
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Container:
    path: Path  # from the document root
    data: dict[str, Any]
    init: bool

    @property
    def name(self) -> str:
        name = self.data.get("name")
        return name if isinstance(name, str) else "?"


@dataclass(frozen=True)
class Workload:
    """A document that carries a pod template, with what every rule needs to know of it."""

    doc: Document
    kind: str
    role: str  # worker | coordinator | serving | daemon
    pod_path: Path
    pod: dict[str, Any]
    placement: Placement  # paths in it are relative to the document root
    job_path: Path | None  # the Job spec (for podFailurePolicy), None for other kinds

    @property
    def is_job(self) -> bool:
        return self.job_path is not None

    @property
    def long_running(self) -> bool:
        # The role already carries the kind default (Deployment -> serving, StatefulSet ->
        # coordinator), so an explicit `pmanifest.io/role: worker` overrides the kind.
        return self.role in ("serving", "coordinator")

    @property
    def template_meta_path(self) -> Path:
        return (*self.pod_path[:-1], "metadata")

    def containers(self) -> Iterator[Container]:
        for list_name in CONTAINER_LISTS:
            for i, container in enumerate(sequence(self.pod, (list_name,))):
                if isinstance(container, dict):
                    path = (*self.pod_path, list_name, i)
                    yield Container(path, container, list_name == "initContainers")

    def volumes(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for volume in sequence(self.pod, ("volumes",)):
            if isinstance(volume, dict) and isinstance(volume.get("name"), str):
                out[volume["name"]] = volume
        return out


def role_of(doc: Document, kind: str, pod_path: Path) -> str:
    template_labels = mapping(doc.data, (*pod_path[:-1], "metadata", "labels"))
    for labels in (mapping(doc.data, ("metadata", "labels")), template_labels):
        role = labels.get(ROLE_LABEL)
        if isinstance(role, str) and role in ROLES:
            return role
    return DEFAULT_ROLES.get(kind, "worker")


def pod_paths(doc: Document) -> tuple[Path, ...]:
    """Where the pod specs of a document are (whether or not they are mappings)."""
    path = POD_SPEC_PATHS.get(doc.kind or "")
    return (path,) if path is not None else ()


def workloads_of(doc: Document, profile: Profile) -> tuple[Workload, ...]:
    """The pod templates of a document with their roles: none for most kinds (and for a pod
    template that is not a mapping), one for the core workload kinds."""
    kind = doc.kind
    if kind is None or kind not in POD_SPEC_PATHS:
        return ()
    pod_path = POD_SPEC_PATHS[kind]
    pod = get(doc.data, pod_path)
    if not isinstance(pod, dict):
        return ()
    return (Workload(
        doc=doc,
        kind=kind,
        role=role_of(doc, kind, pod_path),
        pod_path=pod_path,
        pod=pod,
        placement=placement_of(pod, profile, pod_path),
        job_path=JOB_SPEC_PATHS.get(kind),
    ),)
