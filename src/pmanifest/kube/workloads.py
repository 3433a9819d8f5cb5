"""The pod templates of any workload kind, with their roles, placement and containers.

Every rule goes through here instead of walking manifests on its own, so a new workload kind
or a new container list is taught once: where templates are is the table of
:mod:`pmanifest.kube.kinds` (read by :mod:`pmanifest.kube.podtemplates`); this module adds what
rules need to know of each.

A template's role, first found wins:

1. ``pmanifest.io/role`` (a label or an annotation) on the template's own metadata, then on
   the metadata of what holds it where the table names one (a JobSet replicatedJob's Job
   template: ``replicatedJobs[].template.metadata``);
2. for a LeaderWorkerSet leader: coordinator when the set's pods are workers, else the set's
   role (the role declared on the object, else the kind's);
3. ``pmanifest.io/role`` on the object, else the config's ``roles:`` entry for the kind;
4. for a template the table anchors only with something in the object (a StatefulSet without
   volumeClaimTemplates, running no database image): what the pod runs, as in 5;
5. what the table says: the kind's role, a coordinator name (``leader``, ``Master``, ``ps``)
   for templates named by their replicatedJob, task or replica, and a database or queue image
   (postgres, redis, kafka, ...) for Deployments and ReplicaSets;
6. for a template found by shape in a kind the table does not know: what the pod runs
   (:func:`pmanifest.kube.roles.infer`: an inference server is serving, a training launcher or
   a pod that runs to completion a worker, a database a coordinator), else ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pmanifest.kube.contract import ROLE_LABEL, ROLES, SERVING_ROLE, UNKNOWN_ROLE
from pmanifest.kube.document import Document
from pmanifest.kube.kinds import (
    COORDINATOR,
    LEADER,
    POD_CONTAINERS,
    SET,
    WORKER,
    Template,
    builtin_group,
    coordinator_name,
)
from pmanifest.kube.placement import Placement, placement_of
from pmanifest.kube.podtemplates import (
    GENERIC,
    Found,
    find,
    get,
    group_of,
    known,
    mapping,
    sequence,
)
from pmanifest.kube.profile import Profile
from pmanifest.kube.roles import infer, job_like, stateful_image
from pmanifest.loader.positions import Path

__all__ = ["JOB_SPEC_PATHS", "Container", "Workload", "annotation_paths", "api_group", "find",
           "get", "kind_matches", "mapping", "pod_paths", "role_of", "sequence", "unread",
           "workloads_of"]

JOB_SPEC_PATHS: dict[str, Path] = {"Job": ("spec",), "CronJob": ("spec", "jobTemplate", "spec")}


class Container(NamedTuple):
    """A container (or init container) of a pod template, with its path."""

    path: Path  # from the document root
    data: dict[str, Any]
    init: bool
    default_name: str = "?"  # Argo's single `container` is named `main` when it has no name

    @property
    def name(self) -> str:
        name = self.data.get("name")
        return name if isinstance(name, str) else self.default_name


@dataclass(frozen=True)
class Workload:
    """A pod template of a document, with what every rule needs to know of it."""

    doc: Document
    kind: str  # the kind holding the template (an embedded object's own kind)
    role: str  # worker | coordinator | serving | daemon | unknown
    pod_path: Path
    pod: dict[str, Any]
    placement: Placement  # paths in it are relative to the document root
    job_path: Path | None  # the batch/v1 Job spec around it (for podFailurePolicy), if any
    group: str = ""  # the API group of ``kind``
    part: str = ""  # what the template is in its object: "head", "replicatedJob", ...
    name: str | None = None  # its replicatedJob, task, replica or group name
    name_path: Path | None = None
    set_path: Path | None = None  # the spec of the set running it (JobSet, Volcano Job)
    meta_path: Path = ("metadata",)  # the template's metadata
    container_keys: tuple[tuple[str, bool, bool], ...] = POD_CONTAINERS
    generic: bool = False  # found by shape in a kind pmanifest does not know
    declared: bool = False  # the role comes from a pmanifest.io/role label or annotation
    inferred: str = ""  # why a generic template has its role (what it runs), when not declared
    recovers: bool = False  # its framework (Ray) replaces lost pods and resumes on its own
    fault_tolerant: bool = False  # losing its pods does not take the others down (Ray GCS FT)
    kind_title: str = ""  # how messages name the kind when ``kind`` alone is ambiguous
    owner: Path = ()  # the object holding the template: () or an embedded object's path
    template: Template = GENERIC  # the table's entry (its pod counts, for the capacity checks)
    runs: bool = True  # False: its kind is a template for others to run (a TrainingRuntime)
    # what several rules derive from the template (rules.shells: its containers' shells),
    # worked out by the first rule that asks; it lives and dies with the template
    memo: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def builtin(self) -> bool:
        """A template of a built-in kind (Pod, Job, Deployment, ...) that is the document's
        object itself, not embedded in a custom resource."""
        return not self.owner and builtin_group(self.group)

    @property
    def long_running(self) -> bool:
        # The role already carries the kind default (Deployment -> serving, StatefulSet ->
        # coordinator), so an explicit `pmanifest.io/role: worker` overrides the kind.
        return self.role in ("serving", "coordinator")

    @property
    def title(self) -> str:
        """``RayCluster head``, ``JobSet replicatedJob 'leader'``, ``Volcano Job task 'ps'``,
        ``Deployment``."""
        kind = self.kind_title or self.kind
        named = f" {self.name!r}" if self.name is not None else ""
        return f"{kind} {self.part}{named}".rstrip() if self.part else kind

    def containers(self) -> Iterator[Container]:
        for key, is_list, init in self.container_keys:
            value = self.pod.get(key)
            if not is_list:
                if isinstance(value, dict):
                    yield Container((*self.pod_path, key), value, init, "main")
                continue
            for i, container in enumerate(value if isinstance(value, list) else ()):
                if isinstance(container, dict):
                    yield Container((*self.pod_path, key, i), container, init)

    def volumes(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for volume in sequence(self.pod, ("volumes",)):
            if isinstance(volume, dict) and isinstance(volume.get("name"), str):
                out[volume["name"]] = volume
        return out


def _declared(data: Any, meta_path: Path) -> str | None:
    """The role a ``pmanifest.io/role`` label (or annotation) declares at ``meta_path``."""
    meta = mapping(data, meta_path)
    for key in ("labels", "annotations"):
        role = mapping(meta, (key,)).get(ROLE_LABEL)
        if isinstance(role, str) and role in ROLES:
            return role
    return None


def _stateful(pod: dict[str, Any]) -> bool:
    """Does a (non-init) container run a database or queue image?"""
    return any(isinstance(c, dict) and isinstance(c.get("image"), str)
               and stateful_image(c["image"]) for c in sequence(pod, ("containers",)))


Roles = tuple[tuple[str, str], ...]  # the config's `roles:`: (Kind or group/Kind, role)


def _configured(roles: Roles, found: Found) -> str | None:
    return next((role for kind, role in roles
                 if kind_matches((kind,), found.group, found.kind)), None)


def role_of(data: Any, found: Found, roles: Roles = ()) -> tuple[str, bool, str]:
    """(role, whether it was declared: a label or annotation, or the config, and why a generic
    template's role was inferred) of a template. The config's role for the kind counts as
    declared on the object."""
    own = _declared(data, found.meta_path)
    also = found.also_meta_path
    if own is None and also is not None:
        own = _declared(data, also)
    if own is not None:
        return own, True, ""
    template = found.template
    on_object = _declared(data, (*found.owner, "metadata")) or _configured(roles, found)
    if template.role == LEADER:
        set_role = on_object or found.set_role
        return (COORDINATOR if set_role == WORKER else set_role), on_object is not None, ""
    if on_object is not None:
        return on_object, True, ""
    if found.generic:
        holder = get(data, found.pod_path[:-2])
        inference = infer(found.pod, job_like(holder, found.pod_path))
        return inference.role, False, inference.reason
    if template.anchor_if is not None and not _anchored(data, found):
        inference = infer(found.pod)
        if inference.role == UNKNOWN_ROLE:
            # the kind still tells that its pods run for as long as the set does (restartPolicy
            # Always): checked as a Deployment's pods are, never left to role-free rules only
            return SERVING_ROLE, False, "its pods are long-running and nothing they run tells more"
        return inference.role, False, inference.reason
    return _table_role(found), False, ""


def _anchored(data: Any, found: Found) -> bool:
    """Does the table's role hold for a template with ``anchor_if``: a non-empty value there
    (a StatefulSet's volumeClaimTemplates), or a database image?"""
    assert found.template.anchor_if is not None
    value = get(data, found.resolve(found.template.anchor_if))
    return (bool(value) and isinstance(value, list | dict | str)) or _stateful(found.pod)


def _table_role(found: Found) -> str:
    """What the table says of a template whose role nothing declares."""
    template = found.template
    if template.role == SET:
        return found.set_role
    if template.named and found.name is not None and coordinator_name(found.name):
        return COORDINATOR
    if template.by_image and _stateful(found.pod):
        return COORDINATOR
    return template.role


def workloads_of(doc: Document, profile: Profile, roles: Roles = (),
                 templates: tuple[Found, ...] | None = None) -> tuple[Workload, ...]:
    """The pod templates of a document with their roles: none for most kinds (and for a pod
    template that is not a mapping), one per template found. An override that is merged into
    a pod spec the manifest does not show (a TrainJob's runtime patch) is only kept when it
    confines its pods to preemptible nodes by itself: anything else depends on what it is
    merged into. ``templates``: what ``find`` says of ``doc`` when the caller has it already
    (the engine reads each object's templates once, for this and ``annotation_paths``)."""
    out = []
    for found in find(doc.data) if templates is None else templates:
        placement = placement_of(found.pod, profile, found.pod_path)
        if found.template.partial and not placement.only_preemptible:
            continue
        role, declared, inferred = role_of(doc.data, found, roles)
        out.append(Workload(
            doc=doc,
            kind=found.kind,
            role=role,
            pod_path=found.pod_path,
            pod=found.pod,
            placement=placement,
            job_path=found.pod_path[:-2] if found.template.job else None,
            group=found.group,
            part=found.template.part,
            name=found.name,
            name_path=found.name_path,
            set_path=found.set_path,
            meta_path=found.meta_path,
            container_keys=found.template.containers,
            generic=found.generic,
            declared=declared,
            inferred=inferred,
            recovers=found.template.recovers,
            fault_tolerant=_fault_tolerant(doc.data, found),
            kind_title=found.title,
            owner=found.owner,
            template=found.template,
            runs=found.runs,
        ))
    return tuple(out)


def _fault_tolerant(data: Any, found: Found) -> bool:
    """Does the object turn on what makes the template's loss survivable (a non-empty mapping,
    or "true", at one of the table's paths)?"""
    for path in found.template.fault_tolerant_if:
        value = get(data, (*found.owner, *path))
        if (isinstance(value, dict) and value) or value is True or \
                (isinstance(value, str) and value.strip().lower() == "true"):
            return True
    return False


def pod_paths(doc: Document) -> tuple[Path, ...]:
    """Where the pod templates of a document are (what ``workloads_of`` reads)."""
    return tuple(found.pod_path for found in find(doc.data))


def annotation_paths(doc: Document,
                     templates: tuple[Found, ...] | None = None) -> tuple[Path, ...]:
    """The metadata whose annotations speak for the object: its own, its pod templates' and
    those of objects embedded in it (suppressions are read there). ``templates``: as for
    ``workloads_of``."""
    paths: dict[Path, None] = {("metadata",): None}
    for found in find(doc.data) if templates is None else templates:
        paths[(*found.owner, "metadata")] = None
        paths[found.meta_path] = None
        if found.also_meta_path is not None:
            paths[found.also_meta_path] = None
    return tuple(paths)


def unread(doc: Document, workloads: tuple[Workload, ...]) -> bool:
    """A custom resource pmanifest cannot read: a kind the table does not know, with no pod
    template found by shape."""
    return doc.is_kubernetes and not workloads and not known(doc.data)


def kind_matches(kinds: tuple[str, ...], group: str, kind: str | None) -> bool:
    """Does ``Kind`` or ``group/Kind`` in a rule's ``kinds`` name this object's kind?"""
    for entry in kinds:
        want_group, slash, want_kind = entry.rpartition("/")
        if want_kind == kind and (not slash or want_group == group):
            return True
    return False


def api_group(doc: Document) -> str:
    return group_of(doc.api_version)
