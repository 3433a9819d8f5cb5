"""An object as ``kubectl kustomize`` builds it from a resource file, as far as rules need it.

A kustomization's ``commonLabels``, and its ``labels`` entries with ``includeSelectors: true``,
are added to the selector and the pod template of every workload among its resources,
created where absent (kustomize's field specs for commonLabels): a base Deployment written
without ``spec.selector`` is complete once built. Schema validation (PM002) reads the object
so, instead of reporting a selector the build supplies; what the file holds is not changed.
"""

from __future__ import annotations

import copy
from typing import Any

from pmanifest.kube.podtemplates import group_of

# (group, kind) -> where the selector's labels go; kustomize creates both paths when absent
SELECTOR_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("selector", "matchLabels"),
    ("apps", "ReplicaSet"): ("selector", "matchLabels"),
    ("apps", "StatefulSet"): ("selector", "matchLabels"),
    ("apps", "DaemonSet"): ("selector", "matchLabels"),
    ("", "ReplicationController"): ("selector",),
}
TEMPLATE_LABELS = ("template", "metadata", "labels")


def with_selector_labels(data: Any, labels: tuple[tuple[str, str], ...]) -> Any:
    """``data`` with ``labels`` in its selector and pod template labels (a copy), when it is a
    kind whose selector kustomize fills in; else ``data`` itself."""
    if not labels or not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        return data
    path = SELECTOR_PATHS.get((group_of(data.get("apiVersion")), str(data.get("kind"))))
    if path is None:
        return data
    built = copy.deepcopy(data)
    for where in (path, TEMPLATE_LABELS):
        node = built["spec"]
        for key in where:
            if node.get(key) is None:
                node[key] = {}
            node = node[key]
            if not isinstance(node, dict):
                break  # not a mapping: what schema validation reports as it is
        else:
            node.update(labels)
    return built
