"""An object as ``kubectl kustomize`` builds it from a resource file, as far as rules need it.

A kustomization's ``commonLabels``, and its ``labels`` entries with ``includeSelectors: true``,
are added to the selector and the pod template of every workload among its resources,
created where absent (kustomize's field specs for commonLabels): a base Deployment written
without ``spec.selector`` is complete once built. A webhook's ``clientConfig.service`` written
without a namespace gets the namespace of the Service it names when a build holds both and
sets that Service's namespace (kustomize's name reference from Mutating and Validating
webhook configurations to Services; checked against ``kubectl kustomize`` in
tests/integration/test_kustomize_build.py: without the Service in the build, or in a build
that sets no namespace, it stays missing). Schema validation (PM002) reads the object so,
instead of reporting what the build supplies; what the file holds is not changed.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

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
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# what stands for the namespace the build writes (schema validation needs a string only)
BUILT_NAMESPACE = "(set by kustomize)"


class Built(NamedTuple):
    """What the kustomize builds that list a resource file add to its objects."""

    # labels kustomize adds to selectors (commonLabels, labels with includeSelectors)
    selector_labels: tuple[tuple[str, str], ...] = ()
    # Services in a build with the file whose namespace that build sets: a webhook naming one
    # gets its namespace
    services: tuple[str, ...] = ()


def as_built(data: Any, built: Built) -> Any:
    """``data`` as kustomize builds it (a copy where something changes), else ``data``."""
    data = with_selector_labels(data, built.selector_labels)
    if built.services and isinstance(data, dict) and data.get("kind") in WEBHOOK_KINDS \
            and group_of(data.get("apiVersion")) == "admissionregistration.k8s.io":
        data = _with_service_namespaces(data, frozenset(built.services))
    return data


def _with_service_namespaces(data: dict[str, Any], services: frozenset[str]) -> Any:
    webhooks = data.get("webhooks")
    missing = [i for i, hook in enumerate(webhooks if isinstance(webhooks, list) else [])
               if _unset_service(hook, services)]
    if not missing:
        return data
    built = copy.deepcopy(data)
    for i in missing:
        built["webhooks"][i]["clientConfig"]["service"]["namespace"] = BUILT_NAMESPACE
    return built


def _unset_service(hook: Any, services: frozenset[str]) -> bool:
    """Does ``hook`` name one of ``services`` without a namespace?"""
    config = hook.get("clientConfig") if isinstance(hook, dict) else None
    service = config.get("service") if isinstance(config, dict) else None
    return isinstance(service, dict) and service.get("namespace") is None \
        and isinstance(service.get("name"), str) and service["name"] in services


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
