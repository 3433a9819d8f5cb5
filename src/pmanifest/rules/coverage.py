"""Rules: what pmanifest could read (see policies/rules-coverage.yaml).

PM003 names each pod template of an unknown kind that was analysed by shape, with the role
inferred from what it runs (:mod:`pmanifest.kube.roles`) or unknown; PM004 names each custom
resource that was not analysed at all (``pmanifest lint`` reports it once per kind per run;
``lint_bytes`` once per object).
"""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.kube.contract import ROLE_LABEL, ROLES, UNKNOWN_ROLE
from pmanifest.kube.workloads import unread
from pmanifest.loader.positions import dotted
from pmanifest.rules import Hit, ObjectContext, rule

DECLARE = f"`{ROLE_LABEL}: {'|'.join(ROLES)}`"


@rule("PM003")
def generic_workload(ctx: ObjectContext) -> Iterator[Hit]:
    for w in ctx.workloads:
        if not w.generic or w.declared:
            continue
        yield Hit(w.pod_path, f"{w.kind} ({ctx.doc.api_version}) is not a kind pmanifest knows; "
                  f"the pod template at {dotted(w.pod_path)} was found by its shape and "
                  f"{_assumed(w.role, w.inferred)}; declare its role with the label or "
                  f"annotation {DECLARE} on the template or the object, or for the kind in the "
                  f"config (`roles: {{{w.group}/{w.kind}: "
                  f"{w.role if w.role in ROLES else '|'.join(ROLES)}}}`)")


def _assumed(role: str, why: str) -> str:
    if role == UNKNOWN_ROLE:
        return (f"its role is unknown ({why}): only the rules that hold for every role "
                "checked it")
    return f"is checked with the role {role}, assumed because {why}"


@rule("PM004")
def unread_kind(ctx: ObjectContext) -> Iterator[Hit]:
    if not unread(ctx.doc, ctx.workloads):
        return
    yield Hit(("kind",),
              f"{ctx.doc.kind} ({ctx.doc.api_version}) is a custom resource pmanifest cannot "
              "read: it knows no pod template of this kind and found none by shape, so no rule "
              "checked it; if its operator runs pods, lint the pods' own manifests or a "
              "rendered copy of them", value=True)
