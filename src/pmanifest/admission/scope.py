"""What the policies judge and what they leave to lint, as data: the kinds covered (with the
API resource the API server names each by), the rules exported and the reasons the others are
lint only. Light on purpose: ``pmanifest explain`` reads it without loading any check.

Covered: every kind of :mod:`pmanifest.kube.kinds` whose pod templates all sit at fixed
paths with a fixed role (the core workloads; SparkApplication, KServe, Knative Serving,
Sandbox, KAITO Workspace). Kinds whose templates sit in lists or maps (KubeRay worker groups,
JobSet, Kubeflow, Volcano, Argo, LeaderWorkerSet), whose role follows a template's name, or
that are merged into pods the object does not show (runtimes, overrides) are left to lint:
:func:`not_covered` says why.
"""

from __future__ import annotations

from typing import NamedTuple

from pmanifest.kube.kinds import BUILTIN, KINDS, Kind
from pmanifest.kube.podtemplates import parse

# (group of the table, kind) -> (API group, resource); apiVersions are left open ("*")
RESOURCES: dict[tuple[str, str], tuple[str, str]] = {
    (BUILTIN, "Pod"): ("", "pods"),
    (BUILTIN, "Job"): ("batch", "jobs"),
    (BUILTIN, "CronJob"): ("batch", "cronjobs"),
    (BUILTIN, "Deployment"): ("apps", "deployments"),
    (BUILTIN, "ReplicaSet"): ("apps", "replicasets"),
    (BUILTIN, "ReplicationController"): ("", "replicationcontrollers"),
    (BUILTIN, "StatefulSet"): ("apps", "statefulsets"),
    (BUILTIN, "DaemonSet"): ("apps", "daemonsets"),
    (BUILTIN, "PodTemplate"): ("", "podtemplates"),
    ("sparkoperator.k8s.io", "SparkApplication"): ("sparkoperator.k8s.io", "sparkapplications"),
    ("sparkoperator.k8s.io", "ScheduledSparkApplication"):
        ("sparkoperator.k8s.io", "scheduledsparkapplications"),
    ("agents.x-k8s.io", "Sandbox"): ("agents.x-k8s.io", "sandboxes"),
    ("extensions.agents.x-k8s.io", "SandboxTemplate"):
        ("extensions.agents.x-k8s.io", "sandboxtemplates"),
    ("kaito.sh", "Workspace"): ("kaito.sh", "workspaces"),
    ("serving.kserve.io", "InferenceService"): ("serving.kserve.io", "inferenceservices"),
    ("serving.kserve.io", "LLMInferenceService"): ("serving.kserve.io", "llminferenceservices"),
    ("serving.knative.dev", "Service"): ("serving.knative.dev", "services"),
}
TEMPLATE_ROLES = ("worker", "coordinator", "serving", "daemon")


class Covered(NamedTuple):
    """A kind the policies judge: its table entry and its API resource."""

    kind: Kind
    api_group: str
    resource: str

    @property
    def name(self) -> str:
        """``Kind`` for core kinds, ``group/Kind`` for the others."""
        return self.kind.kind if not self.api_group or "." not in self.api_group \
            else f"{self.api_group}/{self.kind.kind}"


def _why_not(kind: Kind) -> str | None:
    """Why the policies cannot read this kind as lint does, or None when they can."""
    if kind.embedded:
        return "holds whole objects inside it"
    for template in kind.templates:
        parts = parse(template.path)
        if "[*]" in parts or "*" in parts:
            return "keeps pod templates in lists or maps"
        if template.role not in TEMPLATE_ROLES or template.named:
            return "a template's role follows its name or its set"
        if template.partial:
            return "is merged into pods the object does not show"
        if template.requires or template.if_present or template.if_absent \
                or template.fault_tolerant_if or template.meta_also:
            return "its templates depend on the rest of the object"
    if (kind.group, kind.kind) not in RESOURCES:
        return "its API resource is not known here"
    return None


def covered() -> tuple[Covered, ...]:
    out = []
    for kind in KINDS:
        if _why_not(kind) is None:
            group, resource = RESOURCES[(kind.group, kind.kind)]
            out.append(Covered(kind, group, resource))
    return tuple(out)


def not_covered() -> dict[str, str]:
    """``group/Kind`` -> why lint alone reads it."""
    return {f"{k.group}/{k.kind}": why for k in KINDS if (why := _why_not(k)) is not None}


def applicable(rule_kinds: tuple[str, ...]) -> tuple[Covered, ...]:
    """The covered kinds a rule with ``kinds`` (``Kind`` or ``group/Kind``) reads."""
    return tuple(c for c in covered()
                 if not rule_kinds or kind_matches(rule_kinds, c.api_group, c.kind.kind))



def kind_matches(kinds: tuple[str, ...], group: str, kind: str) -> bool:
    """Does ``Kind`` or ``group/Kind`` in ``kinds`` name this kind (as
    :func:`pmanifest.kube.workloads.kind_matches`; a test keeps them equal)?"""
    for entry in kinds:
        want_group, slash, want_kind = entry.rpartition("/")
        if want_kind == kind and (not slash or want_group == group):
            return True
    return False


# the rules the policies enforce: id -> the catalogue's kinds (() = every covered kind)
EXPORTED_KINDS: dict[str, tuple[str, ...]] = {
    "PM101": (), "PM102": (), "PM103": (), "PM104": (), "PM201": (),
    "PM401": ("batch/Job", "batch/CronJob"), "PM402": ("batch/Job", "batch/CronJob"),
    "PM403": ("batch/Job", "batch/CronJob"),
}
# what a policy leaves to lint through a match condition: id -> (condition name, objects)
SCOPED: dict[str, tuple[str, str]] = {
    "PM201": ("pm201-decidable-without-a-shell-parser",
              "serving and coordinator pods that run a command and name no checkpoint "
              "directory (whether they checkpoint is in their script)"),
}
# what the placement rules leave to lint: templates whose role lint reads from what the pod
# runs (a StatefulSet without volumeClaimTemplates, a database image or a declared role)
ROLE_SCOPE = ("pm-role-decidable-without-reading-what-the-pod-runs",
              "StatefulSets with no volumeClaimTemplates, no database image and no declared "
              "role (lint reads their role from what their pods run)")
ROLE_SCOPED = ("PM101", "PM102", "PM103", "PM201")
LINT_ONLY: dict[str, str] = {
    "PM001": "YAML syntax: the API server parses what it admits itself",
    "PM002": "schema validation: the API server validates every object itself",
    "PM003": "about what lint could read (a pod template found by shape)",
    "PM004": "about what lint could read (a kind it does not know)",
    "PM005": "about lint's own suppressions (comments never reach the cluster)",
    "PM006": "shell analysis of a container's script",
    "PM007": "about kustomize patch files, which never reach the cluster",
    "PM106": "the QoS class sums the quantities of every container, which a policy would "
             "have to parse and add up in CEL; not exported yet",
    "PM105": "near misses are weighed by edit distance and difflib, which CEL cannot compute",
    "PM202": "shell analysis: whether a TERM trap or a preStop hook checkpoints",
    "PM203": "shell analysis of preStop hooks",
    "PM301": "shell analysis of TERM traps and preStop hooks",
    "PM302": "shell analysis of TERM traps",
    "PM303": "shell analysis of TERM traps",
    "PM304": "shell analysis of TERM traps",
    "PM305": "shell analysis of TERM handlers",
    "PM306": "checkpoint paths come from TERM traps and preStop hooks (shell analysis) and are "
             "normalised as paths",
    "PM404": "its kinds (JobSet, trainer runtimes) keep pod templates in lists",
    "PM405": "its kinds (Volcano) keep pod templates in lists",
}
LINT_ONLY_APPLIES = {"cluster": "needs the cluster request (`pmanifest cluster check`)",
                     "input": "needs every workload of a run and the cluster request "
                              "(`lint --cluster`)"}


def lint_only_reason(rule_id: str, applies: str) -> str:
    return LINT_ONLY_APPLIES.get(applies) or LINT_ONLY.get(rule_id, "not exported")
