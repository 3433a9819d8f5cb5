"""PM002: the object fails the strict Kubernetes schema of the target version (see
policies/rules-engine.yaml). The validation itself lives in :mod:`pmanifest.schema.kubernetes`."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Hit, ObjectContext, rule


@rule("PM002")
def schema_invalid(ctx: ObjectContext) -> Iterator[Hit]:
    from pmanifest.schema.kubernetes import validate

    data = ctx.doc.data
    if ctx.selector_labels:  # a kustomization fills in the selector: validate what it builds
        from pmanifest.kube.kustomized import with_selector_labels

        data = with_selector_labels(data, ctx.selector_labels)
    for problem in validate(data, ctx.kubernetes_version):
        yield Hit(problem.path, problem.message)
