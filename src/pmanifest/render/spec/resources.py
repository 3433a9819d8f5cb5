"""Requests against limits, as the API server checks them, so render refuses what
``kubectl apply`` would: a request above its limit, and GPUs (or any extended resource)
requested other than exactly as limited."""

from __future__ import annotations

from typing import Any, Protocol

from pmanifest.errors import PmanifestError
from pmanifest.kube.resources import GPU, quantity
from pmanifest.loader.positions import Path


class Failing(Protocol):
    def fail(self, path: Path, message: str, *, value: bool = True) -> PmanifestError: ...


def is_extended(name: str) -> bool:
    """Resources the API server never overcommits: GPUs and other vendor resources
    (``vendor.com/name`` outside kubernetes.io), and hugepages."""
    if name.startswith("hugepages-"):
        return True
    domain, slash, _ = name.partition("/")
    return bool(slash) and not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def check_requests(checker: Failing, path: Path, raw: dict[str, Any]) -> None:
    """Refuse requests the API server rejects: above the limit, or for an extended resource
    without an equal limit. GPUs are limited through ``gpus``."""
    resources = raw.get("resources", {})
    limits: dict[str, str | int] = dict(resources.get("limits", {}))
    if GPU in limits and raw.get("gpus"):
        raise checker.fail((*path, "resources", "limits", GPU), f"{GPU} is set from gpus; "
                           "remove it from resources.limits", value=False)
    if raw.get("gpus"):
        limits[GPU] = raw["gpus"]
    for name, request in resources.get("requests", {}).items():
        where = (*path, "resources", "requests", name)
        limit = limits.get(name)
        if is_extended(name):
            by = "gpus" if name == GPU and raw.get("gpus") else f"resources.limits {name}"
            _check_extended(checker, where, name, request, limit, by)
        elif limit is not None and quantity(request) > quantity(limit):
            raise checker.fail(where, f"resources.requests {name}: {request} is above its "
                               f"limit {limit}, which the API server rejects; lower the "
                               "request or raise resources.limits")


def _check_extended(checker: Failing, where: Path, name: str, request: str | int,
                    limit: str | int | None, by: str) -> None:
    if limit is None:
        todo = ("set gpus: " + str(request) if name == GPU
                else f"add resources.limits {name}: {request}")
        raise checker.fail(where, f"resources.requests {name}: {request} has no limit, and "
                           f"{name} cannot be overcommitted (the limit is what the pod "
                           f"gets); {todo} and remove the request")
    if quantity(request) != quantity(limit):
        raise checker.fail(where, f"resources.requests {name}: {request} differs from its "
                           f"limit {limit} ({by}), and {name} cannot be overcommitted; "
                           f"remove the request (it defaults to the limit) or make it {limit}")
