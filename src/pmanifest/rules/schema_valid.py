"""PM002: the object fails the strict Kubernetes schema of the target version (see
policies/rules-engine.yaml). The validation itself lives in :mod:`pmanifest.schema.kubernetes`."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Hit, ObjectContext, rule


@rule("PM002")
def schema_invalid(ctx: ObjectContext) -> Iterator[Hit]:
    from pmanifest.schema.kubernetes import validate

    data = ctx.doc.data
    if ctx.built is not None:  # a kustomization fills in fields: validate what it builds
        from pmanifest.kube.kustomized import as_built

        data = as_built(data, ctx.built)
    for problem in validate(data, ctx.kubernetes_version):
        yield Hit(problem.path, problem.message)
