"""A Kubernetes manifest given where a spec belongs (``render -f job.yaml``): refused with a
pointer to ``pmanifest lint`` instead of a list of unknown keys."""

from __future__ import annotations

from typing import Any

from pmanifest.errors import SpecError
from pmanifest.loader.documents import Loaded, load_documents
from pmanifest.loader.positions import Positions
from pmanifest.render.spec.model import API_VERSION


def refuse_manifest(data: dict[str, Any], positions: Positions, file: str) -> None:
    """A mapping with a ``kind`` and an apiVersion other than the spec's is a Kubernetes
    object (a spec never has ``kind``; a bare wrong apiVersion is left to the schema)."""
    api_version = data.get("apiVersion")
    if "kind" not in data or api_version == API_VERSION:
        return
    if isinstance(api_version, str) and api_version.startswith("pmanifest/"):
        return  # a spec of another version: the schema says which one to write
    pos = positions.at(("kind",))
    target = "-" if file == "<stdin>" else file
    kind = data["kind"]
    what = f" (kind: {kind})" if isinstance(kind, str) and kind.isalnum() else ""
    raise SpecError(f"this is a Kubernetes manifest{what}; use pmanifest lint {target} to "
                    f"check it (render takes a spec: apiVersion: {API_VERSION}, see examples/)",
                    file, pos.line, pos.column)


def refuse_manifests(text: str, file: str) -> None:
    """The same for a file of several documents whose first one is a Kubernetes object."""
    first = next(iter(load_documents(text)), None)
    if isinstance(first, Loaded) and isinstance(first.data, dict):
        refuse_manifest(first.data, first.positions, file)
