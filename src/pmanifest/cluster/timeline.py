"""An SVG timeline of node lifecycle events: one row per node, time across (UTC).

Hand-written SVG 1.1 (no dependency): each row is ``<g class="node" data-node="NAME">`` with
the node's label, a bar for each period a preemptible node was up inside the window, and a
marker for each timed event (a ``<title>`` gives its reason and time). Every string from the
input is escaped, and characters XML 1.0 cannot hold are replaced, so the file always parses.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from xml.sax.saxutils import escape, quoteattr

from pmanifest.cluster.events import NodeEvent
from pmanifest.cluster.history import History, NodeHistory
from pmanifest.cluster.reasons import ENDED, JOINED, PREEMPTION
from pmanifest.cluster.report import stamp

WIDTH = 960
ROW = 24
TOP = 56
CHAR = 7.3  # px per character of 12 px monospace
MAX_LABEL = 48
_STEPS = [timedelta(minutes=m) for m in (1, 5, 10, 15, 30)] + [
    timedelta(hours=h) for h in (1, 2, 3, 6, 12, 24, 48, 96, 168, 336, 720)]
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_COLOURS = {PREEMPTION: "#d62728", JOINED: "#2ca02c", ENDED: "#7f7f7f"}  # by what it says
_OTHER = "#1f77b4"


def _clean(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _text(value: str) -> str:
    return escape(_clean(value))


def _attr(value: str) -> str:
    return quoteattr(_clean(value))


class _Scale:
    def __init__(self, start: datetime | None, end: datetime | None, x0: float, x1: float):
        self.start, self.end, self.x0, self.x1 = start, end, x0, x1

    def x(self, time: datetime) -> float:
        if self.start is None or self.end is None or self.end <= self.start:
            return (self.x0 + self.x1) / 2
        share = (time - self.start) / (self.end - self.start)
        return self.x0 + share * (self.x1 - self.x0)


def svg(found: History) -> str:
    label = min(MAX_LABEL, max([len("node"), *(len(n.node) for n in found.nodes)]))
    x0 = 16 + label * CHAR + 12
    scale = _Scale(found.window.start, found.window.end, x0, WIDTH - 24)
    rows = max(1, len(found.nodes))
    height = TOP + rows * ROW + 48
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="12">',
        f"<title>{_text(_title(found))}</title>",
        f'<text x="16" y="20" font-size="14">{_text(_title(found))}</text>',
        *_axis(scale, TOP + rows * ROW),
    ]
    for i, node in enumerate(found.nodes):
        parts += _row(node, TOP + i * ROW, scale)
    if not found.nodes:
        parts.append(f'<text x="{x0:.1f}" y="{TOP + 16}">no node events</text>')
    parts += _legend(TOP + rows * ROW + 36)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _title(found: History) -> str:
    w = found.window
    if w.start is None or w.end is None:
        return "node lifecycle events (no usable timestamp)"
    return f"node lifecycle events, {stamp(w.start)} to {stamp(w.end)} (UTC)"


def _axis(scale: _Scale, bottom: int) -> list[str]:
    if scale.start is None or scale.end is None or scale.end <= scale.start:
        return []
    span = scale.end - scale.start
    step = next((s for s in _STEPS if span / s <= 10), span / 10)
    first = scale.start + (-(scale.start - datetime.min.replace(tzinfo=scale.start.tzinfo))
                           % step)
    parts = []
    tick = first
    while tick <= scale.end:
        x = scale.x(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{TOP - 8}" x2="{x:.1f}" y2="{bottom}" '
                     'stroke="#dddddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{TOP - 12}" text-anchor="middle" '
                     f'font-size="10">{tick:%m-%d %H:%M}</text>')
        tick += step
    return parts


def _row(node: NodeHistory, top: int, scale: _Scale) -> list[str]:
    middle = top + ROW // 2
    name = node.node if len(node.node) <= MAX_LABEL else node.node[:MAX_LABEL - 1] + "\u2026"
    parts = [f'<g class="node" data-node={_attr(node.node)} data-compute="{node.compute}">',
             f"<title>{_text(node.node)} ({node.compute})</title>",
             f'<text x="16" y="{middle + 4}">{_text(name)}</text>',
             f'<line x1="{scale.x0:.1f}" y1="{middle}" x2="{scale.x1:.1f}" y2="{middle}" '
             'stroke="#eeeeee"/>']
    for start, end in node.up:
        a, b = scale.x(start), scale.x(end)
        parts.append(f'<rect class="up" x="{a:.1f}" y="{middle - 3}" '
                     f'width="{max(b - a, 1.0):.1f}" height="6" fill="#c6dbef"/>')
    untimed = 0
    for event in node.events:
        if event.time is None:
            untimed += 1
        else:
            parts.append(_marker(event, scale.x(event.time), middle))
    if untimed:
        parts.append(f'<text x="{scale.x1:.1f}" y="{middle + 4}" text-anchor="end" '
                     f'font-size="10">+{untimed} untimed</text>')
    parts.append("</g>")
    return parts


def _marker(event: NodeEvent, x: float, y: int) -> str:
    colour = _COLOURS.get(event.kind, _OTHER)
    title = f"<title>{_text(event.reason)} at {stamp(event.time)}</title>"
    if event.kind == PREEMPTION:
        shape = (f'<path d="M {x - 6:.1f} {y - 7} L {x + 6:.1f} {y - 7} L {x:.1f} {y + 5} Z" '
                 f'fill="{colour}">')
        return f'<g class="event">{shape}{title}</path></g>'
    return (f'<g class="event"><circle cx="{x:.1f}" cy="{y}" r="5" fill="{colour}">'
            f"{title}</circle></g>")


def _legend(y: int) -> list[str]:
    items = [("preemption", _COLOURS[PREEMPTION]), ("node joined", _COLOURS[JOINED]),
             ("node left", _COLOURS[ENDED]), ("other node event", _OTHER)]
    parts, x = ['<g class="legend">'], 16.0
    for name, colour in items:
        if colour == _COLOURS[PREEMPTION]:  # the same triangle as the markers
            parts.append(f'<path d="M {x - 1:.1f} {y - 11} L {x + 11:.1f} {y - 11} '
                         f'L {x + 5:.1f} {y + 1} Z" fill="{colour}"/>')
        else:
            parts.append(f'<circle cx="{x + 5:.1f}" cy="{y - 4}" r="5" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{y}">{name}</text>')
        x += 14 + len(name) * CHAR + 24
    parts.append(f'<rect x="{x:.1f}" y="{y - 7}" width="24" height="6" fill="#c6dbef"/>')
    parts.append(f'<text x="{x + 30:.1f}" y="{y}">preemptible node up</text>')
    parts.append("</g>")
    return parts
