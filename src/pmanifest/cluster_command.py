"""``pmanifest cluster events``: files -> events -> history and sizing -> text/JSON (+ SVG).

Everything is computed before anything is written: the plot goes to its file atomically, then
the report to stdout, so an error leaves neither half-written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pmanifest.atomic import Identity, check_writable, identity, refuse_inputs, write_files
from pmanifest.checkpoint_math import SEED_CHECKPOINT_SECONDS
from pmanifest.cluster_events import DEFAULT_NODE_FIELD, Fields, parse_time, read_source
from pmanifest.errors import ConfigError
from pmanifest.profile import DEFAULT_PROFILE, get_profile


@dataclass(frozen=True)
class EventsRequest:
    paths: tuple[str, ...]
    output_format: str = "text"  # text | json
    plot: str | None = None
    checkpoint_seconds: float | None = None  # None: the seed's 90 s
    nodes: int = 1
    profile: str | None = None
    since: str | None = None
    until: str | None = None
    node_field: str = DEFAULT_NODE_FIELD
    time_field: str | None = None


def run_events(request: EventsRequest) -> str:
    """The report for stdout (the plot, if asked for, is already written)."""
    from pmanifest.events_report import json_text, text
    from pmanifest.preemption_history import history, sizing

    if request.paths.count("-") > 1:
        raise ConfigError("- (stdin) can be given only once")
    if request.plot is not None:
        check_writable(request.plot, "--plot")
        refuse_inputs([request.plot], _identities(request.paths), "--plot")
    profile = get_profile(request.profile or DEFAULT_PROFILE)
    since, until = _time(request.since, "--since"), _time(request.until, "--until")
    if since is not None and until is not None and until <= since:
        raise ConfigError(f"--until {request.until} is not after --since {request.since}")
    fields = Fields(request.node_field, request.time_field)
    sources = [read_source(path, fields) for path in request.paths]
    found = history(sources, profile, since, until)
    checkpoint = request.checkpoint_seconds or SEED_CHECKPOINT_SECONDS
    sized = sizing(found, checkpoint, request.nodes, profile)
    report = json_text(found, sized) if request.output_format == "json" else text(found, sized)
    if request.plot is not None:
        from pmanifest.timeline_svg import svg

        write_files({request.plot: svg(found)}, "the plot")
    return report


def _identities(paths: tuple[str, ...]) -> dict[Identity, str]:
    """The inputs' (device, inode), stdin's too when it is a regular file."""
    import os
    import stat
    import sys

    found: dict[Identity, str] = {}
    for path in paths:
        key: Identity | None = None
        if path != "-":
            key = identity(path)
        else:
            try:
                status = os.fstat(sys.stdin.fileno())
            except (AttributeError, OSError, ValueError):
                continue
            if stat.S_ISREG(status.st_mode):
                key = (status.st_dev, status.st_ino)
        if key is not None:
            found[key] = path
    return found


def _time(value: str | None, flag: str) -> datetime | None:
    if value is None:
        return None
    parsed = parse_time(value)
    if parsed is None:
        raise ConfigError(f"{flag} {value!r}: expected an RFC 3339 time with an offset, "
                          "e.g. 2025-03-04T18:00:00Z")
    return parsed
