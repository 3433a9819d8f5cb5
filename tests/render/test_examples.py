"""Every example renders: snapshot, determinism, stdin == file, schema-valid objects."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion

from pmanifest.cli.main import main
from pmanifest.schema.crd import is_custom_kind, validate_custom
from pmanifest.schema.kubernetes import SchemaProblem, supported_versions, validate
from tests.stderr import render_stderr

from .conftest import EXAMPLES, ROOT

REQUIRED_EXAMPLES = {"finetune-sigterm.yaml", "eval-sweep-prestop.yaml", "serving.yaml",
                     "serving-vllm.yaml", "distributed-torchrun.yaml",
                     "distributed-jobset.yaml", "distributed-ray.yaml",
                     "distributed-raycluster.yaml"}
PER_INDEX_SINCE = "1.29"  # backoffLimitPerIndex: alpha (off) in 1.28, beta from 1.29


def problems(obj: dict[str, Any], version: str) -> list[SchemaProblem]:
    """Core kinds against the Kubernetes schemas, JobSet and Ray against pmanifest's own."""
    if is_custom_kind(obj["apiVersion"], obj["kind"]):
        return validate_custom(obj, version)
    return validate(obj, version)


def _render(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["render", *args], input=stdin)
    return result.exit_code, result.stdout, render_stderr(result.stderr)


def test_required_examples_exist() -> None:
    assert {p.name for p in EXAMPLES} >= REQUIRED_EXAMPLES


def test_snapshot(example: Path, snapshot: SnapshotAssertion) -> None:
    code, out, err = _render("-f", os.path.relpath(example, ROOT))
    assert (code, err) == (0, "")
    assert out == snapshot


def test_deterministic_and_stdin_identical(example: Path) -> None:
    first = _render("-f", str(example))
    second = _render("-f", str(example))
    piped = _render("-f", "-", stdin=example.read_bytes())
    assert first[0] == 0
    assert first == second == piped


def test_json_list_has_the_same_objects(example: Path) -> None:
    code, out, _ = _render("-f", str(example), "-o", "json")
    assert code == 0
    listing = json.loads(out)
    assert set(listing) == {"apiVersion", "kind", "items"}
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    _, text, _ = _render("-f", str(example))
    assert listing["items"] == list(yaml.safe_load_all(text))


def test_objects_are_schema_valid(example: Path) -> None:
    version = (yaml.safe_load(example.read_text()).get("cluster") or {}).get(
        "kubernetesVersion", "1.31")
    _, text, _ = _render("-f", str(example))
    objects = list(yaml.safe_load_all(text))
    assert objects
    for obj in objects:
        assert problems(obj, version) == [], obj["kind"]


def _version(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@pytest.mark.parametrize("version", [v for v in supported_versions() if _version(v) >= (1, 26)])
def test_every_supported_version(example: Path, version: str) -> None:
    code, text, err = _render("-f", str(example), "--kubernetes-version", version)
    if "backoffLimitPerIndex" in example.read_text() and _version(version) < (1, 29):
        why = ("backoffLimitPerIndex is alpha in Kubernetes 1.28, off by default, and the API "
               "server drops a disabled field without a word" if version == "1.28" else
               f"the Job schema of Kubernetes {version} has no backoffLimitPerIndex")
        line = next(n for n, text in enumerate(example.read_text().splitlines(), 1)
                    if text.strip().startswith("backoffLimitPerIndex:"))
        assert (code, text, err) == (2, "", f"{example}:{line}:5: {why}; set "
                                     "cluster.kubernetesVersion or --kubernetes-version to "
                                     f"{PER_INDEX_SINCE} or later, or remove "
                                     "backoffLimitPerIndex\n")
        return
    assert (code, err) == (0, "")
    for obj in yaml.safe_load_all(text):
        assert problems(obj, version) == []
        if obj["kind"] == "Job":
            has_policy = "podReplacementPolicy" in obj["spec"]
            assert has_policy == (_version(version) >= (1, 29))


def test_kind_order_and_labels() -> None:
    _, text, _ = _render("-f", str(ROOT / "examples" / "distributed-torchrun.yaml"))
    objects = list(yaml.safe_load_all(text))
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Service", "trainer"), ("Service", "trainer-rendezvous"),
        ("Deployment", "trainer-rendezvous"), ("Job", "trainer")]
    for obj in objects:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "pmanifest"
        assert labels["app.kubernetes.io/name"] == obj["metadata"]["name"]
        assert labels["pmanifest.io/role"] in ("coordinator", "worker")
        if "template" in obj["spec"]:
            assert obj["spec"]["template"]["metadata"]["labels"] == labels
    assert objects[1]["spec"]["selector"] == {"app.kubernetes.io/name": "trainer-rendezvous"}
