"""The shipped JSON Schemas of JobSet, RayCluster and RayJob: well-formed, strict, delegating
pod and Job templates to the core schemas of the target version, and wording refusals the way
core kinds are worded (path + message)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pmanifest.schema import crd as crd_schema


def pod_template() -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "ghcr.io/acme/trainer:1.4",
                            "command": ["python", "train.py"]}],
        },
    }


JOBSET: dict[str, Any] = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers"]},
        "failurePolicy": {"maxRestarts": 3, "rules": [
            {"name": "rendezvousDisrupted", "action": "RestartJobSetAndIgnoreMaxRestarts",
             "onJobFailureReasons": ["PodFailurePolicy"], "targetReplicatedJobs": ["rendezvous"]},
        ]},
        "replicatedJobs": [
            {"name": "rendezvous", "replicas": 1,
             "template": {"spec": {"backoffLimit": 0, "template": pod_template()}}},
            {"name": "workers", "replicas": 1,
             "template": {"spec": {"completionMode": "Indexed", "completions": 3,
                                   "parallelism": 3, "backoffLimitPerIndex": 2,
                                   "maxFailedIndexes": 1, "template": pod_template()}}},
        ],
    },
}

RAYCLUSTER: dict[str, Any] = {
    "apiVersion": "ray.io/v1", "kind": "RayCluster",
    "metadata": {"name": "tune", "annotations": {"ray.io/overwrite-container-cmd": "true"}},
    "spec": {
        "rayVersion": "2.52.0",
        "gcsFaultToleranceOptions": {
            "redisAddress": "redis:6379",
            "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis", "key": "pw"}}},
        },
        "headGroupSpec": {"rayStartParams": {}, "template": pod_template()},
        "workerGroupSpecs": [{"groupName": "workers", "replicas": 4, "minReplicas": 2,
                              "maxReplicas": 4, "rayStartParams": {}, "template": pod_template()}],
    },
}

RAYJOB: dict[str, Any] = {
    "apiVersion": "ray.io/v1", "kind": "RayJob",
    "metadata": {"name": "tune"},
    "spec": {
        "entrypoint": "python train.py --storage /mnt/shared/ray",
        "shutdownAfterJobFinishes": True,
        "ttlSecondsAfterFinished": 300,
        "submitterPodTemplate": pod_template(),
        "submitterConfig": {"backoffLimit": 2},
        "rayClusterSpec": copy.deepcopy(RAYCLUSTER["spec"]),
    },
}

VALID = {"JobSet": JOBSET, "RayCluster": RAYCLUSTER, "RayJob": RAYJOB}


def problems(obj: dict[str, Any], version: str = "1.31") -> list[tuple[str, str]]:
    found = crd_schema.validate_custom(obj, version)
    return [(".".join(str(p) for p in problem.path), problem.message) for problem in found]


def changed(obj: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with ``path`` set to ``value`` (or deleted when value is ...)."""
    out = copy.deepcopy(obj)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    if value is ...:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


@pytest.mark.parametrize("kind", sorted(VALID))
@pytest.mark.parametrize("version", ["1.26", "1.31", "1.37"])
def test_valid_objects_pass(kind: str, version: str) -> None:
    obj = VALID[kind]
    if version == "1.26" and kind == "JobSet":  # backoffLimitPerIndex: 1.28 and later
        obj = changed(obj, ("spec", "replicatedJobs", 1, "template", "spec",
                            "backoffLimitPerIndex"), ...)
        obj = changed(obj, ("spec", "replicatedJobs", 1, "template", "spec",
                            "maxFailedIndexes"), ...)
    assert problems(obj, version) == []


@pytest.mark.parametrize(("kind", "path", "value", "expected"), [
    ("JobSet", ("spec", "replicatedJob"), [],
     ("spec.replicatedJob",
      "unknown key 'replicatedJob' in spec; did you mean 'replicatedJobs'?")),
    ("JobSet", ("spec", "failurePolicy", "maxRestart"), 3,
     ("spec.failurePolicy.maxRestart",
      "unknown key 'maxRestart' in spec.failurePolicy; did you mean 'maxRestarts'?")),
    ("JobSet", ("spec", "replicatedJobs", 1, "template", "spec", "template", "spec",
                "containers", 0, "imagee"), "x",
     ("spec.replicatedJobs.1.template.spec.template.spec.containers.0.imagee",
      "unknown key 'imagee' in "
      "spec.replicatedJobs[1].template.spec.template.spec.containers[0]; did you mean 'image'?")),
    ("RayCluster", ("spec", "headGroupSpec", "rayStartParam"), {},
     ("spec.headGroupSpec.rayStartParam",
      "unknown key 'rayStartParam' in spec.headGroupSpec; did you mean 'rayStartParams'?")),
    ("RayJob", ("spec", "entryPoint"), "python x.py",
     ("spec.entryPoint",
      "unknown key 'entryPoint' in spec; did you mean 'entrypoint'?")),
    ("RayJob", ("spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec",
                "nodeSelectr"), {},
     ("spec.rayClusterSpec.workerGroupSpecs.0.template.spec.nodeSelectr",
      "unknown key 'nodeSelectr' in spec.rayClusterSpec.workerGroupSpecs[0].template.spec; did "
      "you mean 'nodeSelector'?")),
    ("JobSet", ("spec", "replicatedJobs", 0, "replicas"), "1",
     ("spec.replicatedJobs.0.replicas",
      "spec.replicatedJobs[0].replicas must be an integer, got string; give an integer")),
    ("JobSet", ("spec", "successPolicy", "operator"), "Some",
     ("spec.successPolicy.operator",
      "spec.successPolicy.operator is 'Some', which is not one of All, Any; use one of: All, "
      "Any")),
    ("JobSet", ("spec", "failurePolicy", "rules", 0, "action"), "Ignore",
     ("spec.failurePolicy.rules.0.action",
      "spec.failurePolicy.rules[0].action is 'Ignore', which is not one of FailJobSet, "
      "RestartJobSet, RestartJobSetAndIgnoreMaxRestarts, RestartJob, "
      "RestartJobAndIgnoreMaxRestarts; use one of: FailJobSet, RestartJobSet, "
      "RestartJobSetAndIgnoreMaxRestarts, RestartJob, RestartJobAndIgnoreMaxRestarts")),
    ("RayCluster", ("spec", "workerGroupSpecs", 0, "minReplicas"), -1,
     ("spec.workerGroupSpecs.0.minReplicas",
      "spec.workerGroupSpecs[0].minReplicas must be at least 0, got -1; change the value")),
    ("RayCluster", ("spec", "headGroupSpec", "rayStartParams"), {"num-cpus": 0},
     ("spec.headGroupSpec.rayStartParams.num-cpus",
      "spec.headGroupSpec.rayStartParams.num-cpus must be a string, got integer; quote it to "
      "make it a string")),
    ("RayJob", ("spec", "shutdownAfterJobFinishes"), "yes",
     ("spec.shutdownAfterJobFinishes",
      "spec.shutdownAfterJobFinishes must be a boolean, got string; give a boolean")),
    ("RayJob", ("spec", "rayClusterSpec", "gcsFaultToleranceOptions", "redisAddress"), 6379,
     ("spec.rayClusterSpec.gcsFaultToleranceOptions.redisAddress",
      "spec.rayClusterSpec.gcsFaultToleranceOptions.redisAddress must be a string, got integer; "
      "quote it to make it a string")),
    ("JobSet", ("spec", "replicatedJobs", 0, "template"), ...,
     ("spec.replicatedJobs.0",
      "spec.replicatedJobs[0] is missing 'template'; add it")),
    ("JobSet", ("spec", "failurePolicy", "rules", 0, "name"), ...,
     ("spec.failurePolicy.rules.0",
      "spec.failurePolicy.rules[0] is missing 'name'; add it")),
    ("RayCluster", ("spec", "workerGroupSpecs", 0, "maxReplicas"), ...,
     ("spec.workerGroupSpecs.0",
      "spec.workerGroupSpecs[0] is missing 'maxReplicas'; add it")),
    ("RayCluster", ("spec", "headGroupSpec"), ...,
     ("spec",
      "spec is missing 'headGroupSpec'; add it")),
    ("RayJob", ("spec", "submitterPodTemplate", "spec", "containers", 0, "name"), ...,
     ("spec.submitterPodTemplate.spec.containers.0",
      "spec.submitterPodTemplate.spec.containers[0] is missing 'name'; add it")),
    ("RayJob", ("metadata", "labels"), ["a"],
     ("metadata.labels",
      "metadata.labels must be a mapping, got list; give a mapping")),
])

def test_a_wrong_field_is_refused_with_its_path(
        kind: str, path: tuple[str | int, ...], value: Any, expected: tuple[str, str]) -> None:
    assert problems(changed(VALID[kind], path, value)) == [expected]


def test_job_templates_follow_the_target_version() -> None:
    """The worker Job template is checked by the core schema of the target version:
    backoffLimitPerIndex exists from 1.28 on."""
    where = "spec.replicatedJobs.1.template.spec"
    assert (where + ".backoffLimitPerIndex", "unknown key 'backoffLimitPerIndex' in "
            + where.replace(".1.", "[1].") + "; did you mean 'backoffLimit'?") in \
        problems(JOBSET, "1.27")
    assert problems(JOBSET, "1.28") == []


def _objects(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _objects(value, f"{path}/{n}")


@pytest.mark.parametrize("file", sorted(crd_schema.CRD_SCHEMAS.values()))
def test_schemas_are_well_formed_and_strict(file: str) -> None:
    schema = crd_schema.load_schema(file)
    Draft202012Validator.check_schema(schema)
    loose = [path for path, node in _objects(schema)
             if "properties" in node and node.get("additionalProperties") is not False]
    assert loose == []  # every object with known properties refuses unknown ones


def test_every_kind_is_registered() -> None:
    assert crd_schema.is_custom_kind("ray.io/v1", "RayJob")
    assert not crd_schema.is_custom_kind("batch/v1", "Job")
    assert not crd_schema.is_custom_kind("ray.io/v1alpha1", "RayCluster")
