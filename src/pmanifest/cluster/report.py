"""``pmanifest cluster events`` output: text for people, JSON for scripts."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from pmanifest.cluster.events import CLUSTER_READ, KUBECTL
from pmanifest.cluster.history import LOWER_BOUND, History, NodeHistory, Sizing
from pmanifest.cluster.merging import plural
from pmanifest.cluster.reasons import PREEMPTION
from pmanifest.io.limits import MAX_NODE_COLUMN
from pmanifest.io.terminal import json_text as safe_json
from pmanifest.io.terminal import shown
from pmanifest.io.text import PIPE_WIDTH, wrap


def stamp(time: datetime | None) -> str | None:
    """RFC 3339 in UTC with ``Z``; fractions of a second only when there are some."""
    if time is None:
        return None
    return time.astimezone(UTC).isoformat().replace("+00:00", "Z")


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def percent(fraction: float) -> str:
    if 0 < fraction < 0.0005:
        return "< 0.1 %"
    return f"{fraction * 100:.1f} %"


# --- text -----------------------------------------------------------------------------------

def text(found: History, sized: Sizing, width: int = PIPE_WIDTH) -> str:
    """The report for people: prose wrapped to ``width`` columns (the table is not), each line
    through the one escaper (node names, reasons, file names and notes come from input: a
    line feed in one stays inside its line)."""
    def prose(items: list[str]) -> list[str]:  # escaped first: a line feed is not a break
        return _prose([shown(item) for item in items], width)

    lines = [*prose(_header(found)), "", *(shown(row) for row in _table(found.nodes)), "",
             *prose([*_totals(found), "", *_sizing(sized)])]
    if found.notes:
        lines += ["", "notes:", *prose([f"  - {note}" for note in found.notes])]
    return "\n".join(lines) + "\n"


def _prose(lines: list[str], width: int) -> list[str]:
    """Each line wrapped to ``width``: continuation lines indented two more than the line
    (past the dash of a ``- `` item)."""
    out = []
    for line in lines:
        indent = line[:len(line) - len(line.lstrip(" "))]
        out.extend(wrap(line, width, indent, indent + "  ").split("\n"))
    return out


def _header(found: History) -> list[str]:
    lines = []
    for s in found.sources:
        detail = f"{s.kind}, {plural(len(s.events), 'event')}"
        if s.kind == CLUSTER_READ:
            detail += f"; time field: {s.time_field or 'none found'}"
        lines.append(f"source: {s.file} ({detail})")
        if s.others:
            lines.append("  also read, not counted: " + "; ".join(f"{n} {what}"
                                                               for what, n in s.others))
        if s.unknown:
            lines.append("  not understood, not counted: " + ", ".join(
                f"{reason} x{n}" for reason, n in s.unknown))
        if s.desired_preemptible_gpus is not None or s.allocated_preemptible_gpus is not None:
            lines.append(f"  preemptible GPUs: target {_or_dash(s.desired_preemptible_gpus)}, "
                         f"allocated {_or_dash(s.allocated_preemptible_gpus)}")
    w = found.window
    if w.start is None or w.end is None:
        lines.append("window: none (no usable timestamp)")
    else:
        origin = "from --since/--until" if w.given else "the events' own span"
        lines.append(f"window: {stamp(w.start)} to {stamp(w.end)} "
                     f"({w.seconds / 3600:.1f} h, {origin})")
    return lines


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _table(nodes: tuple[NodeHistory, ...]) -> list[str]:
    if not nodes:
        return ["no node events"]
    # the column fits the names up to MAX_NODE_COLUMN; a longer one overflows its own row
    # (padding every row to the longest name made 0.8 MB of events a report of gigabytes)
    names = [shown(n.node) for n in nodes]
    width = min(max(len("node"), *(len(name) for name in names)), MAX_NODE_COLUMN)
    lines = [f"{'node':<{width}}  compute      preemptions  observed  preempted at"]
    for n, name in zip(nodes, names, strict=True):
        observed = "-" if n.observed is None else duration(n.observed)
        lines.append(f"{name:<{width}}  {n.compute:<11}  {n.preemptions:>11}  "
                     f"{observed:>8}  {_first_preempted(n)}")
    return lines


def _first_preempted(node: NodeHistory) -> str:
    for event in node.events:
        if event.kind == PREEMPTION:
            return stamp(event.time) or "(no usable time)"
    return "-"


def _totals(found: History) -> list[str]:
    preempted = sum(1 for n in found.nodes if n.preemptions)
    counted = ""
    if found.counted_preemptions != found.preemptions:
        counted = f", {found.counted_preemptions} of them in the mean"
    lines = [f"preemptions: {found.preemptions} on {plural(preempted, 'node')}{counted}; "
             f"{found.exposure / 3600:.1f} preemptible node-hours observed"]
    mean = found.mean_per_node
    label = "mean time between preemptions per node"
    if {s.kind for s in found.sources} == {KUBECTL}:
        label += " (preempted nodes only)"
    if mean is None:
        lines.append(f"{label}: cannot be estimated (see notes)")
    elif found.basis == LOWER_BOUND:
        lines.append(f"{label}: more than {duration(mean)} (no preemption counted)")
    else:
        lines.append(f"{label}: {duration(mean)}")
    return lines


def _sizing(s: Sizing) -> list[str]:
    cost = f"{s.checkpoint:g} s"
    lines = [f"checkpoint sizing: a {cost} checkpoint, a job on "
             f"{plural(s.nodes, 'preemptible node')}, profile {s.profile}"]
    if s.origin is not None:
        lines.append(f"  from {s.origin}")
    budget = _budget(s)
    if s.fits_drain_window:
        lines.append(f"  drain window: fits ({cost} of {budget}); a checkpoint at the notice "
                     "keeps the work")
    else:
        lines.append(f"  drain window: does NOT fit ({cost} > {budget}); a preemption loses the "
                     "work since the last periodic checkpoint")
    if s.job_mean is None or s.interval is None or s.lost is None:
        lines.append("  periodic checkpoint: needs a mean time between preemptions")
        return lines
    bound = s.basis == LOWER_BOUND
    per_node = f" (per node / {s.nodes})" if s.nodes > 1 else ""
    every = (f"at least {duration(s.interval)} apart" if bound
             else f"every {duration(s.interval)}")
    lines += [
        f"  mean time between interruptions of the job: {'more than ' * bound}"
        f"{duration(s.job_mean)}{per_node}",
        f"  periodic checkpoint: {every} (Daly's higher-order optimum; Young's "
        f"sqrt(2 x {cost} x {duration(s.job_mean)}) = {duration(s.young or 0.0)})",
        f"  expected GPU time lost: {'at most ' * bound}{percent(s.lost)} "
        "(checkpoints and work done again; restart time not counted)",
    ]
    if s.fits_drain_window:
        lines.append("  (periodic checkpoints bound the loss when a checkpoint at the notice "
                     "fails)")
    return lines


def _budget(s: Sizing) -> str:
    """``290 s: grace period cap 300 s - supervisor margin 10 s``: what render allows a
    checkpoint at the notice (expectedSeconds + marginSeconds <= gracePeriodSeconds)."""
    if s.spec_grace is None:
        return f"{s.budget} s: grace period cap {s.grace} s - supervisor margin {s.margin} s"
    # the spec was read under the same profile: its grace period is within the cap
    return f"{s.budget} s: gracePeriodSeconds {s.grace} - marginSeconds {s.margin}"


# --- JSON ------------------------------------------------------------------------------------

def json_text(found: History, sized: Sizing) -> str:
    payload = {
        "sources": [{"file": s.file, "kind": s.kind, "events": len(s.events), "read": s.read,
                     "others": dict(s.others), "notUnderstood": dict(s.unknown),
                     "timeField": s.time_field,
                     "desiredPreemptibleGpus": s.desired_preemptible_gpus,
                     "allocatedPreemptibleGpus": s.allocated_preemptible_gpus,
                     "gpuType": s.gpu_type} for s in found.sources],
        "window": {"start": stamp(found.window.start), "end": stamp(found.window.end),
                   "seconds": _seconds(found.window.seconds), "given": found.window.given},
        "nodes": [_node_json(n) for n in found.nodes],
        "preemptions": found.preemptions,
        "timedPreemptions": found.timed_preemptions,
        "countedPreemptions": found.counted_preemptions,
        "exposureSeconds": _seconds(found.exposure),
        "unseenNodes": found.unseen_nodes,
        "meanSecondsBetweenPreemptionsPerNode": _seconds(found.mean_per_node),
        "basis": found.basis,
        "sizing": _sizing_json(sized),
        "notes": list(found.notes),
        "folded": dict(found.folded),
    }
    return safe_json(json.dumps(payload, indent=2, ensure_ascii=False)) + "\n"


def _node_json(n: NodeHistory) -> dict[str, Any]:
    return {"node": n.node, "compute": n.compute, "preemptions": n.preemptions,
            "observedSeconds": _seconds(n.observed),
            "events": [{"reason": e.reason, "kind": e.kind, "time": stamp(e.time),
                        "at": e.where}
                       for e in n.events]}


def _sizing_json(s: Sizing) -> dict[str, Any]:
    return {"checkpointSeconds": _seconds(s.checkpoint), "nodes": s.nodes,
            "profile": s.profile, "drainWindowSeconds": s.drain_window,
            "gracePeriodSeconds": s.grace, "marginSeconds": s.margin,
            "checkpointBudgetSeconds": s.budget, "fitsDrainWindow": s.fits_drain_window,
            "jobMeanSecondsBetweenInterruptions": _seconds(s.job_mean),
            "intervalSeconds": _seconds(s.interval),  # Daly's, recommended
            "dalyIntervalSeconds": _seconds(s.interval),
            "youngIntervalSeconds": _seconds(s.young),
            "lostFraction": None if s.lost is None else round(s.lost, 6),
            "basis": s.basis, "from": s.origin}


def _seconds(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 3)
