"""Read the shell scripts a manifest runs, with a real parser (tree-sitter-bash).

Regular expressions cannot tell a ``trap`` from the text of a here-document, a quoted string
or a function that is never called. This module parses each script once and reports *facts*
the checkpoint rules reason about:

- the SIGTERM traps the main shell sets (``TERM``, ``SIGTERM``, ``15``, in any case), with the
  commands their action runs (an action that calls a shell function is read through the
  function's body), whether that is checkpoint work, and whether it ``exit 0``s;
- ``exec CMD`` in the main shell after a trap (the trap is discarded with the shell);
- commands of the main shell that run in the foreground after a trap (the trap waits for them);
- every command the script runs (for preStop hooks: does it work, does it sleep).

Positions are 0-based (row, column) inside the script; :func:`script_pos` maps them to the
1-based file position through the YAML scalar that holds the script.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pmanifest.document import Document, Path, Pos, ScalarInfo
from pmanifest.workloads import get

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh"})
# Launchers that run their operands as a command line (signal forwarders, env).
LAUNCHERS = frozenset({"env", "tini", "tini-static", "dumb-init"})
TERM_SIGNALS = frozenset({"TERM", "SIGTERM", "15"})

# Commands that are no checkpoint work: reporting, signalling, waiting, shell housekeeping.
NOT_WORK = frozenset({
    "echo", "printf", "exit", "kill", "wait", "true", "false", ":", "trap", "sleep", "return",
    "set", "unset", "export", "local", "readonly", "declare", "typeset", "shift", "cd", "test",
    "[", "[[", "logger",
})
# Commands after a trap that do not make up "the main process" when run in the foreground.
QUICK = NOT_WORK | frozenset({
    "exec", "mkdir", "touch", "ln", "chmod", "chown", "date", "hostname", "id", "umask", "ulimit",
    "source", ".", "eval", "alias", "command", "type", "hash", "read", "pwd", "nvidia-smi",
})
# Where writing a checkpoint makes no sense, so an argument under them is not a checkpoint path.
SYSTEM_DIRS = ("/dev", "/proc", "/sys", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64",
               "/run", "/var/run")
NOT_DATA_SUFFIXES = (".py", ".sh", ".bash", ".pl", ".rb", ".js", ".yaml", ".yml", ".json",
                     ".toml", ".cfg", ".ini", ".conf")
# Commands whose destination is their last operand (the others are sources).
COPIERS = frozenset({"cp", "mv", "rsync", "install", "ln", "scp"})


@dataclass(frozen=True)
class Loc:
    """A 0-based (row, column) inside a script."""

    row: int
    column: int


@dataclass(frozen=True)
class Command:
    """A simple command: its program and arguments with quotes removed (expansions such as
    ``$DIR`` kept verbatim), where it is, and how it runs."""

    name: str
    args: tuple[str, ...]
    loc: Loc
    background: bool = False  # runs asynchronously (``&``), itself or an enclosing list
    subshell: bool = False  # runs in a subshell, pipeline stage or command substitution
    captured: bool = False  # its output is captured by ``$(...)``: it computes a value

    @property
    def program(self) -> str:
        return posixpath.basename(self.name)

    @property
    def does_work(self) -> bool:
        return not self.captured and self.program not in NOT_WORK

    @property
    def exec_target(self) -> str | None:
        """For ``exec CMD``, the command exec replaces the shell with (None for redirections)."""
        if self.program != "exec":
            return None
        args = list(self.args)
        while args and args[0].startswith("-"):
            option = args.pop(0)
            if option == "--":
                break
            if option == "-a" and args:
                args.pop(0)
        return args[0] if args else None


@dataclass(frozen=True)
class Trap:
    """``trap ACTION SIGNALS`` whose signals include TERM."""

    loc: Loc
    signals: tuple[str, ...]
    action: str
    commands: tuple[Command, ...]  # what the action runs, through called functions

    @property
    def work(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.does_work)

    @property
    def does_work(self) -> bool:
        return bool(self.work)

    @property
    def exits_zero(self) -> bool:
        return any(c.program == "exit" and c.args[:1] == ("0",) for c in self.commands)


@dataclass(frozen=True)
class ScriptFacts:
    traps: tuple[Trap, ...] = ()  # TERM handlers the main shell sets, in order
    execs: tuple[Command, ...] = ()  # ``exec CMD`` in the main shell while a handler is set
    foreground: tuple[Command, ...] = ()  # blocking commands while a handler is set
    commands: tuple[Command, ...] = ()  # every command run (not trap actions), in order

    @property
    def sleeps(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.program == "sleep" and _sleeps_at_all(c))

    @property
    def work(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.does_work)


_ZERO = re.compile(r"0*(\.0*)?[smhd]?")


def _sleeps_at_all(command: Command) -> bool:
    """``sleep 0`` does not sleep; anything else (``sleep 5``, ``sleep "$T"``) does."""
    return not all(_ZERO.fullmatch(a) for a in command.args)


def _sleeps_forever(command: Command) -> bool:
    return command.program == "sleep" and command.args[:1] in (("infinity",), ("inf",))


# --- finding the script ---------------------------------------------------------------------


def script_index(argv: Sequence[Any]) -> int | None:
    """Index in ``argv`` of the script a shell runs with ``-c`` (``sh -c``, ``bash -euc``,
    ``busybox sh -c``, behind ``env``/``tini --``), or None when argv runs no shell script."""
    i = 0
    while i < len(argv) and isinstance(argv[i], str):
        program = posixpath.basename(argv[i])
        if program in LAUNCHERS:
            i += 1
            while i < len(argv) and isinstance(argv[i], str) and (
                argv[i].startswith("-") or "=" in argv[i]
            ):
                i += 1
            continue
        if program == "busybox" and i + 1 < len(argv) and argv[i + 1] in SHELLS:
            i += 1
            program = str(argv[i])
        if program not in SHELLS:
            return None
        return _after_c(argv, i + 1)
    return None


def _after_c(argv: Sequence[Any], i: int) -> int | None:
    has_c = False
    while i < len(argv):
        arg = argv[i]
        if not isinstance(arg, str):
            return None
        if arg == "--":
            i += 1
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg.startswith("--") or (len(arg) > 1 and arg[0] in "-+"):
            has_c = has_c or (arg[0] == "-" and not arg.startswith("--") and "c" in arg[1:])
            i += 1
            continue
        break
    if has_c and i < len(argv) and isinstance(argv[i], str):
        return i
    return None


def container_script(container: dict[str, Any]) -> tuple[Path, str] | None:
    """The main script of a container (``command``, then ``args``) as (path relative to the
    container, text). Without ``command`` the image's entrypoint is unknown: None."""
    command = container.get("command")
    args = container.get("args")
    if not isinstance(command, list) or not command:
        return None
    argv = list(command) + (list(args) if isinstance(args, list) else [])
    index = script_index(argv)
    if index is None:
        return None
    if index < len(command):
        return ("command", index), argv[index]
    return ("args", index - len(command)), argv[index]


@dataclass(frozen=True)
class PreStop:
    """A container's preStop hook."""

    path: Path  # of ``lifecycle.preStop``, relative to the container
    action: str  # exec | sleep | httpGet | tcpSocket | unknown
    argv: tuple[str, ...] = ()  # exec command, when every item is a string
    script: tuple[Path, str] | None = None  # exec command run through a shell -c
    sleep_seconds: Any = None

    def commands(self) -> tuple[Command, ...]:
        """What the hook runs: the script's commands, or the exec command itself."""
        if self.script is not None:
            return analyse(self.script[1]).commands
        if self.argv:
            return (Command(self.argv[0], self.argv[1:], Loc(0, 0)),)
        return ()

    @property
    def does_work(self) -> bool:
        return self.action == "exec" and any(c.does_work for c in self.commands())


def prestop_of(container: dict[str, Any]) -> PreStop | None:
    lifecycle = container.get("lifecycle")
    hook = lifecycle.get("preStop") if isinstance(lifecycle, dict) else None
    if not isinstance(hook, dict):
        return None
    path: Path = ("lifecycle", "preStop")
    exec_ = hook.get("exec")
    if isinstance(exec_, dict):
        command = exec_.get("command")
        argv = command if isinstance(command, list) else []
        if not argv or not all(isinstance(a, str) for a in argv):
            return PreStop(path, "exec")
        index = script_index(argv)
        script = ((*path, "exec", "command", index), argv[index]) if index is not None else None
        return PreStop(path, "exec", tuple(argv), script)
    sleep = hook.get("sleep")
    if isinstance(sleep, dict):
        return PreStop(path, "sleep", sleep_seconds=sleep.get("seconds"))
    for action in ("httpGet", "tcpSocket"):
        if action in hook:
            return PreStop(path, action)
    return PreStop(path, "unknown")


# --- parsing --------------------------------------------------------------------------------


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
    offset: Loc = Loc(0, 0)  # where the parsed text starts in the script (trap actions)
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


# --- checkpoint paths -------------------------------------------------------------------------


def written_paths(command: Command) -> tuple[str, ...]:
    """Absolute paths a checkpoint command may write to: its absolute path operands and
    ``--flag=/path`` values, without the program, scripts, config files and system dirs; for
    copy-like commands only the destination; for ``tar`` the archive."""
    args = list(command.args)
    if command.program == "tar":
        args = _tar_archive(args)
    elif command.program in COPIERS:
        operands = [a for a in args if not a.startswith("-")]
        args = operands[-1:]
    out: list[str] = []
    for arg in args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if _is_data_path(value) and value not in out:
            out.append(value)
    return tuple(out)


def _tar_archive(args: list[str]) -> list[str]:
    for i, arg in enumerate(args):
        if arg.startswith("--file="):
            return [arg.split("=", 1)[1]]
        if (arg == "--file" or (not arg.startswith("--") and "f" in arg.lstrip("-"))) and (
            i + 1 < len(args)
        ):
            return [args[i + 1]]
    return []


def _is_data_path(value: str) -> bool:
    if not value.startswith(("/", "$")) or value.endswith(NOT_DATA_SUFFIXES):
        return False
    if value.startswith("/"):
        return not any(value == d or value.startswith(d + "/") for d in SYSTEM_DIRS)
    return True  # ``$DIR/...``: the caller substitutes what it knows


# --- positions --------------------------------------------------------------------------------


def script_pos(doc: Document, path: Path, loc: Loc) -> Pos:
    """The 1-based file position of ``loc`` inside the string at ``path``: exact for literal
    block scalars and one-line plain or quoted scalars, else the scalar's start."""
    info = doc.positions.scalars.get(path)
    start = doc.positions.value_at(path)
    value = get(doc.data, path)
    if info is None or not isinstance(value, str):
        return start
    lines = doc.source_lines
    script_lines = value.split("\n")
    if loc.row >= len(script_lines):
        return info.pos
    if info.style == "|":
        file_row = info.pos.line + loc.row  # 0-based index of the content line
        indent = _block_indent(lines, info.pos.line)
        if indent is None or file_row >= len(lines):
            return info.pos
        text = lines[file_row]
        if text[indent:].rstrip("\r") != script_lines[loc.row].rstrip("\r"):
            return info.pos
        return Pos(file_row + 1, indent + loc.column + 1)
    if info.style in (None, "'", '"') and "\n" not in value:
        columns = _flow_columns(lines, info, value)
        if columns is not None and loc.column < len(columns):
            return Pos(info.pos.line, columns[loc.column])
    return info.pos


def _block_indent(lines: Sequence[str], indicator_line: int) -> int | None:
    for text in lines[indicator_line:]:
        if text.strip():
            return len(text) - len(text.lstrip(" "))
    return None


def _flow_columns(lines: Sequence[str], info: ScalarInfo, value: str) -> list[int] | None:
    """1-based file column of each character of a one-line flow scalar, when the source
    decodes exactly to ``value``."""
    if not 1 <= info.pos.line <= len(lines):
        return None
    text = lines[info.pos.line - 1]
    col = info.pos.column - 1
    if info.style is None:
        return list(range(col + 1, col + 1 + len(value))) if text[col:].startswith(value) else None
    quote = info.style
    i = col + 1
    out: list[int] = []
    decoded = ""
    while i < len(text) and len(decoded) < len(value):
        ch = text[i]
        if quote == "'" and text.startswith("''", i):
            decoded, i = decoded + "'", i + 2
            out.append(i - 1)
            continue
        if quote == '"' and ch == "\\" and i + 1 < len(text):
            simple = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", " ": " "}
            if text[i + 1] not in simple:
                return None
            decoded, i = decoded + simple[text[i + 1]], i + 2
            out.append(i - 1)
            continue
        if ch == quote:
            break
        decoded += ch
        i += 1
        out.append(i)
    return out if decoded == value else None
