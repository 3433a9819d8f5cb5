"""Command-line wiring only: parse flags, call a command, map errors to exit codes.

Exit codes: 0 clean, 1 findings at or above --fail-on (lint) or drift (render --check),
2 usage/config/spec/input error (one line on stderr, nothing on stdout), 3 internal error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from pmanifest import __version__
from pmanifest.errors import PmanifestError
from pmanifest.reporters import FORMATS

EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class _Group(click.Group):
    """The one error boundary: user mistakes become one line and exit 2, bugs exit 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PmanifestError as exc:
            message = str(exc) if exc.file else f"pmanifest: {exc}"
            click.echo(message.replace("\n", " "), err=True)
            ctx.exit(EXIT_USAGE)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head); nothing more to say
            ctx.exit(EXIT_FINDINGS)
        except Exception as exc:
            click.echo(
                f"pmanifest: internal error: {type(exc).__name__}: {exc} "
                "(this is a bug in pmanifest; please report it with the input that caused it)",
                err=True,
            )
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pmanifest")
def main() -> None:
    """Preemption-aware Kubernetes manifests for GPU clusters.

    \b
    render   small spec -> Jobs and Deployments that survive preemption
    lint     manifests -> findings (pre-commit, CI gates)
    rules    the rule catalogue; explain RULE: why and how to fix
    policy   test your own declarative policies
    schema   the spec's JSON Schema, for editors

    Exit codes: 0 clean, 1 findings (or drift with render --check), 2 usage, config, spec
    or input error, 3 internal error.
    """


# --- render / schema (spec -> manifests) -------------------------------------------------
# (defined in this section; see pmanifest.render and pmanifest.spec)


@main.command()
@click.option("-f", "--filename", "spec_path", required=True, metavar="FILE|-",
              help="The spec file, or - for stdin.")
@click.option("-o", "--output", "output", default=None, metavar="yaml|json|FILE",
              help="yaml (multi-document) or json (one v1 List) on stdout, or a FILE written "
                   "atomically (format from --format, else .json -> json, otherwise yaml) "
                   "[default: yaml on stdout].")
@click.option("--format", "output_format", type=click.Choice(["yaml", "json"]), default=None,
              help="Output format when -o names a file or with --check.")
@click.option("--check", "check_path", default=None, metavar="RENDERED",
              help="Compare with a committed rendered file: exit 0 if equal, 1 with a unified "
                   "diff if it has drifted.")
@click.option("--kubernetes-version", default=None,
              help="Kubernetes version whose strict schema validates the output; overrides "
                   "cluster.kubernetesVersion [default: 1.31].")
@click.option("--templates", "templates_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="Directory of templates that override the built-in ones "
                                  "by file name.")
@click.option("--profile", default=None,
              help="Provider profile; overrides cluster.profile [default: together].")
def render(spec_path: str, output: str | None, output_format: str | None, check_path: str | None,
           kubernetes_version: str | None, templates_dir: str | None,
           profile: str | None) -> None:
    """Render a spec into Kubernetes manifests on stdout (nothing is printed on error).

    What `pmanifest lint` would flag on the output is warned about on stderr, at the
    workload's line in the spec; the exit code stays 0.
    """
    from pmanifest.render import RenderOptions, read_spec, render_spec
    from pmanifest.render_output import check_drift, destination, write_output

    target, fmt = destination(output, output_format, check_path, spec_path)
    text, name = read_spec(spec_path)
    rendered = render_spec(text, name, RenderOptions(kubernetes_version, templates_dir, fmt,
                                                     profile))
    for warning in rendered.warnings:  # what lint would flag; stdout stays the same
        click.echo(warning.replace("\n", " "), err=True)
    if check_path is not None:
        diff = check_drift(rendered.text, check_path)
        sys.stdout.buffer.write(diff.encode("utf-8"))
        sys.exit(EXIT_FINDINGS if diff else 0)
    write_output(rendered.text, target)


@main.command()
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of the spec."""
    from pmanifest.spec import schema_json

    sys.stdout.buffer.write(schema_json().encode("utf-8"))


# --- lint / rules / explain -----------------------------------------------------------------
# (defined in this section; see pmanifest.lint)


def _colour(choice: str) -> bool:
    import os

    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH... | -")
@click.option("--format", "formats", type=click.Choice(FORMATS), multiple=True,
              help="Output format [default: text]; repeat for several reports in one run, "
                   "each paired in order with an --output.")
@click.option("--output", "outputs", multiple=True, metavar="FILE|-",
              help="Where the format at the same position goes (- or none: stdout, at most "
                   "one); files are written atomically.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding is at or above this severity [default: error].")
@click.option("--kubernetes-version", default=None,
              help="Kubernetes version whose strict schema PM002 uses [default: 1.31].")
@click.option("--profile", default=None, help="Provider profile [default: together].")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: .pmanifest.yaml or [tool.pmanifest] in pyproject.toml,"
                   " searched upwards from the current directory).")
@click.option("--disable", multiple=True, metavar="RULE", help="Disable a rule (id or slug).")
@click.option("--select", multiple=True, metavar="RULE",
              help="Run only these rules (id or slug; repeatable). PM001 (YAML syntax) is "
                   "always reported: a file that does not parse is never passed.")
@click.option("--no-schema", is_flag=True, help="Skip Kubernetes schema validation (PM002).")
@click.option("--stdin-filename", default="<stdin>", show_default=True,
              help="File name to report for input read from stdin.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True,
              help="Colour severities (auto: only on a terminal, not with NO_COLOR).")
@click.option("--policies", "policy_dirs", multiple=True, metavar="DIR",
              help="Directory of your own declarative policies (*.yaml); repeatable.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Lint in N processes (output is identical) [default: the number of CPUs, "
                   "at most 8; small inputs run in one process].")
def lint(
    paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...],
    fail_on: str | None, kubernetes_version: str | None, profile: str | None,
    config_path: str | None, disable: tuple[str, ...], select: tuple[str, ...],
    no_schema: bool, stdin_filename: str,
    color: str, policy_dirs: tuple[str, ...], jobs: int | None,
) -> None:
    """Check manifests for preemption mistakes (files, directories, or - for stdin).

    \b
    Several reports from one pass, e.g. for CI:
      pmanifest lint k8s/ --format sarif --output results.sarif --format text
    """
    from pmanifest.lint_command import LintRequest, pair_outputs, run_lint

    request = LintRequest(paths, pair_outputs(formats, outputs), fail_on, kubernetes_version,
                          profile, config_path, disable, no_schema, stdin_filename,
                          _colour(color), jobs, policy_dirs, select)
    output, messages, exit_code = run_lint(request)
    for message in messages:
        click.echo(message, err=True)
    click.echo(output, nl=False)
    sys.exit(exit_code)


_POLICIES = click.option("--policies", "policy_dirs", multiple=True, metavar="DIR",
                         help="Directory of your own declarative policies (*.yaml); "
                              "repeatable.")
_CONFIG = click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                       help="Config file whose `policies:` to include (default: searched "
                            "upwards from the current directory).")


@main.command()
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@_POLICIES
@_CONFIG
def rules(output_format: str, policy_dirs: tuple[str, ...], config_path: str | None) -> None:
    """List every rule: id, slug, default severity and summary (with your policies)."""
    from pmanifest.catalogue import catalogue
    from pmanifest.lint_command import config_from, user_policies
    from pmanifest.rules import load_plugins

    with user_policies(config_from(config_path), policy_dirs):
        load_plugins()
        metas = list(catalogue().values())
    if output_format == "json":
        import json

        click.echo(json.dumps([{"id": m.id, "slug": m.slug, "severity": m.severity,
                                "summary": m.summary, "kinds": list(m.kinds)} for m in metas],
                              indent=2))
        return
    width = max(len(m.slug) for m in metas)
    for m in metas:
        kinds = f" [kinds: {', '.join(m.kinds)}]" if m.kinds else ""
        click.echo(f"{m.id}  {m.slug:<{width}}  {m.severity:<7}  {m.summary}{kinds}")


@main.command()
@click.argument("rule_name", metavar="RULE")
@_POLICIES
@_CONFIG
def explain(rule_name: str, policy_dirs: tuple[str, ...], config_path: str | None) -> None:
    """What a rule checks, why, how to fix it, with a failing and a passing example."""
    from pmanifest.lint_command import config_from, user_policies
    from pmanifest.rules import lookup, suggest

    with user_policies(config_from(config_path), policy_dirs):
        found = lookup(rule_name)
        if found is None:
            raise PmanifestError(f"unknown rule {rule_name!r}{suggest(rule_name)}; "
                                 "`pmanifest rules` lists them")
    m = found.meta
    click.echo(f"{m.id} {m.slug} ({m.severity})\n\n{m.summary}\n")
    click.echo(f"Applies to:\n  {_applies_to(found.applies, m.kinds, m.id)}\n")
    click.echo(f"Why:\n  {m.rationale}\n\nFix:\n  {m.fix}\n")
    click.echo("Failing example:\n" + _indent(m.example_fail or "(none given)"))
    click.echo("Passing example:\n" + _indent(m.example_pass or "(none given)"), nl=False)


def _applies_to(applies: str, kinds: tuple[str, ...], rule_id: str) -> str:
    if rule_id == "PM001":
        return "every YAML document"
    what = "objects" if applies == "object" else "pod templates"
    if kinds:
        return f"{what} of kind {', '.join(kinds)} (`group/Kind`: that API group only)"
    if applies == "object":
        return "every Kubernetes object"
    return "every pod template: of the core workload kinds (Pod, Job, CronJob, Deployment, " \
           "StatefulSet, ReplicaSet, ReplicationController, DaemonSet, PodTemplate), of the " \
           "custom resources pmanifest knows (KubeRay, JobSet, Kubeflow, LeaderWorkerSet, " \
           "Volcano, Argo, Spark, and those Katib and AppWrapper embed) and found by shape (PM003)"


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.rstrip("\n").split("\n")) + "\n"


# --- policy test ------------------------------------------------------------------------------
# (see pmanifest.policy)


@main.group()
def policy() -> None:
    """Declarative policies: check your own policy packs."""


@policy.command("test")
@click.argument("dirs", nargs=-1, required=True, metavar="DIR...")
def policy_test(dirs: tuple[str, ...]) -> None:
    """Run the tests: of every policy in DIRs.

    Prints PASS/FAIL per test and a summary; exit 1 if any test fails, 2 if a policy file is
    invalid.
    """
    from pmanifest.policy_command import run_policy_tests

    lines, failed = run_policy_tests(dirs)
    for line in lines:
        click.echo(line)
    sys.exit(EXIT_FINDINGS if failed else 0)
