"""Command-line wiring only: parse flags, call a command; ``boundary`` maps errors to exit
codes (0 clean, 1 findings or drift, 2 usage/config/spec/input error, 3 internal error).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from pmanifest.cli.boundary import EXIT_FINDINGS, Boundary, show_version
from pmanifest.cli.cluster import cluster
from pmanifest.errors import PmanifestError
from pmanifest.io.terminal import shown, shown_lines
from pmanifest.io.writing import echo, say, write_bytes
from pmanifest.kube.contract import DAEMON_ROLE
from pmanifest.lint.progress import colour_wanted
from pmanifest.render.output import complete_format, output_format
from pmanifest.reporters import FORMATS

if TYPE_CHECKING:
    from pmanifest.catalogue import RuleMeta


@click.group(cls=Boundary, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=show_version, help="Show the version and exit.")
def main() -> None:
    """Preemption-aware Kubernetes manifests for GPU clusters.

    \b
    render   small spec -> Jobs and Deployments that survive preemption
    lint     manifests -> findings (pre-commit, CI gates)
    rules    the rule catalogue; explain RULE: why and how to fix
    policy   test your own declarative policies
    schema   the spec's JSON Schema, for editors
    cluster  check a cluster request; preemption history and checkpoint sizing

    Exit codes: 0 clean, 1 findings (or drift with render --check), 2 usage, config, spec
    or input error, 3 internal error; 130, 141, 143: ended by Ctrl-C, by the reader of
    stdout going away (| head), by SIGTERM.
    """


# --- render / schema (spec -> manifests) -------------------------------------------------
# (defined in this section; see pmanifest.render and pmanifest.render.spec)


@main.command()
@click.option("-f", "--filename", "spec_path", required=True, metavar="FILE|-",
              help="The spec file, or - for stdin.")
@click.option("-o", "--output", "output_format", default=None, metavar="yaml|json",
              callback=output_format, shell_complete=complete_format,
              help="yaml (multi-document) or json (one v1 List) [default: yaml, or json for an "
                   "--output-file ending in .json].")
@click.option("-O", "--output-file", "output_file", default=None, metavar="FILE",
              help="Write the manifests to FILE, atomically, instead of stdout.")
@click.option("--check", "check_path", default=None, metavar="RENDERED",
              help="Compare with a committed rendered file: exit 0 if equal, 1 with a unified "
                   "diff if it has drifted.")
@click.option("--kubernetes-version", default=None,
              help="Kubernetes version whose strict schema validates the output; overrides "
                   "cluster.kubernetesVersion [default: the config's, else 1.31].")
@click.option("--templates", "templates_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="Directory of templates that override the built-in ones "
                                  "by file name [default: the config's templates:].")
@click.option("--profile", default=None,
              help="Provider profile, built in or from the config's profiles:; overrides "
                   "cluster.profile [default: the config's profile:, else together].")
@click.option("--cluster", "cluster_path", default=None, metavar="FILE",
              help="A cluster request, saved `tg beta clusters` command line or cluster read: "
                   "refuse workloads that cannot fit its standard GPUs, warn (stderr) about "
                   "preemptible shortfalls.")
@click.option("--distributed-output", type=click.Choice(["job", "jobset", "rayjob", "raycluster"]),
              default=None, help="What distributed workers render as; overrides "
                                 "distributed.output (job|jobset for torchrun, rayjob|raycluster "
                                 "for ray).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file, the one lint reads (default: .pmanifest.yaml or "
                   "[tool.pmanifest] in pyproject.toml, searched upwards from the current "
                   "directory): its profile, kubernetesVersion and templates apply where the "
                   "flags and the spec's cluster: say nothing.")
def render(spec_path: str, output_format: str | None, output_file: str | None,
           check_path: str | None, kubernetes_version: str | None, templates_dir: str | None,
           profile: str | None, cluster_path: str | None,
           distributed_output: str | None, config_path: str | None) -> None:
    """Render a spec into Kubernetes manifests on stdout (nothing is printed on error).

    What `pmanifest lint` would flag on the output is warned about on stderr, at the
    workload's line in the spec; the exit code stays 0. With --cluster, what cannot fit the
    cluster's standard GPUs is refused (exit 2) and preemptible shortfalls are warned about.
    Flags beat the spec's cluster: fields, which beat the config, which beats the defaults.
    """
    from pmanifest.cli.render_run import RenderRequest, run_render

    run_render(RenderRequest(spec_path, output_format, output_file, check_path,
                             kubernetes_version, templates_dir, profile, cluster_path,
                             distributed_output, config_path))


@main.command()
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of the spec."""
    from pmanifest.render.spec import schema_json

    write_bytes(schema_json().encode("utf-8"))


# --- lint / rules / explain -----------------------------------------------------------------
# (defined in this section; see pmanifest.lint.engine)


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
@click.option("--profile", default=None, help="Provider profile, built in or from the config's "
              "profiles: [default: the config's profile:, else together].")
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
              help="Lint in N processes (output is identical), at most twice the number of "
                   "CPUs and one per 32 inputs [default: the number of CPUs, at most 8; small "
                   "inputs run in one process]")
@click.option("--cluster", "cluster_path", default=None, metavar="FILE",
              help="A cluster request, saved `tg beta clusters` command line or cluster read: "
                   "also check that the workloads of the whole run fit it (PM510-PM514).")
@click.option("--allow-empty", is_flag=True,
              help="Exit 0 when no Kubernetes object is found (by default that is an error, "
                   "exit 2: a gate that checked nothing must not pass).")
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Skip paths matching GLOB (relative to the current directory; repeatable), "
                   "as the config's exclude: patterns do.")
@click.option("--force-exclude/--no-force-exclude", default=True,
              help="Apply the exclude patterns (config and --exclude) to files named on the "
                   "command line too, as pre-commit names them [default: --force-exclude].")
@click.option("--gitignore/--no-gitignore", default=True,
              help="Skip what git ignores (.gitignore, .git/info/exclude) when walking a "
                   "directory [default: --gitignore].")
@click.option("--baseline", "baseline", default=None, metavar="FILE",
              help="Report only findings this baseline does not hold, and what it holds that "
                   "matches nothing any more [default: the config's baseline:].")
@click.option("--no-baseline", is_flag=True, help="Report every finding, whatever the config's "
                                                  "baseline: holds.")
@click.option("--write-baseline", "write_baseline", default=None, metavar="FILE",
              help="Record today's findings in FILE (by rule, file, object and path, not by "
                   "line) and exit 0; lint with --baseline FILE then fails only on new ones.")
@click.option("--fix", is_flag=True, help="Write every safe fix into its file (only the "
                                          "edited bytes change), then report what is left.")
@click.option("--diff", is_flag=True, help="Print the diff --fix would make, write nothing; "
                                           "exit 1 when there is one.")
def lint(
    paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...],
    fail_on: str | None, kubernetes_version: str | None, profile: str | None,
    config_path: str | None, disable: tuple[str, ...], select: tuple[str, ...],
    no_schema: bool, stdin_filename: str,
    color: str, policy_dirs: tuple[str, ...], jobs: int | None, cluster_path: str | None,
    allow_empty: bool, exclude: tuple[str, ...], force_exclude: bool, gitignore: bool,
    baseline: str | None, no_baseline: bool, write_baseline: str | None, fix: bool,
    diff: bool,
) -> None:
    """Check manifests for preemption mistakes (files, directories, or - for stdin).

    \b
    Several reports from one pass, e.g. for CI:
      pmanifest lint k8s/ --format sarif --output results.sarif --format text
    """
    from pmanifest.cli.lint import LintRequest, run_lint
    from pmanifest.cli.outputs import pair_outputs
    from pmanifest.lint.progress import wanted

    if cluster_path == "-" and "-" in paths:
        raise PmanifestError("--cluster - and another input cannot both read stdin")
    colour = colour_wanted(color)
    request = LintRequest(paths, pair_outputs(formats, outputs), fail_on, kubernetes_version,
                          profile, config_path, disable, no_schema, stdin_filename,
                          colour, jobs, policy_dirs, select, cluster_path,
                          allow_empty=allow_empty, force_exclude=force_exclude,
                          exclude=exclude, gitignore=gitignore, baseline=baseline,
                          write_baseline=write_baseline, no_baseline=no_baseline,
                          fix="diff" if diff else "write" if fix else None,
                          progress=sys.stderr if wanted(sys.stderr) else None)
    if request.fix is not None:
        from pmanifest.cli.fix import run_fixes

        result = run_fixes(request)
    else:
        result = run_lint(request)
    for warning in result.warnings:
        say(warning)
    echo(result.stdout, nl=False, color=colour or None)  # the findings, then the summary
    for line in (result.summary, *result.notes):
        say(line)  # each its own line, escaped
    sys.exit(result.exit_code)


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

    with _runtime_rules(config_path, policy_dirs):
        metas = list(catalogue().values())
    if output_format == "json":
        import json

        echo(json.dumps([{"id": m.id, "slug": m.slug, "severity": m.severity,
                          "summary": m.summary, "kinds": list(m.kinds)} for m in metas],
                        indent=2))
        return
    width = max(len(m.slug) for m in metas)
    echo("".join(shown(f"{m.id}  {m.slug:<{width}}  {m.severity:<7}  {m.summary}"
                       f"{_kinds(m.kinds)}") + "\n" for m in metas), nl=False)


@contextlib.contextmanager
def _runtime_rules(config_path: str | None, policy_dirs: tuple[str, ...]) -> Iterator[None]:
    """The catalogue with the rules that join at run time: installed plugins and user
    policies (config `policies:`, --policies). Their code, and so the built-in checks, is
    loaded only when there are any; otherwise the catalogue alone answers."""
    from pmanifest.catalogue import plugins_declared
    from pmanifest.lint.config import config_from

    config = config_from(config_path)
    if not (config.policies or policy_dirs or plugins_declared()):
        yield
        return
    from pmanifest.cli.lint import user_policies
    from pmanifest.rules import load_plugins

    load_plugins()
    with user_policies(config, policy_dirs):
        yield


def _kinds(kinds: tuple[str, ...]) -> str:
    return f" [kinds: {', '.join(kinds)}]" if kinds else ""


@main.command()
@click.argument("rule_name", metavar="RULE")
@_POLICIES
@_CONFIG
def explain(rule_name: str, policy_dirs: tuple[str, ...], config_path: str | None) -> None:
    """What a rule checks, why, how to fix it, with a failing and a passing example."""
    from pmanifest.catalogue import lookup, suggest

    with _runtime_rules(config_path, policy_dirs):
        m = lookup(rule_name)
        if m is None:
            raise PmanifestError(f"unknown rule {rule_name!r}{suggest(rule_name)}; "
                                 "`pmanifest rules` lists them")
    cluster = ("Cluster (--cluster) both examples are checked against:\n"
               + _indent(m.example_cluster)) if m.example_cluster else ""
    from pmanifest.admission.explain import in_the_cluster
    from pmanifest.lint.config import config_from, profiles_note

    enforced = in_the_cluster(m)
    from pmanifest.io.text import terminal_width, wrap

    width = terminal_width()  # prose is wrapped to it; the examples are manifests, left as is

    def prose(title: str, text: str) -> str:
        return f"{title}:\n{wrap(text, width, '  ')}\n\n"

    # a user policy's text is input: through the one escaper, its lines kept
    echo(shown_lines(f"{m.id} {m.slug} ({m.severity})\n\n{wrap(m.summary, width)}\n\n"
                     + prose("Applies to", _applies_to(m)) + (prose("Profile", profiles_note(
                         config_from(config_path))) if m.applies in ("workload", "object") else "")
                     + (prose("In the cluster", enforced) if enforced else "")
                     + prose("Why", m.rationale) + prose("Fix", m.fix)
                     + "Failing example:\n" + _indent(m.example_fail or "(none given)") + "\n"
                     "Passing example:\n" + _indent(m.example_pass or "(none given)")
                     + cluster), nl=False)


_ENGINE_APPLIES = {
    "PM001": "every YAML document",
    "PM005": "every `# pmanifest:` comment and pmanifest.io/ignore annotation",
    "PM007": "every Kubernetes object (a patch fragment is reported instead of linted)",
}
_CORE_KINDS = ("Pod", "Job", "CronJob", "Deployment", "StatefulSet", "ReplicaSet",
               "ReplicationController", "DaemonSet", "PodTemplate")


def _applies_to(m: RuleMeta) -> str:
    if m.id in _ENGINE_APPLIES:
        return _ENGINE_APPLIES[m.id]
    if m.applies == "cluster":
        return "cluster requests and reads (`pmanifest cluster check`)"
    if m.applies == "input":
        return "the GPU demand of every workload of a run, with `lint --cluster FILE` (or " \
               "`render --cluster FILE`)"
    daemons = not m.roles or DAEMON_ROLE in m.roles
    roles = _roles(m.roles, daemons)
    what = "objects" if m.applies == "object" else "pod templates"
    if m.kinds:
        return f"{what}{roles} of kind {', '.join(m.kinds)} (`group/Kind`: that API group only)"
    if m.applies == "object":
        return "every Kubernetes object"
    core = ", ".join(k for k in _CORE_KINDS if daemons or k != "DaemonSet")
    return f"every pod template{roles}: of the core workload kinds ({core}), of the " \
           "custom resources pmanifest knows (KubeRay, JobSet, Kubeflow, LeaderWorkerSet, " \
           "Volcano, Argo, Spark, and those Katib and AppWrapper embed) and found by shape (PM003)"


def _roles(roles: tuple[str, ...], daemons: bool) -> str:
    """`` of role worker or serving (not DaemonSets, ...)``, or nothing for every role."""
    if not roles:
        return ""
    named = [r for r in roles if r != DAEMON_ROLE]
    said = f" of role {', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else \
        f" of role {named[0]}" if named else " of role daemon"
    return said + ("" if daemons else " (not DaemonSets, whose pods have the role daemon)")


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
    from pmanifest.cli.policy import run_policy_tests

    lines, failed = run_policy_tests(dirs)
    echo("".join(shown(line) + "\n" for line in lines), nl=False)
    sys.exit(EXIT_FINDINGS if failed else 0)


main.add_command(cluster)  # pmanifest.cli.cluster: the capacity side of the contract


@main.group()
def export() -> None:
    """Export the rules for other engines (see pmanifest.admission)."""


@export.command("admission")
@click.option("--profile", default=None, help="Provider profile, built in or from the config's "
              "profiles: [default: the config's profile:, else together].")
@_CONFIG
@click.option("--action", type=click.Choice(["Warn", "Audit", "Deny"]), default="Warn",
              show_default=True, help="What the bindings do with a violation.")
def export_admission(profile: str | None, config_path: str | None, action: str) -> None:
    """The rules as ValidatingAdmissionPolicies and bindings (YAML, for kubectl apply -f -)."""
    from pmanifest.admission.command import export_admission as run

    echo(run(profile, config_path, action), nl=False)
