"""The ``podTemplate`` overlay (issue 26), merged over the pod templates render makes before
they are validated.

The merge is kubectl's strategic merge read from the Kubernetes schema of the target version:
a list whose schema has ``x-kubernetes-patch-merge-key`` (containers and initContainers,
volumes, volumeMounts, env, ports, imagePullSecrets, topologySpreadConstraints, ...) is merged
item by item on that key, a new key appended; a ``merge`` list without a key (finalizers) is a
set; mappings are merged key by key; scalars are replaced. Where kubectl would replace an
atomic list, the overlay appends to it (an item already there is not repeated), so it adds a
toleration or an affinity term instead of dropping pmanifest's. Required node affinity terms
are ORed, so the overlay's terms are ANDed into each of pmanifest's (the cross product), and
a pod on standard nodes keeps its ``NotIn`` exclusion in every term.

Which templates: the workload's own pods (a worker's Job, a serving or coordinator
Deployment, a distributed worker's worker pods). The pods pmanifest adds for a distributed
worker (its rendezvous, the Ray head and submitter) run the workload's image in its
namespace, so they take the overlay's ``imagePullSecrets`` and pod ``securityContext`` only.

The main container is the one named after the workload (a Ray worker's is ``ray-worker``).
Before anything is merged, :mod:`pmanifest.render.overlay_checks` refuses what would undo the
preemption contract or change what render wrote; merging into a copy of the rendered template
with a guard finds the latter (``Guard``)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from pmanifest.errors import PmanifestError
from pmanifest.loader.positions import Path
from pmanifest.render.spec import Spec, WorkloadSpec
from pmanifest.schema.kubernetes import definitions_document

POD_TEMPLATE = "io.k8s.api.core.v1.PodTemplateSpec"
AUX_FIELDS = ("imagePullSecrets", "securityContext")  # what pmanifest's own pods take
TERMS = "nodeSelectorTerms"  # required node affinity terms: ORed


class Guard(Protocol):
    """Told of every rendered value an overlay would change, and of every rendered named
    item it merges into (base path in the pod template, path of the overlay's value)."""

    def changed(self, base: Path, at: Path, old: Any, new: Any) -> None: ...

    def matched(self, base: Path, at: Path) -> None: ...


class Merger:
    """Merges overlay values into rendered ones, reading the merge keys from the schema."""

    def __init__(self, version: str, guard: Guard | None = None) -> None:
        self.defs: dict[str, Any] = definitions_document(version)["$defs"]
        self.guard = guard

    def resolve(self, schema: Any) -> dict[str, Any]:
        while isinstance(schema, dict) and "$ref" in schema:
            schema = self.defs.get(str(schema["$ref"]).rpartition("/")[2], {})
        return schema if isinstance(schema, dict) else {}

    def child(self, schema: Any, key: str) -> dict[str, Any]:
        """The schema of ``key`` in an object (not resolved: it holds the list's merge key)."""
        node = self.resolve(schema)
        found = node.get("properties", {}).get(key)
        if found is None and isinstance(node.get("additionalProperties"), dict):
            found = node["additionalProperties"]
        return found if isinstance(found, dict) else {}

    def keyed_lists(self, data: Any, schema: Any, path: Path = ()
                    ) -> Iterator[tuple[Path, str, list[Any]]]:
        """(path, merge key, items) of every list in ``data`` merged by key."""
        if isinstance(data, dict):
            for key, value in data.items():
                yield from self.keyed_lists(value, self.child(schema, key), (*path, key))
        elif isinstance(data, list):
            key = schema.get("x-kubernetes-patch-merge-key")
            if key:
                yield path, key, data
            for i, item in enumerate(data):
                yield from self.keyed_lists(item, schema.get("items", {}), (*path, i))

    def merge(self, base: Any, patch: Any, schema: Any, bpath: Path, ppath: Path) -> Any:
        if isinstance(base, dict) and isinstance(patch, dict):
            out = dict(base)
            for key, value in patch.items():
                if key in base:
                    out[key] = self.merge(base[key], value, self.child(schema, key),
                                          (*bpath, key), (*ppath, key))
                else:
                    out[key] = copy.deepcopy(value)
            return out
        if isinstance(base, list) and isinstance(patch, list):
            return self.merge_list(base, patch, schema, bpath, ppath)
        if base != patch and self.guard is not None:
            self.guard.changed(bpath, ppath, base, patch)
        return copy.deepcopy(patch)

    def merge_list(self, base: list[Any], patch: list[Any], schema: dict[str, Any],
                   bpath: Path, ppath: Path) -> list[Any]:
        if bpath and bpath[-1] == TERMS:
            return _and_terms(base, patch)
        key = schema.get("x-kubernetes-patch-merge-key")
        items = schema.get("items", {})
        out = list(base)
        for i, item in enumerate(patch):
            found = _find(out, key, item) if key else None
            if found is not None:
                if self.guard is not None:
                    self.guard.matched((*bpath, found), (*ppath, i))
                out[found] = self.merge(out[found], item, items, (*bpath, found), (*ppath, i))
            elif item not in out:  # a set (finalizers) or an atomic list: appended once
                out.append(copy.deepcopy(item))
        return out


def _find(items: list[Any], key: str, item: Any) -> int | None:
    if not isinstance(item, dict) or key not in item:
        return None
    for n, existing in enumerate(items):
        if isinstance(existing, dict) and existing.get(key) == item[key]:
            return n
    return None


def _and_terms(base: list[Any], patch: list[Any]) -> list[Any]:
    """(B1 or B2) and (O1 or O2) = (B1 and O1) or (B1 and O2) or ...: each term's expressions
    and fields are ANDed."""
    if not base:
        return copy.deepcopy(patch)
    out = []
    for mine in base:
        for theirs in patch:
            term: dict[str, Any] = {}
            for part in ("matchExpressions", "matchFields"):
                joined = [*(mine.get(part) or []), *(theirs.get(part) or [])]
                if joined:
                    term[part] = copy.deepcopy(joined)
            out.append(term)
    return out


# --- where the overlay goes -------------------------------------------------------------------

def pod_templates(obj: dict[str, Any], w: WorkloadSpec) -> Iterator[tuple[Path, bool]]:
    """(path, the workload's own pods?) of every pod template of a rendered object."""
    from pmanifest.render.distributed import WORKERS_JOB

    kind, spec = obj.get("kind"), obj.get("spec", {})
    if kind in ("Job", "Deployment"):
        yield ("spec", "template"), obj["metadata"]["name"] == w.name
    elif kind == "JobSet":
        for i, replicated in enumerate(spec.get("replicatedJobs", [])):
            yield ("spec", "replicatedJobs", i, "template", "spec", "template"), \
                replicated.get("name") == WORKERS_JOB
    elif kind in ("RayCluster", "RayJob"):
        root: Path = ("spec",) if kind == "RayCluster" else ("spec", "rayClusterSpec")
        if kind == "RayJob":
            yield ("spec", "submitterPodTemplate"), False
        yield (*root, "headGroupSpec", "template"), False
        cluster = spec if kind == "RayCluster" else spec.get("rayClusterSpec", {})
        for i, _ in enumerate(cluster.get("workerGroupSpecs", [])):
            yield (*root, "workerGroupSpecs", i, "template"), True


def _for_template(data: dict[str, Any], own: bool, main: str, workload: str
                  ) -> dict[str, Any]:
    """The overlay as it applies to one template: the main container under its rendered name;
    for pmanifest's own pods, only AUX_FIELDS."""
    spec = data.get("spec", {})
    if not own:
        return {"spec": {k: spec[k] for k in AUX_FIELDS if k in spec}}
    containers = spec.get("containers")
    if not isinstance(containers, list) or main == workload:
        return data
    renamed = [{**c, "name": main} if isinstance(c, dict) and c.get("name") == workload
               else c for c in containers]
    return {**data, "spec": {**spec, "containers": renamed}}


Blame = Callable[[str], PmanifestError]


def overlay_for(w: WorkloadSpec, spec: Spec, version: str,
                guard: Callable[[WorkloadSpec, dict[str, Any], Path], Guard],
                after: Callable[[WorkloadSpec, dict[str, Any], Path], None]
                ) -> Callable[[dict[str, Any]], Blame | None] | None:
    """What render_one calls on the parsed object: merges the workload's overlays into its pod
    templates (each first into a copy under ``guard``, which refuses what it must not
    change), runs ``after`` on each merged own template, and returns how to blame the overlay
    if the merged object is invalid. None when the workload has no overlay."""
    if not w.overlays:
        return None

    def apply(obj: dict[str, Any]) -> Blame | None:
        applied = False
        for path, own in pod_templates(obj, w):
            parent = _at(obj, path[:-1])
            template = parent[path[-1]]
            main = template["spec"]["containers"][0]["name"]
            for overlay in w.overlays:
                data = _for_template(overlay.data, own, main, w.name)
                Merger(version, guard(w, template, overlay.path)).merge(
                    template, data, {"$ref": POD_TEMPLATE}, (), overlay.path)
            for overlay in w.overlays:
                data = _for_template(overlay.data, own, main, w.name)
                parent[path[-1]] = Merger(version).merge(
                    parent[path[-1]], data, {"$ref": POD_TEMPLATE}, (), overlay.path)
            if own:
                after(w, parent[path[-1]], path)
            applied = True
        if not applied:
            return None
        last = w.overlays[-1].path
        return lambda message: spec.error(last, f"{message}, with podTemplate merged; fix "
                                                "podTemplate", value=False)

    return apply


def _at(obj: dict[str, Any], path: Path) -> Any:
    node: Any = obj
    for part in path:
        node = node[part]
    return node
