"""The parse: tree-sitter-bash, walked in execution order with the script's own functions
inlined, into the facts of one script (cached)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pmanifest.shell.facts import QUICK, Command, Loc, ScriptFacts, Trap, _sleeps_forever

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@functools.cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


_BACKSLASH = re.compile(r"\\(.)", re.S)


def literal(node: Node) -> str:
    """A word with its quotes removed; expansions (``$X``, ``$(cmd)``) are kept verbatim."""
    kind = node.type
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "ansi_c_string":
        return _text(node)[2:-1]
    if kind == "string":
        inner = _text(node)[1:-1]
        return re.sub(r'\\([$`"\\\n])', r"\1", inner)
    if kind == "concatenation":
        return "".join(literal(c) for c in node.named_children)
    if kind == "word":
        return _BACKSLASH.sub(r"\1", _text(node))
    return _text(node)


def _signal(name: str) -> str:
    upper = name.upper()
    if upper == "0":
        return "EXIT"
    if upper == "15":
        return "TERM"
    return upper[3:] if upper.startswith("SIG") else upper


_ORIGIN = Loc(0, 0)


@dataclass
class _Event:
    command: Command | None = None
    trap: Trap | None = None
    reset: bool = False  # ``trap - TERM``: the handler is gone


@dataclass
class _Walker:
    """Walks statements in execution order, inlining calls of the script's own functions."""

    functions: dict[str, Node]
    events: list[_Event] = field(default_factory=list)
    calling: tuple[str, ...] = ()
    offset: Loc = _ORIGIN  # where the parsed text starts in the script (trap actions)
    captured: int = 0  # depth of ``$(...)`` around the current node

    def loc(self, node: Node) -> Loc:
        row, col = node.start_point
        if row == 0:
            return Loc(self.offset.row, self.offset.column + col)
        return Loc(self.offset.row + row, col)

    def walk(self, node: Node, background: bool, subshell: bool) -> None:
        kind = node.type
        if kind in ("function_definition", "heredoc_body", "comment"):
            return
        if kind == "command":
            self.command(node, background, subshell)
            return
        if kind in ("command_substitution", "process_substitution"):
            self.captured += 1
            try:
                for child in node.named_children:
                    self.walk(child, background, True)
            finally:
                self.captured -= 1
            return
        if kind == "subshell":
            subshell = True
        for child in node.named_children:
            if kind == "pipeline" and child.type != "heredoc_redirect":
                self.walk(child, background, True)
                continue
            amp = child.next_sibling
            bg = background or (amp is not None and not amp.is_named and amp.type == "&")
            self.walk(child, bg, subshell)

    def command(self, node: Node, background: bool, subshell: bool) -> None:
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.walk(child, background, subshell)
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = literal(name_node.named_children[0] if name_node.named_children else name_node)
        args = tuple(literal(a) for a in node.children_by_field_name("argument"))
        for arg in node.children_by_field_name("argument"):
            for sub in _substitutions(arg):
                self.walk(sub, background, True)
        if name in self.functions:
            if name not in self.calling:  # a recursive call adds nothing new
                inner = _Walker(self.functions, self.events, (*self.calling, name),
                                captured=self.captured)
                inner.walk(self.functions[name], background, subshell)
            return
        command = Command(name, args, self.loc(node), background, subshell, self.captured > 0)
        if name == "trap" and not subshell and not background:
            self.trap(command, node)
        self.events.append(_Event(command=command))

    def trap(self, command: Command, node: Node) -> None:
        args = list(command.args)
        nodes = list(node.children_by_field_name("argument"))
        if args and args[0] == "--":
            args, nodes = args[1:], nodes[1:]
        if len(args) < 2 or (args[0].startswith("-") and args[0] != "-"):
            return
        signals = tuple(_signal(s) for s in args[1:])
        if "TERM" not in signals:
            return
        action = args[0]
        if action in ("", "-") or action.isdigit():
            self.events.append(_Event(reset=True))
            return
        start = nodes[0]
        quoted = 1 if start.type in ("raw_string", "string") else 0
        at = self.loc(start)
        inner = _Walker(self.functions, [], self.calling, Loc(at.row, at.column + quoted))
        inner.walk(_parser().parse(action.encode("utf-8")).root_node, False, False)
        commands = tuple(e.command for e in inner.events if e.command is not None)
        trap = Trap(command.loc, signals, action, commands)
        self.events.append(_Event(trap=trap))


def _substitutions(node: Node) -> Iterator[Node]:
    if node.type in ("command_substitution", "process_substitution"):
        yield node
        return
    for child in node.named_children:
        yield from _substitutions(child)


def _functions(root: Node) -> dict[str, Node]:
    out: dict[str, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                out.setdefault(_text(name), body)
        if node.type != "heredoc_body":
            stack.extend(node.named_children)
    return out


@functools.lru_cache(maxsize=512)
def analyse(script: str) -> ScriptFacts:
    """The facts of one script (cached: the same wrapper is often pasted into many pods)."""
    root = _parser().parse(script.encode("utf-8")).root_node
    walker = _Walker(_functions(root))
    walker.walk(root, False, False)
    events = walker.events
    traps: list[Trap] = []
    execs: list[Command] = []
    foreground: list[Command] = []
    commands = [e.command for e in events if e.command is not None]
    handler = False
    main_started = False  # the main process went to the background: what follows is epilogue
    for i, event in enumerate(events):
        if event.trap is not None:
            traps.append(event.trap)
            handler = True
            continue
        if event.reset:
            handler = False
        command = event.command
        if not handler or command is None or command.captured:
            continue
        target = command.exec_target
        runs_long = command.program not in QUICK or target is not None or _sleeps_forever(command)
        if command.background:
            main_started = main_started or runs_long
        elif target is not None and not command.subshell:
            execs.append(command)
        elif _sleeps_forever(command) or (
            runs_long and not main_started and not _waited_later(events[i + 1:])
        ):
            foreground.append(command)
    return ScriptFacts(tuple(traps), tuple(execs), tuple(foreground), tuple(commands))


def _waited_later(events: Sequence[_Event]) -> bool:
    return any(
        e.command is not None and e.command.program == "wait" and not e.command.subshell
        for e in events
    )

