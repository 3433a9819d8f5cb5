"""Node lifecycle events from a saved cluster read or from ``kubectl get events -o json``.

Two inputs, each parsed by the project's loader (JSON is read as YAML, with positions):

- the JSON (or YAML) of reading a cluster (``tg beta clusters retrieve ID --json``): a
  mapping with ``node_lifecycle_events``. Together documents that array (72-hour retention,
  deduplicated by node and reason) and each event's ``reason`` (TogetherPreemptionNotified,
  TogetherNodeAdded, TogetherScaledDown), but not the fields holding the node and the time.
  The node is read from ``node_name`` (how the cluster API names a node elsewhere), or the
  field named by --node-field. The time is the one field whose values are RFC 3339 times, or
  the field named by --time-field (which may also hold Unix seconds);
- a core/v1 ``List`` (or ``EventList``, or one ``Event``) of Kubernetes events, from any
  provider: every event about a Node whose reason ``reasons`` knows (Together's, Karpenter's,
  GKE's, AKS's and Kubernetes' own) is kept with what it says of the node. Every other event
  is counted, never dropped without a word: a Karpenter NodeClaim's (the same as its Node's),
  a Pod's or another object's, and node events whose reason pmanifest does not know (the
  report lists them). Its time is the first observation: ``eventTime``, else
  ``firstTimestamp``, else the last observation (``lastTimestamp``,
  ``series.lastObservedTime``). events.k8s.io/v1 items (``regarding``,
  ``deprecatedFirstTimestamp``) are read the same way.

Nothing here judges the events; ``preemption_history`` does.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pmanifest.cluster.reasons import NODE_CLAIM, OTHER, PREEMPTION, kind_of
from pmanifest.errors import InputError
from pmanifest.io.limits import MAX_COUNT
from pmanifest.io.reading import read_input
from pmanifest.loader.documents import YamlProblem, decode, load_single
from pmanifest.loader.positions import Path, Positions, dotted

DEFAULT_NODE_FIELD = "node_name"
CLUSTER_READ = "cluster read"
KUBECTL = "kubectl events"

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.(\d+))?(?:[Zz]|[+-]\d{2}:\d{2})\Z")
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(9000, 1, 1, tzinfo=UTC)
_KUBECTL_FIRST = ("eventTime", "firstTimestamp", "deprecatedFirstTimestamp")
_KUBECTL_LAST = ("lastTimestamp", "deprecatedLastTimestamp")


@dataclass(frozen=True)
class NodeEvent:
    """One node lifecycle event: its node, reason and time."""

    node: str
    reason: str
    time: datetime | None  # None: no usable timestamp
    where: str  # file:line of the event, for notes
    count: int = 1  # how many times Kubernetes saw it (kubectl ``count``/``series.count``)
    kind: str = PREEMPTION  # what it says of the node (pmanifest.cluster.reasons)


@dataclass(frozen=True)
class EventSource:
    """A file of events: a saved cluster read or a kubectl event list."""

    file: str
    kind: str  # CLUSTER_READ | KUBECTL
    events: tuple[NodeEvent, ...]
    notes: tuple[str, ...] = ()
    time_field: str | None = None  # the cluster read's time field, as found or named
    allocated_preemptible_gpus: int | None = None
    desired_preemptible_gpus: int | None = None
    gpu_type: str | None = None
    # every event read and not kept as a node event, counted: (what it is, how many)
    others: tuple[tuple[str, int], ...] = ()
    unknown: tuple[tuple[str, int], ...] = ()  # node events whose reason is not known
    read: int = 0  # events in the file


@dataclass(frozen=True)
class Fields:
    """The fields naming an event's node and its time."""

    node: str = DEFAULT_NODE_FIELD
    time: str | None = None  # None: the one field holding RFC 3339 times


def parse_time(value: Any, numbers: bool = False) -> datetime | None:
    """An RFC 3339 date-time with an offset (or Unix seconds when ``numbers``), in UTC."""
    if isinstance(value, str):
        match = _RFC3339.match(value.strip())
        if match is None:
            return None
        text = value.strip().upper().replace(" ", "T")
        if match.group(1) and len(match.group(1)) > 6:  # nanoseconds: keep microseconds
            text = text.replace("." + match.group(1).upper(), "." + match.group(1)[:6])
        try:
            return _plausible(datetime.fromisoformat(text).astimezone(UTC))
        except (ValueError, OverflowError):
            return None  # 2024-02-30, or an offset that leaves the calendar
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return None
        try:
            return _plausible(datetime.fromtimestamp(value, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _plausible(time: datetime) -> datetime | None:
    """Times from 1970 (Unix time) to 9000: anything else is not an event's time, and keeping
    away from the calendar's ends keeps date arithmetic from overflowing."""
    return time if _EARLIEST <= time < _LATEST else None


def read_source(path: str, fields: Fields) -> EventSource:
    """The events of one file (``-``: stdin), or an InputError naming the file."""
    name = "<stdin>" if path == "-" else path
    raw = read_input(path, name)
    try:
        loaded = load_single(decode(raw))
    except YamlProblem as problem:
        raise InputError(f"{problem.message}; expected the JSON of a cluster read or of "
                         "`kubectl get events -o json`", name, problem.line,
                         problem.column) from None
    return events_of(loaded.data, loaded.positions, name, fields)


def events_of(data: Any, positions: Positions, name: str, fields: Fields) -> EventSource:
    if isinstance(data, dict) and "node_lifecycle_events" in data:
        return _ClusterRead(data, positions, name, fields).source()
    if isinstance(data, dict) and data.get("kind") in ("List", "EventList", "Event"):
        return _kubectl(data, positions, name)
    raise InputError("neither a cluster read (no node_lifecycle_events) nor a list of "
                     "Kubernetes events (kind: List of Event); expected the JSON of "
                     "`tg beta clusters retrieve ID --json` or `kubectl get events -o json`",
                     name)


def _where(name: str, positions: Positions, path: Path) -> str:
    return f"{name}:{positions.at(path).line}"


def _shape_error(name: str, positions: Positions, path: Path, expected: str,
                 value: Any) -> InputError:
    pos = positions.value_at(path)
    return InputError(f"{dotted(path)}: expected {expected}, found {_type_name(value)}", name,
                      pos.line, pos.column)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a mapping"


def _gpu_count(data: dict[str, Any], key: str, name: str, positions: Positions) -> int | None:
    """A GPU count of the read; InputError for one beyond any cluster (the history multiplies
    it by seconds, in floats)."""
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if abs(value) > MAX_COUNT:
        pos = positions.value_at((key,))
        raise InputError(f"{key} is beyond any GPU count (more than 2^53); give the count "
                         "of the read", name, pos.line, pos.column)
    return value


@dataclass
class _ClusterRead:
    """A saved cluster read being turned into node events."""

    data: dict[str, Any]
    positions: Positions
    name: str
    fields: Fields
    notes: list[str] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)  # reasons not known, counted
    others: Counter[str] = field(default_factory=Counter)  # known, not about a node's life

    def source(self) -> EventSource:
        items = self.data["node_lifecycle_events"]
        if items is None:
            items = []
        if not isinstance(items, list):
            raise _shape_error(self.name, self.positions, ("node_lifecycle_events",),
                               "a list", items)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise _shape_error(self.name, self.positions, ("node_lifecycle_events", i),
                                   "a mapping (an event)", item)
        time_field = self.time_field(items)
        # one pass for every event's line (a large file's positions are looked up, not tabled)
        self.positions.prefetch(("node_lifecycle_events", i) for i in range(len(items)))
        events = [e for i, item in enumerate(items)
                  if (e := self.event(i, item, time_field)) is not None]
        gpu_type = self.data.get("gpu_type")
        return EventSource(
            self.name, CLUSTER_READ, tuple(events), tuple(self.notes), time_field,
            _gpu_count(self.data, "allocated_preemptible_gpus", self.name, self.positions),
            _gpu_count(self.data, "desired_preemptible_gpus", self.name, self.positions),
            gpu_type if isinstance(gpu_type, str) else None,
            others=tuple(self.others.items()), unknown=tuple(sorted(self.unknown.items())),
            read=len(items),
        )

    def time_field(self, items: list[dict[str, Any]]) -> str | None:
        if self.fields.time is not None:
            return self.fields.time
        found = sorted({key for item in items for key, value in item.items()
                        if isinstance(key, str) and parse_time(value) is not None})
        if len(found) > 1:
            raise InputError(f"node_lifecycle_events: several fields hold times "
                             f"({', '.join(found)}); name the event's time with --time-field",
                             self.name)
        if not found and items:
            self.notes.append(f"{self.name}: no field of node_lifecycle_events holds an "
                              "RFC 3339 time; name it with --time-field (Unix seconds are "
                              "read from a field named that way)")
        return found[0] if found else None

    def event(self, i: int, item: dict[str, Any], time_field: str | None) -> NodeEvent | None:
        where = _where(self.name, self.positions, ("node_lifecycle_events", i))
        reason, node = item.get("reason"), item.get(self.fields.node)
        if not isinstance(reason, str) or not reason:
            self.notes.append(f"{where}: event without a reason; left out")
            return None
        if not isinstance(node, str) or not node:
            self.notes.append(f"{where}: {reason} without a {self.fields.node}; left out "
                              "(name the node's field with --node-field)")
            return None
        kind = kind_of(reason)
        if kind is None:
            self.unknown[reason] += 1
            return None
        if kind == OTHER:
            self.others[f"{reason} (not about a node's life)"] += 1
            return None
        time = None
        if time_field is not None:
            time = parse_time(item.get(time_field), numbers=self.fields.time is not None)
        return NodeEvent(node, reason, time, where, kind=kind)


def _kubectl(data: dict[str, Any], positions: Positions, name: str) -> EventSource:
    if data.get("kind") == "Event":
        pairs: list[tuple[Path, Any]] = [((), data)]
    else:
        items = data.get("items")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise _shape_error(name, positions, ("items",), "a list", items)
        pairs = [(("items", i), item) for i, item in enumerate(items)]
    for path, item in pairs:
        if not isinstance(item, dict):
            raise _shape_error(name, positions, path, "a mapping (an Event)", item)
    positions.prefetch(path for path, item in pairs if _subject(item)[0] == "Node")
    read = _KubectlRead(name, positions)
    for path, item in pairs:
        read.event(path, item)
    return EventSource(name, KUBECTL, tuple(read.events), tuple(read.notes),
                       others=tuple(read.others.items()),
                       unknown=tuple(sorted(read.unknown.items())), read=len(pairs))


def _subject(item: dict[str, Any]) -> tuple[str, Any]:
    """The kind of object an Event is about (a Node when it does not say) and its name."""
    subject = item.get("involvedObject", item.get("regarding"))
    subject = subject if isinstance(subject, dict) else {}
    kind = subject.get("kind", "Node")
    return (kind if isinstance(kind, str) else "?"), subject.get("name")


@dataclass
class _KubectlRead:
    """A kubectl event list being read: node events kept, every other event counted."""

    name: str
    positions: Positions
    events: list[NodeEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    others: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)

    def event(self, path: Path, item: dict[str, Any]) -> None:
        reason = item.get("reason")
        reason = reason if isinstance(reason, str) and reason else "(no reason)"
        kind, node = _subject(item)
        said = kind_of(reason)
        if kind == "Node" and said is not None:
            self.node_event(path, item, reason, node, said)
        elif kind == "Node":
            self.unknown[reason] += 1
        elif kind == NODE_CLAIM and said is not None:
            self.others[f"{reason} about Karpenter NodeClaims (the same as their Node's)"] += 1
        elif said is not None and said != OTHER:
            self.others[f"{reason} about {kind}s (their node's own event counts)"] += 1
        else:
            self.others[f"about {kind}s"] += 1

    def node_event(self, path: Path, item: dict[str, Any], reason: str, node: Any,
                   said: str) -> None:
        where = _where(self.name, self.positions, path)
        if not isinstance(node, str) or not node:
            self.notes.append(f"{where}: {reason} not about a named Node; left out")
            return
        message = item.get("message", item.get("note"))
        if reason == "Shutdown" and isinstance(message, str) and "cancel" in message:
            said = OTHER  # "Shutdown manager detected shutdown cancellation"
        if said == OTHER:
            self.others[f"{reason} about Nodes (not about their life)"] += 1
            return
        self.events.append(NodeEvent(node, reason, _kubectl_time(item), where, _count(item),
                                     said))


def _kubectl_time(item: dict[str, Any]) -> datetime | None:
    series = item.get("series")
    last_observed = series.get("lastObservedTime") if isinstance(series, dict) else None
    for value in (*(item.get(k) for k in _KUBECTL_FIRST),
                  *(item.get(k) for k in _KUBECTL_LAST), last_observed):
        time = parse_time(value)
        if time is not None:
            return time
    return None


def _count(item: dict[str, Any]) -> int:
    series = item.get("series")
    for value in (series.get("count") if isinstance(series, dict) else None,
                  item.get("count"), item.get("deprecatedCount")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 1
