"""The objects the differential test admits: every object of every rule case file and of
every example rendered under every profile, as the API server would see it (kubectl turns
YAML into JSON: integral floats become integers, keys strings; Go's typed decoding drops
nulls; a List's items are sent one by one)."""

from __future__ import annotations

import datetime
import functools
from pathlib import Path
from typing import Any, NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "rules" / "cases"
EXAMPLES = ROOT / "examples"


class Admitted(NamedTuple):
    """One object, where it comes from and the Kubernetes version its case names."""

    source: str
    data: dict[str, Any]
    version: str = "1.31"


def as_admitted(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): as_admitted(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [as_admitted(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def objects_of(text: str) -> list[dict[str, Any]]:
    """The Kubernetes objects of a YAML stream (a List's items each), or [] when it does not
    parse (PM001's cases: nothing reaches the API server)."""
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    out: list[dict[str, Any]] = []
    stack = [d for d in reversed(docs)]
    while stack:
        doc = stack.pop()
        if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) \
                or not isinstance(doc.get("apiVersion"), str):
            continue
        items = doc.get("items")
        if doc["kind"].endswith("List") and isinstance(items, list):
            stack.extend(reversed(items))
            continue
        out.append(as_admitted(doc))
    return out


@functools.cache
def case_objects() -> tuple[Admitted, ...]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in data["cases"]:
            version = str(case.get("kubernetesVersion", "1.31"))
            for obj in objects_of(case["manifest"]):
                out.append(Admitted(f"{path.name}: {case['name']}", obj, version))
    return tuple(out)


@functools.cache
def rendered_objects() -> tuple[Admitted, ...]:
    """Every example rendered with every profile that accepts it."""
    from pmanifest.errors import PmanifestError
    from pmanifest.kube.profile import profile_names
    from pmanifest.render.engine import RenderOptions, render_text

    out = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for profile in profile_names():
            try:
                rendered = render_text(text, str(path), RenderOptions(profile=profile))
            except PmanifestError:
                continue  # a checkpoint window the profile's cap cannot hold
            for obj in objects_of(rendered):
                out.append(Admitted(f"{path.name} rendered for {profile}", obj))
    return tuple(out)
