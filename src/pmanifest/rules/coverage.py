"""Rules: what pmanifest could read (see policies/rules-coverage.yaml).

PM003 names each pod template of an unknown kind that was analysed by shape with an assumed
role; PM004 names each custom resource that was not analysed at all (``pmanifest lint``
reports it once per kind per run; ``lint_bytes`` once per object).
"""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.kube.contract import ROLE_LABEL, ROLES
from pmanifest.kube.workloads import unread
from pmanifest.loader.positions import dotted
from pmanifest.rules import Hit, ObjectContext, rule

DECLARE = f"`{ROLE_LABEL}: {'|'.join(ROLES)}`"


@rule("PM003")
def generic_workload(ctx: ObjectContext) -> Iterator[Hit]:
    for w in ctx.workloads:
        if not w.generic or w.declared:
            continue
        yield Hit(w.pod_path,
                  f"{w.kind} ({ctx.doc.api_version}) is not a kind pmanifest knows; the pod "
                  f"template at {dotted(w.pod_path)} was found by its shape and is checked as a "
                  f"generic workload with the role {w.role} (assumed); declare its role with the "
                  f"label or annotation {DECLARE} on the template or the object, or for the "
                  f"kind in the config (`roles: {{{w.group}/{w.kind}: {w.role}}}`)")


@rule("PM004")
def unread_kind(ctx: ObjectContext) -> Iterator[Hit]:
    if not unread(ctx.doc, ctx.workloads):
        return
    yield Hit(("kind",),
              f"{ctx.doc.kind} ({ctx.doc.api_version}) is a custom resource pmanifest cannot "
              "read: it knows no pod template of this kind and found none by shape, so no rule "
              "checked it; if its operator runs pods, lint the pods' own manifests or a "
              "rendered copy of them", value=True)
