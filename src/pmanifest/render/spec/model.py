"""The validated spec: constants of the spec format and the frozen model ``load_spec``
returns (render reads only this)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pmanifest.errors import SpecError
from pmanifest.kube.contract import ROLE_LABEL, SUPERVISOR_MARGIN_SECONDS
from pmanifest.kube.profile import DEFAULT_PROFILE, Profile, get_profile
from pmanifest.loader.positions import Path, Positions
from pmanifest.render.spec.runtime import EnvRef, Runtime

API_VERSION = "pmanifest/v1"
COMPUTE = ("preemptible", "standard")
TRIGGERS = ("sigterm", "preStop")
MODES = ("signal", "command")  # checkpoint.mode, for trigger: sigterm
DEFAULT_MARGIN_SECONDS = SUPERVISOR_MARGIN_SECONDS  # checkpoint.marginSeconds
DEFAULT_PROFILE_DATA = get_profile(DEFAULT_PROFILE)  # for the defaults the schema documents
DEFAULT_GRACE_SECONDS = DEFAULT_PROFILE_DATA.grace_period_cap  # the active profile's window
DEFAULT_BACKOFF_LIMIT = 3
DEFAULT_REPLICAS = {"serving": 2, "coordinator": 1}
DEFAULT_MAX_RESTARTS = 10  # torchrun --max-restarts of a distributed worker
DEFAULT_RDZV_PORT = 29400
DEFAULT_JOIN_TIMEOUT = 600  # torch's default: how long a rendezvous may wait for minNodes
DEFAULT_LAST_CALL_TIMEOUT = 30  # torch's default: wait for more nodes once minNodes joined
DEFAULT_JOBSET_RESTARTS = 3
MIN_JOB_VERSION = (1, 26)  # podFailurePolicy is on by default from 1.26 (beta), GA in 1.31

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
RESERVED_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/managed-by", ROLE_LABEL)
SHARED_VOLUME_NAME = "shared"  # the pod volume of cluster.sharedVolume
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# spec key of each volume source -> what it mounts (for messages)
VOLUME_SOURCES = {"claimName": "a PersistentVolumeClaim", "configMap": "a ConfigMap",
                  "secret": "a Secret", "emptyDir": "an emptyDir"}


class SharedVolume(NamedTuple):
    """The cluster's persistent shared volume: its claim and mount path."""

    claim_name: str
    mount_path: str


class Volume(NamedTuple):
    """An extra volume: ``source`` is its spec key (claimName, configMap, secret, emptyDir)
    and ``value`` that key's value (an object name, or the emptyDir mapping)."""

    name: str
    mount_path: str
    source: str
    value: str | dict[str, str | int]
    read_only: bool = False
    sub_path: str | None = None


class Checkpoint(NamedTuple):
    """``command`` is empty in signal mode; ``mode`` is None with trigger preStop."""

    command: tuple[str, ...]
    trigger: str
    grace_period_seconds: int
    dir: str | None
    mode: str | None = "command"
    margin_seconds: int = DEFAULT_MARGIN_SECONDS
    expected_seconds: int | None = None


class GcsFaultTolerance(NamedTuple):
    """KubeRay's GCS fault tolerance settings (an external Redis)."""

    redis_address: str
    password_secret: tuple[str, str] | None  # (name, key)
    external_storage_namespace: str | None


class Distributed(NamedTuple):
    """A distributed worker's shape: framework, output, nodes, restarts."""

    framework: str
    output: str
    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    program: tuple[str, ...]  # torchrun: what follows its flags; ray: the entrypoint argv
    max_restarts: int = DEFAULT_MAX_RESTARTS
    rdzv_port: int = DEFAULT_RDZV_PORT
    join_timeout_seconds: int = DEFAULT_JOIN_TIMEOUT
    last_call_timeout_seconds: int = DEFAULT_LAST_CALL_TIMEOUT
    jobset_max_restarts: int = DEFAULT_JOBSET_RESTARTS
    ray_version: str | None = None
    gcs: GcsFaultTolerance | None = None


class Spread(NamedTuple):
    """How a serving Deployment's replicas spread: one topologySpreadConstraint."""

    topology_key: str
    when_unsatisfiable: str
    max_skew: int


class Overlay(NamedTuple):
    """A ``podTemplate`` of the spec (in defaults or on a workload): a partial pod template
    merged over the one render makes, as written, with its place in the spec."""

    path: Path  # of the podTemplate key
    data: dict[str, Any]  # {metadata: {labels, annotations}, spec: {...}}


class WorkloadSpec(NamedTuple):
    """One workload of the spec, validated, with its source position."""

    number: int  # its index in the spec's workloads
    name: str
    role: str
    compute: str
    image: str
    command: tuple[str, ...] | None
    args: tuple[str, ...]
    env: dict[str, str | EnvRef]  # in order: defaults' first, then the workload's
    gpus: int
    parallelism: int | None
    completions: int | None
    replicas: int
    ports: tuple[int, ...]
    checkpoint: Checkpoint | None
    namespace: str | None
    labels: dict[str, str]
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, Any], ...]
    service_account_name: str | None
    resources: dict[str, dict[str, str | int]]
    backoff_limit: int | None  # None: no global limit (backoffLimitPerIndex alone)
    volumes: tuple[Volume, ...] = ()
    active_deadline_seconds: int | None = None
    distributed: Distributed | None = None
    runtime: Runtime = Runtime()  # env sources, probes, rollout, ...
    qos: str | None = None  # "Guaranteed": limits equal to requests (None: as given)
    spread: Spread | None = None  # serving: across nodes by default with 2+ replicas
    overlays: tuple[Overlay, ...] = ()  # defaults' podTemplate first, then the workload's

    @property
    def path(self) -> Path:
        return ("workloads", self.number)

    @property
    def main_argv(self) -> tuple[str, ...] | None:
        if self.command is None:
            return None
        return self.command + self.args


class Spec(NamedTuple):
    """A validated spec: the cluster settings and its workloads."""

    file: str
    kubernetes_version: str | None
    shared_volume: SharedVolume | None
    workloads: tuple[WorkloadSpec, ...]
    positions: Positions
    profile: Profile = DEFAULT_PROFILE_DATA

    def error(self, path: Path, message: str, *, value: bool = True) -> SpecError:
        """A SpecError at ``path`` (its value, or its key with ``value=False``)."""
        return spec_error(self.file, self.positions, path, message, value=value)


def spec_error(file: str, positions: Positions, path: Path, message: str, *,
           value: bool = True) -> SpecError:
    pos = positions.value_at(path) if value else positions.at(path)
    return SpecError(message, file, pos.line, pos.column)

