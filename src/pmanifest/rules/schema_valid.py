"""PM002: the object fails the strict Kubernetes schema of the target version (see
policies/rules-engine.yaml). The validation itself lives in :mod:`pmanifest.schema.kubernetes`."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Hit, ObjectContext, rule


@rule("PM002")
def schema_invalid(ctx: ObjectContext) -> Iterator[Hit]:
    from pmanifest.schema.kubernetes import validate

    for problem in validate(ctx.doc.data, ctx.kubernetes_version):
        yield Hit(problem.path, problem.message)
