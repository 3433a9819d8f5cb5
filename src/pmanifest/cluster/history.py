"""Preemption history: counts per node, the observed window, the per-node mean time between
preemptions, and the checkpoint sizing it implies.

The estimate is the usual one for events that arrive at a constant rate: preemptions divided
by the preemptible node-time observed (``exposure``), inverted. A node is observed from the
window's start (or its TogetherNodeAdded) until its TogetherPreemptionNotified or
TogetherScaledDown (or the window's end). Live preemptible nodes that had no event in the window
(``allocated_preemptible_gpus`` of the latest cluster read, 8 GPUs a node, minus the nodes seen
alive at the end) count for the whole window. Nodes alive before the window count only from
its start, so the figure leans short: checkpoints come more often, never less.

A node counts as preemptible when it was preempted or its name has a preemptible prefix of
any shipped profile (or of the profile given): ``--profile`` sizes the checkpoint (its grace
period cap) and never changes what the same events measure.

The window is the span of the events' own times unless --since/--until give it. With no
preemption in the window, the mean is bounded instead (above exposure / 3 with 95 %
confidence, the "rule of three"), and the sizing says "at least" / "at most".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pmanifest.cluster.checkpoint_math import (
    daly_interval,
    job_mean_time,
    lost_fraction,
    young_interval,
)
from pmanifest.cluster.events import CLUSTER_READ, KUBECTL, EventSource, NodeEvent
from pmanifest.cluster.gpu_nodes import gpus_per_node
from pmanifest.cluster.merging import merged, not_understood, plural
from pmanifest.cluster.reasons import ENDED, JOINED, PREEMPTION
from pmanifest.kube.contract import SUPERVISOR_MARGIN_SECONDS
from pmanifest.kube.profile import Profile, node_name_prefixes

RETENTION_HOURS = 72  # node_lifecycle_events keep 72 hours (documented)
ROUGH_BELOW = 5  # fewer preemptions than this: say the mean is rough
ESTIMATE, LOWER_BOUND = "estimate", "lower bound"
_ENDS = (PREEMPTION, ENDED)
Span = tuple[datetime, datetime]


@dataclass(frozen=True)
class Window:
    """The observation window of a preemption history."""

    start: datetime | None
    end: datetime | None
    start_given: bool = False  # --since set it (else: the first event)
    end_given: bool = False  # --until set it (else: the last event)

    @property
    def given(self) -> bool:
        return self.start_given or self.end_given

    @property
    def seconds(self) -> float:
        if self.start is None or self.end is None:
            return 0.0
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True)
class NodeHistory:
    """One node's events and preemptions in the window."""

    node: str
    compute: str  # preemptible | standard | unknown (from the node name's prefix)
    events: tuple[NodeEvent, ...]  # timed ones in time order, then the untimed ones
    preemptions: int
    observed: float | None  # seconds of preemptible exposure counted; None: not counted
    up: tuple[Span, ...] = ()  # when it was up inside the window (preemptible nodes)
    alive_at_end: bool = False


@dataclass(frozen=True)
class History:
    """The preemption history of every node, from the event files."""

    sources: tuple[EventSource, ...]
    window: Window
    nodes: tuple[NodeHistory, ...]
    preemptions: int
    timed_preemptions: int
    counted_preemptions: int  # those the mean divides by (not one that opens the window)
    exposure: float  # preemptible node-seconds observed
    unseen_nodes: int
    mean_per_node: float | None  # seconds; None when it cannot be estimated
    basis: str | None  # ESTIMATE | LOWER_BOUND | None
    notes: tuple[str, ...]
    # events folded into an earlier one of their node that says the same (a removal after a
    # deletion, a shutdown after a scale-down), by reason
    folded: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Sizing:
    """Checkpoint sizing for a job: Daly's interval (recommended; Young's beside it) and the
    time lost at Daly's."""

    checkpoint: float
    nodes: int
    profile: str
    drain_window: int
    fits_drain_window: bool  # the checkpoint fits the grace period less the margin
    job_mean: float | None
    interval: float | None  # Daly's higher-order optimum
    lost: float | None
    basis: str | None
    origin: str | None = None  # where the checkpoint and node figures came from (--spec)
    grace: int = 0  # the grace period a checkpoint at the notice runs in
    margin: int = SUPERVISOR_MARGIN_SECONDS  # the supervisor stops everything this much earlier
    spec_grace: int | None = None  # the spec's gracePeriodSeconds (None: the profile's cap
    # and the supervisor's default margin)
    young: float | None = None  # Young's first-order interval sqrt(2 C M), for comparison

    @property
    def budget(self) -> int:
        """Seconds a checkpoint at the notice has: render's expectedSeconds + marginSeconds
        <= gracePeriodSeconds, the grace period never above the profile's cap."""
        return max(0, self.grace - self.margin)


def history(sources: Sequence[EventSource], profile: Profile,
            since: datetime | None = None, until: datetime | None = None) -> History:
    notes: list[str] = [n for s in sources for n in s.notes]
    events, folded = merged([e for s in sources for e in s.events], notes)
    window = _window(events, since, until)
    if window.given:
        events = _inside(events, window, notes)
    prefixes = node_name_prefixes(profile)
    nodes = [_node(name, evs, prefixes, window, notes)
             for name, evs in _by_node(events).items()]
    exposure = sum(n.observed or 0.0 for n in nodes)
    unseen = _unseen_nodes(sources, nodes, window, notes)
    exposure += unseen * window.seconds
    preempted = [e for e in events if e.kind == PREEMPTION]
    timed = sum(1 for e in preempted if e.time is not None)
    counted = timed - (_opening(preempted, window, notes) if window.seconds > 0 else 0)
    mean, basis = _mean(counted, exposure, window, events, notes)
    _context_notes(sources, window, len(preempted), timed, counted, notes)
    return History(tuple(sources), window, tuple(nodes), len(preempted), timed, counted,
                   exposure, unseen, mean, basis, tuple(notes), folded)


def sizing(found: History, checkpoint: float, nodes: int, profile: Profile,
           origin: str | None = None, grace: int | None = None,
           margin: int | None = None) -> Sizing:
    """``grace``/``margin``: a spec's checkpoint.gracePeriodSeconds and marginSeconds (None:
    the profile's grace period cap and the supervisor's default margin, as render gives)."""
    cap = profile.grace_period_cap
    spec = grace
    grace = cap if grace is None else min(grace, cap)
    margin = SUPERVISOR_MARGIN_SECONDS if margin is None else margin
    fits = checkpoint <= max(0, grace - margin)
    base = Sizing(checkpoint, nodes, profile.name, profile.drain_window_seconds, fits, None,
                  None, None, None, origin, grace, margin, spec)
    if found.mean_per_node is None:
        return base
    job = job_mean_time(found.mean_per_node, nodes)
    interval = daly_interval(checkpoint, job)
    return replace(base, job_mean=job, interval=interval, young=young_interval(checkpoint, job),
                   lost=lost_fraction(interval, checkpoint, job), basis=found.basis)


def _window(events: list[NodeEvent], since: datetime | None,
            until: datetime | None) -> Window:
    times = [e.time for e in events if e.time is not None]
    start = since if since is not None else (min(times) if times else None)
    end = until if until is not None else (max(times) if times else None)
    if start is not None and end is not None and end < start:
        end = start  # --until before every event, or --since after: an empty window
    return Window(start, end, since is not None, until is not None)


def _inside(events: list[NodeEvent], window: Window, notes: list[str]) -> list[NodeEvent]:
    def outside(e: NodeEvent) -> bool:  # a bound may be open (--since alone, no timed event)
        if e.time is None:
            return False
        return ((window.start is not None and e.time < window.start)
                or (window.end is not None and e.time > window.end))

    left_out = [e for e in events if outside(e)]
    if left_out:
        notes.append(f"{plural(len(left_out), 'event')} outside --since/--until left out")
    return [e for e in events if not outside(e)]


def _by_node(events: list[NodeEvent]) -> dict[str, list[NodeEvent]]:
    grouped: dict[str, list[NodeEvent]] = {}
    for event in events:
        grouped.setdefault(event.node, []).append(event)
    return dict(sorted(grouped.items()))


Prefixes = tuple[tuple[str, ...], tuple[str, ...]]  # (preemptible, standard) node names


def _compute(node: str, prefixes: Prefixes) -> str:
    """From the node's name alone (its events decide too: a preempted node is counted)."""
    preemptible, standard = prefixes
    if node.startswith(preemptible):
        return "preemptible"
    if node.startswith(standard):
        return "standard"
    return "unknown"


def _node(name: str, events: list[NodeEvent], prefixes: Prefixes, window: Window,
          notes: list[str]) -> NodeHistory:
    timed = sorted((e for e in events if e.time is not None), key=_time_of)
    ordered = (*timed, *(e for e in events if e.time is None))
    preemptions = sum(1 for e in events if e.kind == PREEMPTION)
    compute = _compute(name, prefixes)
    if preemptions and compute == "standard":
        standard = next(p for p in prefixes[1] if name.startswith(p))
        notes.append(f"{name}: preempted, but its name is a standard node's "
                     f"({standard}); counted as preemptible")
    if compute != "preemptible" and not preemptions:
        return NodeHistory(name, compute, ordered, 0, None)
    if not timed:
        return NodeHistory(name, compute, ordered, preemptions, None)
    up, alive = _up_periods(timed, window)
    observed = sum((end - start).total_seconds() for start, end in up)
    return NodeHistory(name, compute, ordered, preemptions, observed, up, alive)


def _time_of(event: NodeEvent) -> datetime:
    assert event.time is not None
    return event.time


def _up_periods(timed: list[NodeEvent], window: Window) -> tuple[tuple[Span, ...], bool]:
    """When the node was up inside the window: from the window's start (or its
    TogetherNodeAdded) to its TogetherPreemptionNotified or TogetherScaledDown (or the end);
    and whether it was still up at the end."""
    assert window.start is not None and window.end is not None
    lifecycle = [e for e in timed if e.kind == JOINED or e.kind in _ENDS]
    up_since = window.start if not lifecycle or lifecycle[0].kind != JOINED else None
    periods: list[Span] = []
    for event in lifecycle:
        time = _time_of(event)
        if event.kind == JOINED and up_since is None:
            up_since = time
        elif event.kind in _ENDS and up_since is not None:
            periods.append((up_since, time))
            up_since = None
    if up_since is not None:
        periods.append((up_since, window.end))
    return tuple(periods), up_since is not None


def _unseen_nodes(sources: Sequence[EventSource], nodes: list[NodeHistory], window: Window,
                  notes: list[str]) -> int:
    """Live preemptible nodes at the latest cluster read (its allocated_preemptible_gpus) that
    no event shows up at that time (the read's last event, as its own time is not given)."""
    reads = [(_last_time(s), i, s) for i, s in enumerate(sources) if s.kind == CLUSTER_READ]
    if not reads or window.seconds <= 0:
        return 0
    read_time, _, latest = max(reads)  # ties: the read given last
    if latest.allocated_preemptible_gpus is None:
        return 0
    per_node = gpus_per_node(latest.gpu_type)
    live = latest.allocated_preemptible_gpus // per_node
    unseen = max(0, live - sum(1 for n in nodes if _up_at(n, read_time)))
    if unseen:
        notes.append(f"{plural(unseen, 'live preemptible node')} without an event in the window "
                     f"(allocated_preemptible_gpus {latest.allocated_preemptible_gpus} in "
                     f"{latest.file}, {per_node} GPUs a node) counted as up all along")
    return unseen


def _up_at(node: NodeHistory, time: datetime) -> bool:
    if node.alive_at_end and node.up and node.up[-1][0] <= time:
        return True
    return any(start <= time < end for start, end in node.up)


def _last_time(source: EventSource) -> datetime:
    times = [e.time for e in source.events if e.time is not None]
    return max(times) if times else datetime.min.replace(tzinfo=UTC)


def _opening(preempted: list[NodeEvent], window: Window, notes: list[str]) -> int:
    """1 when the window starts at a preemption because no --since said otherwise: that event
    only starts the clock (no observed time lies before it), so the mean does not count it."""
    if window.start_given or window.start is None:
        return 0
    opening = next((e for e in preempted if e.time == window.start), None)
    if opening is None:
        return 0
    notes.append(f"the window opens with {opening.node}'s preemption, which has no observed "
                 "time before it: the mean leaves it out (--since says when observation "
                 "began)")
    return 1


def _mean(timed: int, exposure: float, window: Window, events: list[NodeEvent],
          notes: list[str]) -> tuple[float | None, str | None]:
    if not events:
        notes.append("no events: nothing to estimate")
        return None, None
    if window.start is None:
        notes.append("no event has a usable timestamp: counts only, no mean time")
        return None, None
    if window.seconds <= 0:
        single = sum(1 for e in events if e.time is not None) == 1
        notes.append(("a single timed event" if single else "every timed event is at one "
                      "instant") + ": no interval to measure (--since can say when the "
                     "observation began)")
        return None, None
    if exposure <= 0:
        notes.append("no preemptible node observed in the window: no mean time")
        return None, None
    if timed == 0:
        notes.append(f"no preemption in {exposure / 3600:.1f} preemptible node-hours: the "
                     "mean time between preemptions is above a third of that (95 % "
                     "confidence, rule of three)")
        return exposure / 3, LOWER_BOUND
    return exposure / timed, ESTIMATE


def _context_notes(sources: Sequence[EventSource], window: Window, preemptions: int,
                   timed: int, counted: int, notes: list[str]) -> None:
    if preemptions > timed:
        notes.append(f"{plural(preemptions - timed, 'preemption')} without a usable "
                     "timestamp: counted, but not in the mean time")
    if 0 < counted < ROUGH_BELOW:
        notes.append(f"the mean rests on {plural(counted, 'preemption')}: it is rough (its "
                     f"relative error is about 1/sqrt({counted}))")
    kinds = {s.kind for s in sources}
    hours = window.seconds / 3600
    if CLUSTER_READ in kinds and not any(s.events for s in sources):
        notes.append(f"no node event in the {RETENTION_HOURS} hours the API keeps "
                     "node_lifecycle_events")
    elif CLUSTER_READ in kinds and window.start is not None and hours < RETENTION_HOURS:
        notes.append(f"the API keeps node_lifecycle_events for {RETENTION_HOURS} hours and "
                     f"this window is {hours:.1f} h: save reads regularly and pass them "
                     "together for a longer history")
    if KUBECTL in kinds and not any(e.kind == JOINED for s in sources for e in s.events):
        notes.append("a kubectl event list shows no node that joined before it (nor one "
                     "that was never preempted), and Kubernetes keeps events for about an "
                     "hour by default: a cluster read gives a fuller history")
    notes.extend(not_understood(sources))
