"""What pmanifest's own lint would say about the rendered objects, as warnings at the spec
line of each workload. The lint engine runs in-process on the rendered text (the same rules,
profile and Kubernetes version; the schema check is off, render has just done it), so render
and lint can never disagree about what needs a word. Render itself knows nothing of lint:
the two features are composed here, by the command line."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.cli.boundary import settled
from pmanifest.kube.document import Finding
from pmanifest.kube.profile import Profile
from pmanifest.render.engine import Rendered, RenderOptions, render_spec
from pmanifest.render.spec import Spec

if TYPE_CHECKING:
    from pmanifest.cluster.request import ClusterRequest

IGNORE_HINT = "pmanifest.io/ignore"


class Checked(NamedTuple):
    """A render with everything the command line says about it on stderr."""

    rendered: Rendered
    warnings: tuple[str, ...]  # ``spec:line:col: warning: ...``, lint's then the cluster's

    @property
    def text(self) -> str:
        return self.rendered.text


class LintSettings(NamedTuple):
    """What of the config the lint of the output honours, as ``pmanifest lint`` would."""

    severities: Mapping[str, str] = MappingProxyType({})  # rule id -> level or "off"
    roles: tuple[tuple[str, str], ...] = ()  # (Kind or group/Kind, role)
    inline_suppressions: bool = True


def render_checked(text: str, file: str, options: RenderOptions | None = None,
                   cluster: ClusterRequest | None = None, profile: Profile | None = None,
                   settings: LintSettings | None = None) -> Checked:
    """Render one spec (``profile``: the --profile flag's, resolved), then lint the output and
    (with ``cluster``) fit it to the cluster: what cannot fit its standard GPUs is refused
    (SpecError), preemptible shortfalls and lint findings become warnings. The output never
    depends on the warnings."""
    rendered = render_spec(text, file, options, profile)
    fit: tuple[str, ...] = ()
    if cluster is not None:
        from pmanifest.cli.render_fit import check_fit

        fit = check_fit(rendered.spec, rendered.owned, cluster, rendered.spec.profile)
    return Checked(rendered, (*lint_warnings(rendered, settings), *_render_warnings(rendered),
                              *fit))


def _render_warnings(rendered: Rendered) -> tuple[str, ...]:
    """What render knows the output depends on and lint cannot see in it (the torch release
    a rendered variable needs), at the spec's line."""
    from pmanifest.render.elastic import shutdown_warnings

    spec = rendered.spec
    return tuple(f"{spec.file}:{pos.line}:{pos.column}: warning: {message}"
                 for path, message in shutdown_warnings(spec)
                 for pos in (spec.positions.at(path),))


def lint_warnings(rendered: Rendered, settings: LintSettings | None = None
                  ) -> tuple[str, ...]:
    """One ``file:line:col: warning: ...`` line per lint finding on the rendered objects
    (``settings``: the config's, else none)."""
    from pmanifest.lint.engine import LintOptions, lint_bytes

    settled()  # (what render made and the lint engine are loaded)
    settings = settings or LintSettings()
    spec = rendered.spec
    options = LintOptions(kubernetes_version=rendered.version, profile_name=spec.profile.name,
                          resolved=spec.profile,
                          severities={**settings.severities, "PM002": "off"},
                          roles=settings.roles,
                          inline_suppressions=settings.inline_suppressions)
    findings = lint_bytes(rendered.yaml.encode("utf-8"), spec.file, options)
    return tuple(_warning(finding, spec) for finding in findings)


def _warning(finding: Finding, spec: Spec) -> str:
    workload = next((w for w in spec.workloads if w.name == finding.object.name), None)
    pos = spec.positions.at(workload.path if workload is not None else ())
    severity = "" if finding.severity == "warning" else f" (lint: {finding.severity})"
    where = f"the rendered {finding.object.kind} {finding.object.name!r}"
    return (f"{spec.file}:{pos.line}:{pos.column}: warning: {finding.rule}[{finding.slug}]"
            f"{severity} {finding.message} (in {where}); if that is intended, add "
            f"annotations: {{{IGNORE_HINT}: {finding.rule}}} to the workload")
