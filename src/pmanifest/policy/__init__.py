"""Declarative policies: checks written as data (a JSON Schema the target must satisfy).

A policy file holds one or more YAML documents, each a policy::

    id: ACME001                      # user ids must not start with PM (reserved for built-ins)
    slug: gpu-job-priority-class
    severity: error                  # error | warning | info
    summary: ...                     # one line, for `pmanifest rules`
    rationale: ...                   # why, for `pmanifest explain` and SARIF
    fix: ...                         # how
    match:                           # all optional; every given filter must match
      kinds: [Job, CronJob]
      roles: [worker]                # worker | coordinator | serving | daemon
      placement: preemptible         # preemptible (can run there) | standard (cannot) | any
      labelSelector: {matchLabels: {team: ml}, matchExpressions: [{key: tier, operator: In,
                                                                   values: [gpu]}]}
      namespaces: [ml]               # objects without metadata.namespace never match
    target: podSpec                  # object | podSpec | jobSpec | containers (init too)
    schema: {required: [priorityClassName]}
    message: "{path} is {value!r}"   # optional; str.format with the names in MESSAGE_NAMES
    tests:                           # optional; run by `pmanifest policy test`
      - name: missing priority class
        manifest: |
          ...
        findings: ["5:3 gpu-job-priority-class"]   # "line:col slug", in order
        profile: gke                 # optional

Every jsonschema violation is one finding, at the failing field: the error's path (relative to
the target) mapped through the document's position table; a ``required`` error points at the
object missing the key, an ``additionalProperties`` error at each extra key. A subschema may
carry ``errorMessage`` (a template, or a mapping of keyword -> template) that overrides the
policy's ``message`` for violations of that subschema.

Profile placeholders: a string in the schema written ``"{profile.gracePeriodCap}"`` (alone)
becomes the active profile's value with its type (an integer here), and placeholders inside a
longer string are replaced by their text. Known: ``PROFILE_NAMES``. The schema is built and
compiled once per (policy, profile). Validation runs a compiled yes/no check first (most
objects pass), and asks jsonschema for the errors only when it says no.

May import ``rules`` (to register), ``catalogue``, ``kube``, ``schema``, ``loader`` and ``io``.
"""

from __future__ import annotations

from pmanifest.policy.load import load_policy_dirs, load_policy_text, policy_files
from pmanifest.policy.messages import format_message, template_problem
from pmanifest.policy.model import Match, Policy, PolicyTest

__all__ = ["Match", "Policy", "PolicyTest", "format_message", "load_policy_dirs",
           "load_policy_text", "policy_files", "template_problem"]
