"""A node's events merged into its history: one event for each thing a node goes through
(one preemption, one arrival, one departure: the API keeps one event per node and reason),
and the kubelet's graceful shutdown read as the preemption it is on GKE unless the node was
leaving already. Nothing is dropped without a word: what is merged is counted and said."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pmanifest.cluster.events import EventSource, NodeEvent
from pmanifest.cluster.reasons import ENDED, PREEMPTION, SHUTDOWN


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def merged(events: list[NodeEvent], notes: list[str]
           ) -> tuple[list[NodeEvent], tuple[tuple[str, int], ...]]:
    """The events that make up the nodes' histories, and those folded into another of their
    node's that says the same (by reason); ``notes`` gets what the report says of both."""
    folded: Counter[str] = Counter()
    events = _shutdowns(_deduplicated(events, notes, folded), notes, folded)
    if folded:
        notes.append(f"{plural(sum(folded.values()), 'node event')} said what an earlier "
                     "event of the same node said (its departure, or a shutdown after it), "
                     "counted with it: " + ", ".join(f"{r} x{n}" for r, n in folded.items()))
    return events, tuple(folded.items())


def not_understood(sources: Sequence[EventSource]) -> list[str]:
    """A note for each file with node events whose reason pmanifest does not know."""
    notes = []
    for source in sources:
        if source.unknown:
            said = ", ".join(f"{reason} x{n}" for reason, n in source.unknown)
            count = plural(sum(n for _, n in source.unknown), "node event")
            notes.append(f"{source.file}: {count} not understood, not counted: {said} "
                         "(pmanifest reads Together's, Karpenter's, GKE's, AKS's and "
                         "Kubernetes' own node events)")
    return notes


def _deduplicated(events: list[NodeEvent], notes: list[str],
                  folded: Counter[str]) -> list[NodeEvent]:
    """One event per node and what it says (one preemption, one arrival, one departure), as
    the API keeps them by node and reason: the earliest timed one."""
    kept: dict[tuple[str, str], NodeEvent] = {}
    for event in events:
        key = (event.node, event.kind)
        if key not in kept:
            kept[key] = event
            continue
        first = kept[key]
        if first.reason == event.reason:
            notes.append(f"{event.where}: {event.reason} for {event.node} again (also at "
                         f"{first.where}); counted once, as the API deduplicates by node "
                         "and reason")
        elif event.kind == PREEMPTION:
            notes.append(f"{event.where}: {event.reason} for {event.node} after "
                         f"{first.reason} ({first.where}): one preemption, counted once")
        else:
            folded[event.reason] += 1
        if _earlier(event, kept[key]):
            kept[key] = event
    for event in kept.values():
        if event.count > 1:
            notes.append(f"{event.where}: {event.reason} for {event.node} seen {event.count} "
                         "times by Kubernetes; counted once (a repeated notice cannot be told "
                         "from a reused node name)")
    return list(kept.values())


def _shutdowns(events: list[NodeEvent], notes: list[str],
               folded: Counter[str]) -> list[NodeEvent]:
    """A node's graceful shutdown (the kubelet's, which is how a GKE Spot preemption shows)
    counted as its preemption, unless the node already has a preemption, or a departure
    (a scale-down, a removal) came first; then it is part of that and left out."""
    marked = {e.node for e in events if e.kind == PREEMPTION}
    left = {(e.node, e.time) for e in events if e.kind == ENDED}
    out = []
    counted = 0
    for event in events:
        if event.kind != SHUTDOWN:
            out.append(event)
        elif event.node not in marked and not any(
                node == event.node and (time is None or event.time is None or time <= event.time)
                for node, time in left):
            out.append(replace(event, kind=PREEMPTION))
            counted += 1
        else:
            folded[event.reason] += 1
    if counted:
        notes.append(f"{plural(counted, 'preemption')} read from the kubelet's graceful node "
                     "shutdown (Shutdown), the only sign of a GKE Spot preemption among "
                     "Kubernetes events; a maintenance shutdown looks the same")
    return out


def _earlier(new: NodeEvent, old: NodeEvent) -> bool:
    if new.time is None:
        return False
    return old.time is None or new.time < old.time
