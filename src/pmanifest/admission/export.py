"""The policies and bindings of ``pmanifest export admission``, and their YAML stream.

One ValidatingAdmissionPolicy per exported rule, named after it and annotated with its id,
plus one binding each with the chosen action (Warn by default: a first install breaks
nobody). The stream opens with a comment saying what is judged and what stays with lint.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pmanifest import __version__
from pmanifest.admission import cel
from pmanifest.admission.kinds import templates
from pmanifest.admission.rules import EXPORTED, NAME, Exported, exported_kinds, placed, suppressed
from pmanifest.admission.scope import Covered, covered, lint_only_reason, not_covered
from pmanifest.catalogue import RuleMeta
from pmanifest.kube.profile import Profile

API_VERSION = "admissionregistration.k8s.io/v1"
ACTIONS = ("Warn", "Audit", "Deny")
RULE_ANNOTATION = "pmanifest.io/rule"
OPERATIONS = ["CREATE", "UPDATE"]


class ExportOptions(NamedTuple):
    """What one export bakes in: the profile, the action, the config's roles, rule levels and
    whether suppression annotations are honoured."""

    profile: Profile
    action: str = "Warn"
    roles: tuple[tuple[str, str], ...] = ()
    off: frozenset[str] = frozenset()  # rules the config turns off: not exported
    inline_suppressions: bool = True


def policy_name(meta: RuleMeta) -> str:
    return f"pmanifest-{meta.id.lower()}-{meta.slug}"


def _resource_rules(kinds: tuple[Covered, ...]) -> list[dict[str, Any]]:
    groups: dict[str, list[str]] = {}
    for cov in kinds:
        groups.setdefault(cov.api_group, []).append(cov.resource)
    return [{"apiGroups": [group], "apiVersions": ["*"], "operations": OPERATIONS,
             "resources": resources} for group, resources in groups.items()]


def _owned_by_covered_kind() -> str:
    """The object was made by a controller of a judged kind (a Deployment's ReplicaSet, a
    Job's Pod), which was judged itself."""
    r = cel.fresh("r")
    owners = []
    for cov in covered():
        version = (f"{r}.apiVersion == 'v1'" if not cov.api_group
                   else f"{r}.apiVersion.startsWith({cel.string(cov.api_group + '/')})")
        owners.append(f"{r}.kind == {cel.string(cov.kind.kind)} && {version}")
    return (f"has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists("
            f"{r}, has({r}.controller) && {r}.controller == true && ({cel.any_of(owners)}))")


def policy(meta: RuleMeta, rule: Exported, options: ExportOptions) -> dict[str, Any]:
    cel.restart_names()
    kinds = exported_kinds(rule)
    conditions = [{"name": "not-made-by-a-judged-controller",
                   "expression": f"!({_owned_by_covered_kind()})"}]
    if options.inline_suppressions:
        conditions.insert(0, {"name": "not-suppressed-by-annotation",
                              "expression": f"!({suppressed(meta.id, meta.slug, kinds)})"})
    conditions += [{"name": name, "expression": expression}
                   for name, expression, _ in rule.scope(options.roles)]
    variables = [{"name": "name", "expression": NAME},
                 {"name": "templates", "expression": templates(options.roles)},
                 {"name": "placed", "expression": placed(options.profile)}]
    x = cel.fresh("x")
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": policy_name(meta),
                     "labels": {"app.kubernetes.io/managed-by": "pmanifest"},
                     "annotations": {RULE_ANNOTATION: meta.id,
                                     "pmanifest.io/profile": options.profile.name,
                                     "pmanifest.io/version": __version__}},
        "spec": {
            "failurePolicy": "Ignore",
            "matchConstraints": {"resourceRules": _resource_rules(kinds)},
            "matchConditions": conditions,
            "variables": variables,
            "validations": [{
                "expression": f"!variables.placed.exists({x}, {rule.violates(x)})",
                "messageExpression": rule.message(
                    f"variables.placed.filter({x}, {rule.violates(x)})[0]"),
                "message": f"{meta.id} {meta.slug}: {meta.summary} (pmanifest explain "
                           f"{meta.id})",
                "reason": "Invalid",
            }],
        },
    }


def binding(meta: RuleMeta, action: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy_name(meta),
                     "labels": {"app.kubernetes.io/managed-by": "pmanifest"},
                     "annotations": {RULE_ANNOTATION: meta.id}},
        "spec": {"policyName": policy_name(meta), "validationActions": [action]},
    }


def exported(catalogue: dict[str, RuleMeta], options: ExportOptions) -> list[RuleMeta]:
    """The catalogue entries of the rules exported with these options, in id order."""
    return [catalogue[rule_id] for rule_id in sorted(EXPORTED)
            if rule_id in catalogue and rule_id not in options.off]


def objects(catalogue: dict[str, RuleMeta], options: ExportOptions) -> list[dict[str, Any]]:
    """Policy, binding, policy, binding... for every exported rule."""
    out: list[dict[str, Any]] = []
    for meta in exported(catalogue, options):
        out += [policy(meta, EXPORTED[meta.id], options), binding(meta, options.action)]
    return out


def lint_only(catalogue: dict[str, RuleMeta]) -> dict[str, str]:
    """Rule id -> why lint alone checks it (every built-in rule that is not exported)."""
    out = {}
    for meta in sorted(catalogue.values()):
        if meta.id in EXPORTED:
            continue
        out[meta.id] = lint_only_reason(meta.id, meta.applies)
    return out


def header(catalogue: dict[str, RuleMeta], options: ExportOptions) -> str:
    profile = options.profile
    rules = exported(catalogue, options)
    lines = [
        f"pmanifest {__version__} export admission: {len(rules)} ValidatingAdmissionPolicies "
        f"({', '.join(m.id for m in rules)}) and their bindings (action {options.action})",
        f"profile {profile.name}: preemptible nodes carry {profile.label_key}="
        f"{profile.label_value}, grace-period cap {profile.grace_period_cap} s"
        + (f"; never preemptible: {', '.join(c.key for c in profile.standard_capacity)} (a "
           "ComputeClass is not read here: a pod that selects one can be on Spot)"
           if profile.standard_capacity else ""),
        "judged on CREATE and UPDATE: " + ", ".join(c.name for c in covered()),
        "objects made by a controller of those kinds (a Deployment's ReplicaSets and Pods, a "
        "Job's Pods) are judged through their owner",
        "",
        "lint only (`pmanifest lint`):",
        *(f"  {rule_id} {catalogue[rule_id].slug}: {why}"
          for rule_id, why in lint_only(catalogue).items()),
        *(f"  {rule_id} {catalogue[rule_id].slug}: turned off by the config"
          for rule_id in sorted(options.off) if rule_id in EXPORTED),
        "kinds read by lint only:",
        *(f"  {name}: {why}" for name, why in not_covered().items()),
    ]
    scoped = [(m.id, what) for m in rules for _, _, what in EXPORTED[m.id].scope(options.roles)]
    if scoped:
        lines += ["left to lint by a match condition:",
                  *(f"  {rule_id} on {what}" for rule_id, what in scoped)]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)


def render(catalogue: dict[str, RuleMeta], options: ExportOptions) -> str:
    """The whole YAML stream: the header comment, then every object."""
    from pmanifest.loader.emit import dump_documents

    body = dump_documents(objects(catalogue, options), allow_unicode=False)
    return header(catalogue, options) + body


__all__ = ["ACTIONS", "RULE_ANNOTATION", "ExportOptions", "binding", "header",
           "lint_only", "objects", "policy", "policy_name", "render"]
