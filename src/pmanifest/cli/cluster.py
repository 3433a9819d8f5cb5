"""Command-line wiring of ``pmanifest cluster``: cluster request checks, preemption history
and checkpoint sizing. Registered on the main group by :mod:`pmanifest.cli.main`."""

from __future__ import annotations

import sys
from typing import Any

import click

from pmanifest.cli.boundary import Group
from pmanifest.io.writing import echo, say
from pmanifest.lint.progress import colour_wanted
from pmanifest.reporters import FORMATS


class _Seconds(click.FloatRange):
    """A duration in seconds: a finite number (``nan`` and ``inf`` parse as floats, and a
    range lets NaN through: no comparison with it is false)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


@click.group(cls=Group)
def cluster() -> None:
    """The cluster side: request checks, preemption history and checkpoint sizing."""


@cluster.command("check")
@click.argument("paths", nargs=-1, required=True, metavar="FILE... | -")
@click.option("--format", "formats", type=click.Choice(FORMATS), multiple=True,
              help="Output format [default: text]; repeat for several reports, each paired in "
                   "order with an --output.")
@click.option("--output", "outputs", multiple=True, metavar="FILE|-",
              help="Where the format at the same position goes (- or none: stdout).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error",
              show_default=True, help="Exit 1 when a finding is at or above this severity.")
@click.option("--as", "kind", type=click.Choice(["create", "update", "read"]), default=None,
              help="What each file is [default: a command line says; a body with cluster_id, "
                   "status or *_preemptible_gpus echoes is a read, one with name, region, "
                   "gpu_type or billing_type a create, anything else an update].")
@click.option("--disable", multiple=True, metavar="RULE", help="Disable a rule (id or slug).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True, help="Colour severities (auto: only on a terminal).")
def cluster_check(paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...],
                  fail_on: str, kind: str | None, disable: tuple[str, ...], color: str) -> None:
    """Check cluster requests: create/update bodies (JSON or YAML), saved `tg beta clusters`
    command lines, or the JSON of a cluster read (rules PM501-PM505).
    """
    from pmanifest.cli.check import CheckRequest, run_check
    from pmanifest.cli.outputs import pair_outputs

    output, messages, exit_code = run_check(CheckRequest(
        paths, pair_outputs(formats, outputs), fail_on, kind, disable, colour_wanted(color)))
    echo(output, nl=False)
    for message in messages:
        say(message)
    sys.exit(exit_code)


@cluster.command("events")
@click.argument("paths", nargs=-1, required=True, metavar="FILE... | -")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--plot", "plot_path", default=None, metavar="FILE",
              help="Also write an SVG timeline of the events, one row per node (atomically).")
@click.option("--checkpoint-seconds", type=_Seconds(min=0, min_open=True),
              default=None, metavar="SECONDS",
              help="How long one checkpoint takes [default: the spec's "
                   "checkpoint.expectedSeconds, else 90, about what a checkpoint of a "
                   "~10B-parameter model takes].")
@click.option("--spec", "spec_path", default=None, metavar="FILE",
              help="A pmanifest spec: its preemptible worker gives the checkpoint duration, "
                   "the nodes and the profile (the flags override each).")
@click.option("--workload", default=None, metavar="NAME",
              help="The spec's workload to size, when it has several preemptible ones.")
@click.option("--nodes", type=click.IntRange(min=1), default=None,
              help="Preemptible nodes the job spans: losing any one interrupts it "
                   "[default: the spec's distributed.maxNodes, else 1].")
@click.option("--profile", default=None,
              help="Provider profile (built in, or one of the config's profiles:) whose grace "
                   "period cap, less the supervisor's margin, a checkpoint at the notice must "
                   "fit [default: the spec's cluster.profile, else the config's, else "
                   "together].")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file, for its profile: and profiles: (default: .pmanifest.yaml or "
                   "[tool.pmanifest] in pyproject.toml, searched upwards).")
@click.option("--since", default=None, metavar="TIME",
              help="Start of the observation window (RFC 3339) [default: the first event].")
@click.option("--until", default=None, metavar="TIME",
              help="End of the observation window, e.g. when the read was saved (RFC 3339) "
                   "[default: the last event].")
@click.option("--node-field", default="node_name", show_default=True, metavar="NAME",
              help="Field of a node_lifecycle_events entry that names the node (the API "
                   "reference does not document it).")
@click.option("--time-field", default=None, metavar="NAME",
              help="Field of a node_lifecycle_events entry that holds its time, RFC 3339 or "
                   "Unix seconds [default: the one field holding RFC 3339 times].")
def cluster_events(
    paths: tuple[str, ...], output_format: str, plot_path: str | None,
    checkpoint_seconds: float | None, spec_path: str | None, workload: str | None,
    nodes: int | None, profile: str | None, config_path: str | None, since: str | None,
    until: str | None, node_field: str, time_field: str | None,
) -> None:
    """Preemption history from saved cluster reads or `kubectl get events -o json`.

    Reads the preemption notices of Together, Karpenter, GKE and AKS; every other event is
    counted in the report, and node events it does not know are listed, never dropped.

    Prints preemptions per node and overall, the observed window, the mean time between
    preemptions per node, and the checkpoint interval that minimises lost work for a job on
    --nodes preemptible nodes (Daly's, Young's beside it), the GPU time it loses and whether the
    checkpoint fits the drain window. Several files are merged (one event per node and
    reason, as the API keeps them). With --spec, the checkpoint duration, the nodes and the
    profile come from the spec's preemptible worker.
    """
    from pmanifest.cli.events import EventsRequest, run_events

    run_events(EventsRequest(paths, output_format, plot_path, checkpoint_seconds, nodes,
                             profile, since, until, node_field, time_field, spec_path, workload,
                             config_path))
