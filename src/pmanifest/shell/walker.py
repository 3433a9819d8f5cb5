"""The parse: tree-sitter-bash, walked in execution order with the script's own functions
inlined, into the facts of one script (cached).

The walk is bounded: inlining can make it exponential (``f0`` calls ``f1`` twice, ``f1`` calls
``f2`` twice, ...), or copy a large function body many times (a 100 KB ``echo`` called from
thousands of places), and nesting can make it deep (``(((...)))``, ``a && b && ...``,
``$(...)``). Past ``MAX_NESTING`` levels, a budget of steps or a budget of bytes (the text of
the commands the walk records, trap actions parsed included), each in proportion to the
script's size, the script is *opaque*: its facts are empty and ``ScriptFacts.opaque`` says
why, so a rule can tell "no trap" from "not read". So is a script tree-sitter cannot parse
within its time (``parse``). No real script comes near any bound (``pmanifest.io.limits``).

Columns are characters (tree-sitter counts bytes): a position after ``é`` stays right.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from pmanifest.io.limits import (
    MAX_SHELL_NESTING as MAX_NESTING,
)
from pmanifest.io.limits import (
    MAX_TRAPS_FOLLOWED,
    SHELL_PARSE_SECONDS,
    SHELL_PARSE_SECONDS_PER_KIB,
    SHELL_PARSE_WHOLE_BYTES,
    SHELL_STEPS_BASE,
    SHELL_STEPS_PER_BYTE,
    SHELL_WALK_BASE,
    SHELL_WALK_PER_BYTE,
)
from pmanifest.shell.facts import QUICK, Command, Loc, ScriptFacts, Trap, sleeps_forever

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree


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


class _Opaque(Exception):
    """The walk went past a bound: the reason, for ScriptFacts.opaque."""


@dataclass
class _Budget:
    """Shared by a script's walkers (its trap actions included)."""

    steps: int
    lines: Sequence[bytes]  # of the script (function bodies are parts of it)
    text: int = 0  # bytes of commands the walk may still record (their words are copied)
    deadline: float = 0.0  # (monotonic) of every parse of the script and its trap actions
    depth: int = 0

    def spend_text(self, size: int) -> None:
        self.text -= size
        if self.text < 0:
            raise _Opaque("too much text to read once the script's functions are inlined")


@dataclass
class _Event:
    """One step of a script walk: a command run or a trap set."""

    command: Command | None = None
    trap: Trap | None = None
    reset: bool = False  # ``trap - TERM``: the handler is gone


@dataclass
class _Walker:
    """Walks statements in execution order, inlining calls of the script's own functions."""

    functions: dict[str, Node]
    budget: _Budget
    lines: Sequence[bytes]  # of the parsed text, for character columns
    events: list[_Event] = field(default_factory=list)
    calling: tuple[str, ...] = ()
    offset: Loc = _ORIGIN  # where the parsed text starts in the script (trap actions)
    captured: int = 0  # depth of ``$(...)`` around the current node

    def loc(self, node: Node) -> Loc:
        row, byte = node.start_point
        col = len(self.lines[row][:byte].decode("utf-8", "replace")) if byte else 0
        if row == 0:
            return Loc(self.offset.row, self.offset.column + col)
        return Loc(self.offset.row + row, col)

    def walk(self, node: Node, background: bool, subshell: bool) -> None:
        budget = self.budget
        budget.steps -= 1
        budget.depth += 1
        if budget.steps < 0:
            raise _Opaque("too much to read once the script's functions are inlined")
        if budget.depth > MAX_NESTING:
            raise _Opaque(f"nested more than {MAX_NESTING} levels deep")
        self.step(node, background, subshell)
        budget.depth -= 1

    def step(self, node: Node, background: bool, subshell: bool) -> None:
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
        for arg in node.children_by_field_name("argument"):
            for sub in _substitutions(arg):
                self.walk(sub, background, True)
        # what is recorded: the command's words (its substitutions verbatim), once they are
        # walked (so that nesting meets its own bound first)
        self.budget.spend_text(node.end_byte - node.start_byte)
        args = tuple(literal(a) for a in node.children_by_field_name("argument"))
        if name in self.functions:
            if name not in self.calling:  # a recursive call adds nothing new
                inner = _Walker(self.functions, self.budget, self.budget.lines, self.events,
                                (*self.calling, name), captured=self.captured)
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
        text = action.encode("utf-8")
        self.budget.spend_text(len(text))  # parsed again each time the trap is walked
        inner = _Walker(self.functions, self.budget, text.split(b"\n"), [], self.calling,
                        Loc(at.row, at.column + quoted))
        inner.walk(parse(text, self.budget.deadline).root_node, False, False)
        commands = tuple(e.command for e in inner.events if e.command is not None)
        trap = Trap(command.loc, signals, action, commands)
        self.events.append(_Event(trap=trap))


def _substitutions(node: Node) -> Iterator[Node]:
    """The ``$(...)`` and ``<(...)`` in a word (``${a:-${b:-$(c)}}`` nests: no recursion)."""
    stack = [node]
    while stack:
        found = stack.pop()
        if found.type in ("command_substitution", "process_substitution"):
            yield found
        else:
            stack.extend(reversed(found.named_children))


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


def parse(text: bytes, deadline: float) -> Tree:
    """tree-sitter's tree of a script, or _Opaque past ``deadline`` (monotonic): its error
    recovery is quadratic on some broken text (60 KB of ``a=(`` took 15 s and more). Only a
    read callback lets tree-sitter stop, and it keeps what the callback returns: a short
    script, which cannot take long, is parsed whole."""
    if len(text) <= SHELL_PARSE_WHOLE_BYTES:
        return _parser().parse(text)

    def read(offset: int, point: object) -> bytes:
        return text[offset:offset + _CHUNK]

    def progress(offset: int, has_error: bool) -> bool:  # True: stop
        return time.monotonic() > deadline

    try:
        return _parser().parse(read, progress_callback=progress)
    except ValueError:  # stopped (tree-sitter says "Parsing failed")
        _parser().reset()
        raise _Opaque("it did not parse in the time its size allows (broken syntax that "
                      "tree-sitter's error recovery is slow on)") from None


_CHUNK = 1 << 16


@functools.lru_cache(maxsize=512)
def analyse(script: str) -> ScriptFacts:
    """The facts of one script (cached: the same wrapper is often pasted into many pods)."""
    text = script.encode("utf-8")
    lines = text.split(b"\n")
    seconds = SHELL_PARSE_SECONDS + SHELL_PARSE_SECONDS_PER_KIB * len(text) / 1024
    budget = _Budget(SHELL_STEPS_BASE + SHELL_STEPS_PER_BYTE * len(text), lines,
                     SHELL_WALK_BASE + SHELL_WALK_PER_BYTE * len(text),
                     time.monotonic() + seconds)
    try:
        root = parse(text, budget.deadline).root_node
        walker = _Walker(_functions(root), budget, lines)
        walker.walk(root, False, False)
    except _Opaque as exc:
        return ScriptFacts(opaque=str(exc))
    return _facts(walker.events)


def _facts(events: Sequence[_Event]) -> ScriptFacts:
    traps: list[Trap] = []
    blocking = _Blocking(_waited_after(events))
    handler = False
    main_shell = [(i, e.command) for i, e in enumerate(events) if _in_main_shell(e.command)]
    for i, event in enumerate(events):
        if event.trap is not None:
            following = (() if len(traps) >= MAX_TRAPS_FOLLOWED
                         else tuple(c for j, c in main_shell if j > i))
            traps.append(event.trap._replace(following=following))
            handler = True
            continue
        if event.reset:
            handler = False
        command = event.command
        if handler and command is not None and not command.captured:
            blocking.see(i, command)
    commands = tuple(e.command for e in events if e.command is not None)
    return ScriptFacts(tuple(traps), tuple(blocking.execs), tuple(blocking.foreground),
                       commands)


@dataclass
class _Blocking:
    """What the main shell runs while a TERM handler is set: ``exec`` that discards it, and
    foreground commands that keep it from running."""

    waited: list[bool]  # for each event, whether the main shell waits after it
    execs: list[Command] = field(default_factory=list)
    foreground: list[Command] = field(default_factory=list)
    main_started: bool = False  # the main process went to the background: then epilogue

    def see(self, index: int, command: Command) -> None:
        kind = _while_trapped(command, self.main_started, self.waited[index])
        if kind == "main":
            self.main_started = True
        elif kind == "exec":
            self.execs.append(command)
        elif kind == "foreground":
            self.foreground.append(command)


def _in_main_shell(command: Command | None) -> TypeGuard[Command]:
    return command is not None and not (command.subshell or command.background
                                        or command.captured)


def _while_trapped(command: Command, main_started: bool, waited: bool) -> str:
    """What a command run while a TERM handler is set is: the main process started in the
    background ("main"), an ``exec`` of the main shell, a command the trap waits for
    ("foreground"), or nothing of note ("")."""
    target = command.exec_target
    runs_long = command.program not in QUICK or target is not None or sleeps_forever(command)
    if command.background:
        return "main" if runs_long else ""
    if target is not None and not command.subshell:
        return "exec"
    if sleeps_forever(command) or (runs_long and not main_started and not waited):
        return "foreground"
    return ""


def _waited_after(events: Sequence[_Event]) -> list[bool]:
    """For each event, whether the main shell ``wait``s after it (one pass, from the end)."""
    out = [False] * len(events)
    later = False
    for i in range(len(events) - 1, -1, -1):
        out[i] = later
        command = events[i].command
        if command is not None and command.program == "wait" and not command.subshell:
            later = True
    return out

