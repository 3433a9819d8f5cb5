"""``pmanifest render``: the config and the flags -> a checked render -> stdout, a file, or a
drift check.

render reads the same config as lint (``.pmanifest.yaml`` or ``[tool.pmanifest]``, found by
walking up from the current directory, or ``--config``), so a repository configured for a
provider renders what its own lint gate passes. Field by field, the flags beat the spec's
``cluster:`` fields, which beat the config, which beats the defaults: profile (``--profile``,
``cluster.profile``, ``profile:``), Kubernetes version (``--kubernetes-version``,
``cluster.kubernetesVersion``, ``kubernetesVersion:``) and templates (``--templates``,
``templates:``; a spec names none). The lint of the output (render's warnings) honours the
config's rule levels, roles and suppression setting, as ``pmanifest lint`` would.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.cli.boundary import EXIT_FINDINGS, settled
from pmanifest.errors import PmanifestError
from pmanifest.io.writing import say, write_bytes

if TYPE_CHECKING:
    from pmanifest.cluster.request import ClusterRequest
    from pmanifest.kube.profile import Profile


class RenderRequest(NamedTuple):
    """A render as the command line asked for it."""

    spec_path: str
    output_format: str | None = None
    output_file: str | None = None
    check_path: str | None = None
    kubernetes_version: str | None = None
    templates_dir: str | None = None
    profile: str | None = None
    cluster_path: str | None = None
    distributed_output: str | None = None
    config_path: str | None = None


def run_render(request: RenderRequest) -> None:
    """Render, print the warnings on stderr, then write the output (or the drift check's
    diff, exiting 1 on drift). PmanifestError for everything exit 2 is about."""
    from pmanifest.cli.render_warnings import LintSettings, render_checked
    from pmanifest.lint.config import config_from, resolve_profile
    from pmanifest.render.engine import Fallback, RenderOptions, read_spec
    from pmanifest.render.output import check_drift, destination, write_output

    settled()  # (what render works with is loaded)
    config = config_from(request.config_path)
    templates = request.templates_dir or config.templates
    inputs = [request.spec_path, *([request.cluster_path] if request.cluster_path else []),
              *([config.source] if config.source else [])]
    target, fmt = destination(request.output_file, request.output_format, request.check_path,
                              tuple(inputs), templates)
    cluster = _cluster(request.cluster_path, request.spec_path)
    text, name = read_spec(request.spec_path)

    def resolve(profile: str) -> Profile:  # a spec's cluster.profile, as lint resolves one
        return resolve_profile(profile, config)

    fallback = Fallback(resolve(config.profile) if config.profile else None,
                        config.kubernetes_version, resolve)
    options = RenderOptions(request.kubernetes_version, templates, fmt, None,
                            request.distributed_output, fallback)
    profile = resolve(request.profile) if request.profile else None
    settings = LintSettings(config.rules, config.roles, config.inline_suppressions)
    rendered = render_checked(text, name, options, cluster, profile, settings)
    for warning in rendered.warnings:  # what lint would flag; stdout stays the same
        say(warning)
    if request.check_path is not None:
        diff = check_drift(rendered.text, request.check_path)
        write_bytes(diff.encode("utf-8"))
        sys.exit(EXIT_FINDINGS if diff else 0)
    write_output(rendered.text, target)


def _cluster(path: str | None, other_input: str) -> ClusterRequest | None:
    """The ClusterRequest of --cluster, read before any work (None without the flag)."""
    if path is None:
        return None
    if path == "-" and other_input == "-":
        raise PmanifestError("--cluster - and another input cannot both read stdin")
    from pmanifest.cluster.request import read_request

    return read_request(path)
