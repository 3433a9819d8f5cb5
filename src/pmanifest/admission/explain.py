"""What ``pmanifest explain`` says of a built-in rule in the cluster: exported as a policy
(for which kinds, and what it leaves to lint), or lint only and why. Reads
:mod:`.scope` only: explaining a rule loads no check and no CEL."""

from __future__ import annotations

from pmanifest.catalogue import RuleMeta


def in_the_cluster(meta: RuleMeta) -> str | None:
    """One paragraph, or None for a rule that is not built in (a policy, a plugin)."""
    from pmanifest.admission.scope import (
        EXPORTED_KINDS,
        ROLE_SCOPE,
        ROLE_SCOPED,
        SCOPED,
        applicable,
        lint_only_reason,
    )
    from pmanifest.catalogue import builtin

    catalogue = builtin()
    if meta.id not in catalogue or catalogue[meta.id].source != meta.source:
        return None
    if meta.id not in EXPORTED_KINDS:
        return f"lint only: {lint_only_reason(meta.id, meta.applies)}"
    kinds = ", ".join(c.name for c in applicable(EXPORTED_KINDS[meta.id]))
    text = (f"enforced by `pmanifest export admission` as ValidatingAdmissionPolicy "
            f"pmanifest-{meta.id.lower()}-{meta.slug}, on {kinds} (other kinds: lint only)")
    left = [*([SCOPED[meta.id][1]] if meta.id in SCOPED else []),
            *([ROLE_SCOPE[1]] if meta.id in ROLE_SCOPED else [])]
    if left:
        text += "; left to lint: " + "; ".join(left)
    return text
