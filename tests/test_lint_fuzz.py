"""The linter never raises: random YAML documents and random mutations of valid manifests."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pmanifest.lint.engine import LintOptions, lint_bytes
from tests.treepaths import all_paths

SEED_MANIFEST: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "annotations": {"pmanifest.io/ignore": "PM302"}},
    "spec": {
        "podFailurePolicy": {"rules": [{"action": "Ignore",
                                        "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 300,
            "nodeSelector": {"together.ai/compute-class": "preemptible"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "gpu", "operator": "In", "values": ["h100"]}]}]}}},
            "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
            "containers": [{
                "name": "main", "image": "trainer",
                "command": ["/bin/sh", "-c"],
                "args": ["trap 'python /app/ckpt.py /mnt/shared/ckpt; exit 143' TERM\n"
                         "python train.py & child=$!\nwait \"$child\"\n"],
                "env": [{"name": "CHECKPOINT_DIR", "value": "/mnt/shared/ckpt"}],
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                "volumeMounts": [{"name": "shared", "mountPath": "/mnt/shared"}],
            }],
            "volumes": [{"name": "shared", "persistentVolumeClaim": {"claimName": "fs"}},
                        {"name": "scratch", "emptyDir": {}}],
        }},
    },
}
KINDS = ["Pod", "Job", "CronJob", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "List"]

_scalar = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False) | st.text(max_size=30))
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)


ALL_PATHS = all_paths(SEED_MANIFEST)


def _lint(data: Any) -> None:
    text = yaml.safe_dump(data, allow_unicode=True)
    for version in ("1.31",):
        lint_bytes(text.encode("utf-8"), "fuzz.yaml", LintOptions(version))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_PATHS), _json, st.sampled_from(KINDS))
@example(path=("spec", "template", "spec", "restartPolicy"), value=[], kind="StatefulSet")
def test_mutated_manifest_never_raises(path: tuple[Any, ...], value: Any, kind: str) -> None:
    data = copy.deepcopy(SEED_MANIFEST)
    data["kind"] = kind
    if not path:
        data = value
    else:
        node: Any = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    _lint(data)
    if isinstance(data, dict):
        _lint({"apiVersion": "v1", "kind": "List", "items": [data, value]})


@settings(max_examples=200, deadline=None)
@given(_json)
def test_random_documents_never_raise(data: Any) -> None:
    _lint(data)
    if isinstance(data, dict):
        _lint({"apiVersion": "apps/v1", "kind": "Deployment", **data})


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda s: s.encode("utf-8")))
def test_random_bytes_never_raise(raw: bytes) -> None:
    lint_bytes(raw, "fuzz.yaml", LintOptions())


_SHELL_TOKENS = ["trap", "'", '"', "TERM", "EXIT", "15", "exec", "exit 0", "&", ";", "&&", "\n",
                 "wait", "$!", "<<EOF", "EOF", "(", ")", "{", "}", "f()", "python", "/home/x",
                 "sleep 5", "`", "$(", "\\", "#", " ", "kill", "-TERM", "--out=/tmp/c"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SHELL_TOKENS), max_size=40).map("".join))
def test_random_shell_scripts_never_raise(script: str) -> None:
    data = copy.deepcopy(SEED_MANIFEST)
    container = data["spec"]["template"]["spec"]["containers"][0]
    container["args"] = [script]
    container["lifecycle"]["preStop"]["exec"]["command"] = ["/bin/sh", "-c", script]
    _lint(data)
