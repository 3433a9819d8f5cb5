"""Patch fragments: documents that look like Kubernetes objects but are pieces of one.

Kustomize merges strategic-merge patches (``apiVersion``, ``kind``, ``metadata.name`` and only
the fields to change) into a base. Linted as whole objects they report missing selectors and
templates the base has, and placement the base may already fix, so the engine does not lint
them: it reports one PM007 info finding per fragment instead, saying why and what to lint.
The signals, each sufficient:

- the file is named by a kustomization as a patch, or lies in a patch directory: one below a
  kustomization in which it names a patch (:mod:`pmanifest.lint.kustomize` finds both);
- a strategic-merge directive (``$patch``, ``$retainKeys``, ``$setElementOrder/...``,
  ``$deleteFromPrimitiveList/...``) appears as a key anywhere outside ``data``,
  ``stringData``, ``binaryData``, labels and annotations (no object stored by the API has one);
- a core workload kind has a container without an ``image`` (the API server rejects such a
  pod, so the document cannot be a complete object; a patch that changes ``args`` has no
  image).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pmanifest.kube.document import Document
from pmanifest.kube.podtemplates import get, group_of
from pmanifest.loader.positions import Path

DIRECTIVES = ("$patch", "$retainKeys")
DIRECTIVE_PREFIXES = ("$setElementOrder/", "$deleteFromPrimitiveList/")
# The core workload kinds (built-in API groups) and where their pod spec is: a container
# without an image makes one of these a fragment (custom resources may default images)
CORE_POD_SPECS: dict[tuple[str, str], Path] = {
    ("", "Pod"): ("spec",),
    ("", "PodTemplate"): ("template", "spec"),
    ("", "ReplicationController"): ("spec", "template", "spec"),
    ("apps", "Deployment"): ("spec", "template", "spec"),
    ("apps", "StatefulSet"): ("spec", "template", "spec"),
    ("apps", "ReplicaSet"): ("spec", "template", "spec"),
    ("apps", "DaemonSet"): ("spec", "template", "spec"),
    ("batch", "Job"): ("spec", "template", "spec"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}
CONTAINER_LISTS = ("initContainers", "containers")
_FREE_FORM = {("data",), ("stringData",), ("binaryData",), ("metadata", "labels"),
              ("metadata", "annotations")}
_WHOLE = ("lint the complete object instead (what kustomize builds: `kubectl kustomize DIR | "
          "pmanifest lint -`)")


# ``patch_of`` of a file that no kustomization names, in a directory one names patches in
IN_PATCH_DIRECTORY = "\0in\0"


def in_patch_directory(kustomization: str, directory: str) -> str:
    """The ``patch_of`` of a file in ``directory``, where ``kustomization`` names patches."""
    return f"{kustomization}{IN_PATCH_DIRECTORY}{directory}"


def fragment(doc: Document, patch_of: str | None,
             dollar: bool = True) -> tuple[Path, str] | None:
    """(where, why) when ``doc`` is a patch fragment rather than an object, else None.
    ``dollar`` False: the loader saw no ``$`` in the document's text (so no directive)."""
    if patch_of is not None and os.path.basename(patch_of).startswith("chainsaw-test."):
        return (), (f"{doc.kind} {doc.name!r} is a change {patch_of} makes to an object "
                    "that exists (a patch operation, or an object an assertion found and the "
                    "test did not make): a fragment of an object, not linted on its own")
    if patch_of is not None:
        by, directory = patch_of.split(IN_PATCH_DIRECTORY, 1) if IN_PATCH_DIRECTORY in patch_of \
            else (patch_of, "")
        built = f"`kubectl kustomize {os.path.dirname(by) or '.'} | pmanifest lint -`"
        why = f"in {directory}, where {by} names its patches," if directory else \
            f"a patch named by {by}:"
        return (), (f"{doc.kind} {doc.name!r} is {why} a fragment of an object, not linted on "
                    f"its own; lint what kustomize builds instead ({built})")
    directive = next(_directives(doc.data, ()), None) if dollar else None
    if directive is not None:
        return directive, (f"{doc.kind} {doc.name!r} holds the strategic-merge directive "
                           f"{directive[-1]!r}: a patch fragment, not linted on its own; "
                           f"{_WHOLE}")
    container = _imageless_container(doc)
    if container is not None:
        return container, (f"{doc.kind} {doc.name!r} has a container without an image, which "
                           "the API server refuses in an object: a fragment (a kustomize patch, "
                           "or a pod template another tool completes), not linted on its own; "
                           f"{_WHOLE}")
    return None


def _directives(node: Any, path: Path) -> Iterator[Path]:
    """Paths of strategic-merge directive keys, depth first (iteratively: documents can be
    deep). Most documents have no key starting with ``$`` at all: a walk that builds no paths
    says so first."""
    if not _dollar_key(node):
        return
    stack: list[tuple[Any, Path]] = [(node, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if isinstance(key, str) and (key in DIRECTIVES
                                             or key.startswith(DIRECTIVE_PREFIXES)):
                    yield (*where, key)
                if (*where, key) not in _FREE_FORM:
                    stack.append((value, (*where, key)))
        elif isinstance(current, list):
            stack.extend((item, (*where, i)) for i, item in enumerate(current))


def _dollar_key(node: Any) -> bool:
    """Is any mapping key in ``node`` a string starting with ``$`` (free-form maps included)?
    Only containers go on the stack (most values are strings)."""
    stack = [node]
    push = stack.append
    while stack:
        current = stack.pop()
        if type(current) is dict:
            for key, value in current.items():
                if type(key) is str and key[:1] == "$":
                    return True
                if type(value) is dict or type(value) is list:
                    push(value)
        elif type(current) is list:
            for item in current:
                if type(item) is dict or type(item) is list:
                    push(item)
    return False


def _imageless_container(doc: Document) -> Path | None:
    pod_path = CORE_POD_SPECS.get((group_of(doc.api_version), doc.kind or ""))
    pod = get(doc.data, pod_path) if pod_path is not None else None
    if pod_path is None or not isinstance(pod, dict):
        return None
    for list_name in CONTAINER_LISTS:
        containers = pod.get(list_name)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            if isinstance(container, dict) and "image" not in container:
                return (*pod_path, list_name, i)
    return None
