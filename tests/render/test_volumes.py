"""Extra volumes: rendered into the pod's volumes and the main container's volumeMounts after
the shared volume, defaults' first; schema-valid on every version and clean under lint."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pmanifest.cli.main import main
from pmanifest.render.engine import RenderOptions, render_text
from pmanifest.schema.kubernetes import supported_versions, validate
from tests.hypothesis_profiles import examples

SPEC = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
defaults:
  volumes:
    - {name: dshm, mountPath: /dev/shm, emptyDir: {medium: Memory, sizeLimit: 64Gi}}
workloads:
  - name: train
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    volumes:
      - {name: datasets, mountPath: /data/, claimName: datasets, readOnly: true}
      - {name: settings, mountPath: /etc/train, configMap: train-settings, subPath: conf.d}
      - {name: token, mountPath: /var/run/token, secret: hf-token, readOnly: false}
      - {name: scratch, mountPath: /scratch, emptyDir: {}}
    checkpoint:
      command: [python, ckpt.py]
      trigger: sigterm
      dir: /mnt/shared/ckpt
  - name: api
    role: serving
    image: ghcr.io/acme/api:1
    command: [serve]
    ports: [8000]
"""


def _render(text: str, version: str | None = None) -> str:
    return render_text(text, "s.yaml", RenderOptions(kubernetes_version=version))


def _pods(text: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o["spec"]["template"]["spec"]
            for o in yaml.safe_load_all(_render(text)) if "template" in o["spec"]}


def test_volumes_and_mounts_in_order() -> None:
    train = _pods(SPEC)["train"]
    assert train["volumes"] == [
        {"name": "shared", "persistentVolumeClaim": {"claimName": "shared-fs"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
        {"name": "datasets", "persistentVolumeClaim": {"claimName": "datasets"}},
        {"name": "settings", "configMap": {"name": "train-settings"}},
        {"name": "token", "secret": {"secretName": "hf-token"}},
        {"name": "scratch", "emptyDir": {}},
    ]
    assert train["containers"][0]["volumeMounts"] == [
        {"name": "shared", "mountPath": "/mnt/shared"},
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "datasets", "mountPath": "/data", "readOnly": True},
        {"name": "settings", "mountPath": "/etc/train", "subPath": "conf.d"},
        {"name": "token", "mountPath": "/var/run/token"},
        {"name": "scratch", "mountPath": "/scratch"},
    ]


def test_defaults_reach_every_workload() -> None:
    api = _pods(SPEC)["api"]
    assert [v["name"] for v in api["volumes"]] == ["shared", "dshm"]
    assert [m["mountPath"] for m in api["containers"][0]["volumeMounts"]] == [
        "/mnt/shared", "/dev/shm"]


def test_volumes_without_a_shared_volume() -> None:
    spec = textwrap.dedent("""\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
            volumes: [{name: dshm, mountPath: /dev/shm, emptyDir: {medium: Memory}}]
        """)
    train = _pods(spec)["train"]
    assert train["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    assert train["containers"][0]["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]


@pytest.mark.parametrize("version", [v for v in supported_versions() if v >= "1.26"])
def test_schema_valid_on_every_version(version: str) -> None:
    for obj in yaml.safe_load_all(_render(SPEC, version)):
        assert validate(obj, version) == [], obj["kind"]


@pytest.mark.parametrize("spec", [
    SPEC,
    # a volume mounted above the shared volume: the checkpoint is still on the shared one
    SPEC.replace("mountPath: /scratch,", "mountPath: /mnt,"),
], ids=["all-sources", "parent-of-shared"])
def test_round_trip_lints_clean(spec: str) -> None:
    linted = CliRunner().invoke(main, ["lint", "--fail-on", "info", "-"], input=_render(spec))
    assert (linted.exit_code, linted.stdout) == (0, "")
    assert linted.stderr.startswith("0 errors, 0 warnings, 0 info in 1 file (")  # the summary


_SUB_PATH = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(
    lambda s: not s.startswith("/") and ".." not in s.split("/"))


@settings(max_examples=examples(60), deadline=None)
@given(sub_path=_SUB_PATH, output=st.sampled_from(["yaml", "json"]))
def test_hostile_sub_path_arrives_unchanged(sub_path: str, output: str) -> None:
    spec = {"apiVersion": "pmanifest/v1", "workloads": [{
        "name": "train", "image": "x", "command": ["run"],
        "volumes": [{"name": "data", "mountPath": "/data", "claimName": "d",
                     "subPath": sub_path}]}]}
    # JSON (ASCII escapes): PyYAML writes 0E0 or Y unquoted, which a spec (read as kubectl
    # reads YAML) takes for a number or a boolean; a raw NEL would fold (test_hostile_strings)
    text = render_text(json.dumps(spec), "p.yaml",
                       RenderOptions(output=output))
    [job] = (json.loads(text)["items"] if output == "json"
             else list(yaml.safe_load_all(text)))
    pod = job["spec"]["template"]["spec"]
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "data", "mountPath": "/data", "subPath": sub_path}]
    assert pod["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]
