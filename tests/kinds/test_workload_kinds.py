"""The table of workload kinds is consistent, and the finders built on it agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.kube.contract import DAEMON_ROLE, ROLES
from pmanifest.kube.document import Document
from pmanifest.kube.kinds import (
    BY_KIND,
    KINDS,
    LEADER,
    SET,
    coordinator_name,
    lookup,
)
from pmanifest.kube.podtemplates import ANY_ITEM, ANY_KEY, expand, find, parse
from pmanifest.kube.profile import get_profile
from pmanifest.kube.roles import stateful_image
from pmanifest.kube.workloads import annotation_paths, kind_matches, pod_paths, workloads_of
from pmanifest.loader.positions import Positions

CASES = Path(__file__).parent.parent / "rules" / "cases"


def _doc(data: Any) -> Document:
    return Document("t.yaml", 0, data, Positions())


def _sample(pattern: tuple[str, ...]) -> Any:
    """The smallest object in which ``pattern`` matches once: {} at the end."""
    if not pattern:
        return {}
    head, rest = pattern[0], pattern[1:]
    if head == ANY_ITEM:
        return [_sample(rest)]
    return {"Master" if head == ANY_KEY else head: _sample(rest)}


def test_the_table_is_consistent() -> None:
    names = sum(1 + len(kind.former_groups) for kind in KINDS)  # a former group names it too
    assert len(BY_KIND) == names, "a kind is listed twice"
    for kind in KINDS:
        assert kind.templates or kind.embedded, kind.kind
        assert kind.set_role in ROLES
        for template in kind.templates:
            assert template.role in (*ROLES, DAEMON_ROLE, SET, LEADER), template
            pattern = parse(template.path)
            if template.set is not None:
                assert pattern[:len(parse(template.set))] == parse(template.set), template
            matches = list(expand(_sample(pattern), pattern))
            assert len(matches) == 1, template.path
            if template.job:
                assert pattern[-2:] == ("template", "spec"), template.path


@pytest.mark.parametrize(("group", "kind", "found"), [
    ("apps", "Deployment", "Deployment"),
    ("extensions", "Deployment", "Deployment"),  # any built-in group
    ("batch.volcano.sh", "Job", "Job"),
    ("batch", "Job", "Job"),
    ("example.com", "Job", None),  # a custom Job is not batch/v1's
    ("sparkoperator.k8s.io", "SparkApplication", "SparkApplication"),
])
def test_lookup_by_group_and_kind(group: str, kind: str, found: str | None) -> None:
    entry = lookup(group, kind)
    assert (entry.kind if entry else None) == found
    if entry is not None and group == "batch.volcano.sh":
        assert entry.group == "batch.volcano.sh"


@pytest.mark.parametrize(("name", "coordinator"), [
    ("leader", True), ("rj-leader", True), ("Master", True), ("PS", True), ("mpimaster", True),
    ("driver", True), ("launcher", True), ("Chief", True), ("workers", False),
    ("trainer-node", False), ("mpiworker", False), ("default-nginx", False),
    ("masterless", False),
])
def test_coordinator_names(name: str, coordinator: bool) -> None:
    assert coordinator_name(name) is coordinator


@pytest.mark.parametrize(("image", "stateful"), [
    ("postgres:16", True), ("docker.io/library/postgres", True),
    ("registry:5000/team/redis:7@sha256:abc", True), ("bitnami/postgresql:16", True),
    ("redis/redis-stack-server:7.4.0", True), ("quay.io/coreos/etcd:v3.5.15", True),
    ("confluentinc/cp-zookeeper", True), ("zookeeper:3.9", True), ("apache/kafka:3.8.0", True),
    ("danielqsj/kafka-exporter:v1.8.0", False), ("prometheuscommunity/postgres-exporter", False),
    ("nginx:1.27", False), ("ghcr.io/acme/redis-client:1", False), ("mongo:7", True),
    ("minio/minio", True), ("rabbitmq:3-management", True),
    ("confluentinc/cp-kafka-rest:7.7.0", False),
    # any version words, in the name itself or after it
    ("quay.io/sclorg/mysql-80-c9s:latest", True), ("registry.redhat.io/rhel9/postgresql-16", True),
    ("redis7", True), ("bitnami/mongodb:7.0", True), ("quay.io/minio/minio:RELEASE.2024", True),
    ("bitnami/redis-sentinel:7.2", True), ("mongodb/mongodb-community-server:7.0-ubi8", True),
    ("quay.io/sclorg/postgresql-15-c9s", True), ("postgres16-exporter", False),
    ("redis-operator", False), ("mysqld-exporter", False), ("etcd-backup-v2", False),
    ("chrislusf/seaweedfs:4.00", True), ("qdrant/qdrant:v1.12.1", True),
    ("milvusdb/milvus:v2.4.0", True), ("semitechnologies/weaviate:1.26", True),
])
def test_stateful_images_are_matched_by_whole_name(image: str, stateful: bool) -> None:
    assert stateful_image(image) is stateful


def test_shape_needs_a_pod_holding_key() -> None:
    allowlist = {"apiVersion": "auto.gke.io/v1", "kind": "WorkloadAllowlist",
                 "matchingCriteria": {"containers": [{"name": "a", "image": "b"}]}}
    assert list(find(allowlist)) == []
    pod_like = {"apiVersion": "example.com/v1", "kind": "Thing",
                "spec": {"worker": {"podSpec": {"containers": [{"image": "b"}]}}}}
    assert [f.pod_path for f in find(pod_like)] == [("spec", "worker", "podSpec")]


def test_kind_matching() -> None:
    assert kind_matches(("batch/Job",), "batch", "Job")
    assert not kind_matches(("batch/Job",), "batch.volcano.sh", "Job")
    assert kind_matches(("Job",), "batch.volcano.sh", "Job")
    assert not kind_matches(("JobSet",), "batch", "Job")


def _manifests() -> list[Any]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            try:
                docs = list(yaml.safe_load_all(case["manifest"]))
            except yaml.YAMLError:
                continue  # PM001's cases
            out.extend(d for d in docs if isinstance(d, dict))
    return out


def test_pod_paths_agree_with_workloads_on_every_case_manifest() -> None:
    """Suppressions read templates through pod_paths and annotation_paths: they must see
    every template a rule sees (a TrainJob patch that is not judged is the only extra)."""
    profile = get_profile("together")
    seen = 0
    for data in _manifests():
        doc = _doc(data)
        judged = {w.pod_path for w in workloads_of(doc, profile)}
        found = set(pod_paths(doc))
        assert judged <= found
        assert all(f.template.partial for f in find(data) if f.pod_path not in judged)
        metas = set(annotation_paths(doc))
        assert all(w.meta_path in metas for w in workloads_of(doc, profile))
        # the engine reads the templates once and hands them to both: the same answers
        templates = tuple(find(data))
        assert workloads_of(doc, profile, (), templates) == workloads_of(doc, profile)
        assert annotation_paths(doc, templates) == annotation_paths(doc)
        seen += len(judged)
    assert seen > 80
