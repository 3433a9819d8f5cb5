"""What pmanifest's own lint would say about the rendered objects, as warnings at the spec
line of each workload. The lint engine runs in-process on the rendered text (the same rules,
profile and Kubernetes version; the schema check is off, render has just done it), so render
and lint can never disagree about what needs a word."""

from __future__ import annotations

from pmanifest.document import Finding
from pmanifest.profile import Profile
from pmanifest.spec import Spec

IGNORE_HINT = "pmanifest.io/ignore"


def lint_warnings(rendered: str, spec: Spec, version: str, profile: Profile) -> tuple[str, ...]:
    """One ``file:line:col: warning: ...`` line per lint finding on ``rendered`` (YAML)."""
    from pmanifest.lint import LintOptions, lint_bytes

    options = LintOptions(kubernetes_version=version, profile_name=profile.name,
                          severities={"PM002": "off"})
    findings = lint_bytes(rendered.encode("utf-8"), spec.file, options)
    return tuple(_warning(finding, spec) for finding in findings)


def _warning(finding: Finding, spec: Spec) -> str:
    workload = next((w for w in spec.workloads if w.name == finding.object.name), None)
    pos = spec.positions.at(workload.path if workload is not None else ())
    severity = "" if finding.severity == "warning" else f" (lint: {finding.severity})"
    where = f"the rendered {finding.object.kind} {finding.object.name!r}"
    return (f"{spec.file}:{pos.line}:{pos.column}: warning: {finding.rule}[{finding.slug}]"
            f"{severity} {finding.message} (in {where}); if that is intended, add "
            f"annotations: {{{IGNORE_HINT}: {finding.rule}}} to the workload")
