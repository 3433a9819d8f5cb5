"""``pmanifest cluster events``: files -> events -> history and sizing -> text/JSON (+ SVG).

Everything is computed before anything is written: the plot goes to its file atomically, then
the report to stdout, so an error leaves neither half-written. Both are targets of the one
writer (``atomic.plan_outputs``): ``--plot -`` is stdout, which the report already takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pmanifest.cluster.checkpoint_math import DOCUMENTED_CHECKPOINT_SECONDS
from pmanifest.cluster.events import DEFAULT_NODE_FIELD, Fields, parse_time, read_source
from pmanifest.errors import ConfigError
from pmanifest.io.reading import Identity
from pmanifest.io.writing import (
    STDOUT,
    Target,
    input_identities,
    plan_outputs,
    write_targets,
)
from pmanifest.kube.profile import DEFAULT_PROFILE, Profile
from pmanifest.lint.config import Config, config_from, resolve_profile

if TYPE_CHECKING:
    from pmanifest.render.spec import WorkloadSpec


@dataclass(frozen=True)
class EventsRequest:
    """A `pmanifest cluster events` run as the command line asked for it."""

    paths: tuple[str, ...]
    output_format: str = "text"  # text | json
    plot: str | None = None
    checkpoint_seconds: float | None = None  # None: the spec's, else 90 s
    nodes: int | None = None  # None: the spec's, else 1
    profile: str | None = None
    since: str | None = None
    until: str | None = None
    node_field: str = DEFAULT_NODE_FIELD
    time_field: str | None = None
    spec: str | None = None  # a pmanifest spec: checkpoint, nodes and profile of a workload
    workload: str | None = None  # which one, when the spec has several preemptible workers
    config: str | None = None  # --config: its custom profiles (None: the nearest config)


REPORT = Target("the report", STDOUT)


def run_events(request: EventsRequest) -> None:
    """Write the plot, if asked for, then the report to stdout."""
    from pmanifest.cluster.history import history, sizing
    from pmanifest.cluster.report import json_text, text

    targets = _check_outputs(request)
    taken, profile = _profile(request)
    since, until = _window(request)
    fields = Fields(request.node_field, request.time_field)
    sources = [read_source(path, fields) for path in request.paths]
    found = history(sources, profile, since, until)
    checkpoint = (request.checkpoint_seconds or (taken.checkpoint if taken else None)
                  or DOCUMENTED_CHECKPOINT_SECONDS)
    nodes = request.nodes or (taken.nodes if taken else 1)
    sized = sizing(found, checkpoint, nodes, profile, taken.origin(request) if taken else None,
                   taken.grace if taken else None, taken.margin if taken else None)
    if request.output_format == "json":
        report = json_text(found, sized)
    else:
        from pmanifest.io.text import terminal_width

        report = text(found, sized, terminal_width())
    texts = {REPORT: report}
    if request.plot is not None:
        from pmanifest.cluster.timeline import svg

        texts = {Target("--plot", request.plot): svg(found), **texts}
    write_targets(texts, targets)


def _check_outputs(request: EventsRequest) -> dict[Identity, str]:
    """Refuse, before reading anything, what the flags cannot mean together; the inputs."""
    if request.paths.count("-") > 1:
        raise ConfigError("- (stdin) can be given only once")
    if request.workload is not None and request.spec is None:
        raise ConfigError("--workload names a workload of --spec: give the spec too")
    inputs = input_identities([*request.paths, *([request.spec] if request.spec else [])])
    plot = [Target("--plot", request.plot)] if request.plot is not None else []
    plan_outputs([REPORT, *plot], inputs)
    return inputs


def _window(request: EventsRequest) -> tuple[datetime | None, datetime | None]:
    since, until = _time(request.since, "--since"), _time(request.until, "--until")
    if since is not None and until is not None and until <= since:
        raise ConfigError(f"--until {request.until} is not after --since {request.since}")
    return since, until


@dataclass(frozen=True)
class FromSpec:
    """What a spec says of the workload whose preemptions are sized."""

    file: str
    workload: str
    checkpoint: float | None  # its checkpoint.expectedSeconds
    nodes: int
    nodes_from: str | None  # the field that gave nodes, None for a one-pod-per-run worker
    profile: str
    grace: int | None = None  # its checkpoint's gracePeriodSeconds and marginSeconds (None:
    margin: int | None = None  # no checkpoint, the profile's cap and the default margin)

    def origin(self, request: EventsRequest) -> str:
        """What the report says the figures are, naming the flags that overrode the spec."""
        if request.checkpoint_seconds is not None:
            cost = "--checkpoint-seconds"
        elif self.checkpoint is not None:
            cost = f"checkpoint.expectedSeconds {self.checkpoint:g}"
        else:
            cost = (f"no checkpoint.expectedSeconds: {DOCUMENTED_CHECKPOINT_SECONDS:g} s, about "
                    "what a checkpoint of a ~10B-parameter model takes")
        if request.nodes is not None:
            nodes = "--nodes"
        elif self.nodes_from is not None:
            nodes = f"{self.nodes_from} {self.nodes}"
        else:
            nodes = "one pod per run"
        return f"{self.file}, workload {self.workload}: {cost}; {nodes}"


def _profile(request: EventsRequest) -> tuple[FromSpec | None, Profile]:
    """The spec's worker (None without --spec) and the profile: --profile, else the spec's,
    else the config's, else the default; a name the config defines is its custom profile."""
    config = config_from(request.config)
    taken = _from_spec(request.spec, request.workload, request.profile,
                       config) if request.spec else None
    named = request.profile or (taken.profile if taken else None)
    return taken, resolve_profile(named or config.profile or DEFAULT_PROFILE, config)


def _from_spec(path: str, name: str | None, profile: str | None, config: Config) -> FromSpec:
    """The preemptible worker of the spec at ``path`` (the one named, or the only one);
    profiles as render resolves them (--profile, cluster.profile, the config's profile:)."""
    from pmanifest.render.engine import read_spec
    from pmanifest.render.spec import load_spec

    def resolve(named: str) -> Profile:
        return resolve_profile(named, config)

    text, file = read_spec(path)
    spec = load_spec(text, file, resolve(profile) if profile else None,
                     resolve(config.profile) if config.profile else None, resolve)
    w = _worker(spec.workloads, name, file)
    expected = w.checkpoint.expected_seconds if w.checkpoint is not None else None
    if w.distributed is not None:
        nodes, nodes_from = w.distributed.max_nodes, "distributed.maxNodes"
    else:
        nodes, nodes_from = 1, None
    ckpt = w.checkpoint
    return FromSpec(file, w.name, None if expected is None else float(expected), nodes,
                    nodes_from, spec.profile.name,
                    None if ckpt is None else ckpt.grace_period_seconds,
                    None if ckpt is None else ckpt.margin_seconds)


def _worker(workloads: tuple[WorkloadSpec, ...], name: str | None, file: str) -> WorkloadSpec:
    from pmanifest.suggest import did_you_mean

    workers = [w for w in workloads if w.compute == "preemptible"]
    if name is not None:
        chosen = [w for w in workloads if w.name == name]
        if not chosen:
            raise ConfigError(f"--workload {name!r}: {file} has no such workload"
                              f"{did_you_mean(name, [w.name for w in workloads])}")
        if chosen[0].compute != "preemptible":
            raise ConfigError(f"--workload {name!r} runs on standard nodes in {file}: it is "
                              "not preempted; name a preemptible worker")
        workers = chosen
    if len(workers) != 1:
        names = ", ".join(w.name for w in workers)
        raise ConfigError(f"{file} has {len(workers)} preemptible workloads"
                          f"{f' ({names})' if names else ''}: "
                          f"{'name one with --workload' if workers else 'nothing to size'}")
    return workers[0]


def _time(value: str | None, flag: str) -> datetime | None:
    if value is None:
        return None
    parsed = parse_time(value)
    if parsed is None:
        raise ConfigError(f"{flag} {value!r}: expected an RFC 3339 time with an offset, "
                          "e.g. 2025-03-04T18:00:00Z")
    return parsed
