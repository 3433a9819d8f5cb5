"""Requests against limits, as the API server checks them, so render refuses what
``kubectl apply`` would: a request above its limit, and GPUs (or any extended resource)
requested other than exactly as limited."""

from __future__ import annotations

import decimal
import re
from typing import Any, Protocol

from pmanifest.errors import PmanifestError
from pmanifest.loader.positions import Path

GPU = "nvidia.com/gpu"
_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
                     r"([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# exact arithmetic whatever the exponent a quantity is written with (1e999999 included)
_CONTEXT = decimal.Context(prec=80, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                           traps=[decimal.InvalidOperation])


class Failing(Protocol):
    def fail(self, path: Path, message: str, *, value: bool = True) -> PmanifestError: ...


def quantity(value: str | int) -> decimal.Decimal:
    """A Kubernetes quantity (``500m``, ``64Gi``, ``1e3``, ``8``) as an exact number; the
    schema has already checked the syntax."""
    match = _NUMBER.match(str(value))
    if match is None:
        raise ValueError(f"not a quantity: {value!r}")
    number, suffix = decimal.Decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return _CONTEXT.multiply(number, decimal.Decimal(1024) ** _BINARY[suffix])
    exponent = _DECIMAL[suffix] if suffix in _DECIMAL else int(suffix[1:])
    return _CONTEXT.scaleb(number, exponent)


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
