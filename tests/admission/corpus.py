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

from pmanifest.errors import ConfigError
from pmanifest.kube.profile import Profile, custom_profiles, get_profile, profile_names

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "rules" / "cases"
EXAMPLES = ROOT / "examples"


# A custom profile as a config's `profiles:` defines it: its own label, taint and cap, and
# GKE's compute classes (a pod that selects one is placed under gke-autopilot).
CUSTOM = custom_profiles(yaml.safe_load("""
playground:
  extends: gke
  label: {key: example.com/capacity, value: spot}
  taint: {key: spot, value: "true", effect: NoSchedule}
  gracePeriodCap: 60
"""), ".pmanifest.yaml", lambda message, *_: ConfigError(message))
PROFILES = [*profile_names(), *CUSTOM]


def profile_of(name: str) -> Profile:
    return CUSTOM[name] if name in CUSTOM else get_profile(name)


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
    from pmanifest.render.engine import RenderOptions, render_text

    out = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for profile in PROFILES:
            try:
                rendered = render_text(text, str(path), RenderOptions(), profile_of(profile))
            except PmanifestError:
                continue  # a checkpoint window the profile's cap cannot hold
            for obj in objects_of(rendered):
                out.append(Admitted(f"{path.name} rendered for {profile}", obj))
    return tuple(out)


@functools.cache
def relabelled_objects() -> tuple[Admitted, ...]:
    """Every case object with Together's label moved to the custom profile's, as is and
    with every pod tolerating the custom taint."""
    custom = CUSTOM["playground"]
    together = get_profile("together")
    moves = {together.label_key: custom.label_key, together.label_value: custom.label_value}
    out = []
    for item in case_objects():
        moved = _moved(item.data, moves, None)
        tolerated = _moved(item.data, moves, custom.taint._asdict() if custom.taint else None)
        out.append(item._replace(source=f"{item.source} (relabelled)", data=moved))
        out.append(item._replace(source=f"{item.source} (relabelled, tolerated)",
                                 data=tolerated))
    return tuple(out)


def _moved(value: Any, moves: dict[str, str], toleration: dict[str, Any] | None) -> Any:
    if isinstance(value, dict):
        out = {moves.get(k, k): _moved(v, moves, toleration) for k, v in value.items()}
        if toleration is not None and isinstance(value.get("containers"), list):
            out["tolerations"] = [*(out.get("tolerations") or []),
                                  {**toleration, "operator": "Equal"}]
        return out
    if isinstance(value, list):
        return [_moved(v, moves, toleration) for v in value]
    return moves.get(value, value) if isinstance(value, str) else value
