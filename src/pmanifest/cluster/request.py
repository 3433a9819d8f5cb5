"""A cluster request or read, from a JSON/YAML body or a saved ``tg`` command line, with the
position of every field.

Three shapes, one model (``ClusterRequest``: API field name -> value and position):

- a create or update request body, or the JSON a cluster read returns (JSON or YAML, parsed
  by the project's loader). A read has response-only fields (``cluster_id``, ``status``,
  ``desired_preemptible_gpus``, ``allocated_preemptible_gpus``, ``node_lifecycle_events``);
  a create has the fields that identify a new cluster (``name``/``cluster_name``, ``region``,
  ``gpu_type``, ``billing_type``); anything else is an update. ``--as`` overrides the guess;
- a saved command line, ``tg beta clusters create|update ... --num-preemptible-gpus 8 ...``
  (``together`` for ``tg`` too, ``\\``-continued lines, ``#`` comments, an optional leading
  ``$ `` prompt and ``NAME=value`` assignments before the command). Each ``--flag`` maps to
  the field of the same name in snake case, ``--project`` (a global flag) and the
  ``TOGETHER_PROJECT_ID`` assignment to ``project_id``; positions point into the command line.
  Digits-only values are integers, as the CLI would parse them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pmanifest.errors import InputError
from pmanifest.io.limits import TooLong, bounded_integer
from pmanifest.loader.documents import YamlProblem, decode, load_single
from pmanifest.loader.positions import Pos

CREATE, UPDATE, READ = "create", "update", "read"
KINDS = (CREATE, UPDATE, READ)
_READ_ONLY = ("cluster_id", "status", "desired_preemptible_gpus", "allocated_preemptible_gpus",
              "node_lifecycle_events")
_CREATE_ONLY = ("name", "cluster_name", "region", "gpu_type", "billing_type")
# every field the cluster API documents (request, response, and the API reference's response)
KNOWN_FIELDS = frozenset({
    "name", "cluster_name", "region", "gpu_type", "cluster_type", "num_gpus",
    "num_preemptible_gpus", "billing_type", "project_id", "nvidia_driver_version",
    "cuda_version", "driver_version", "duration_hours", "cluster_id", "status",
    "desired_preemptible_gpus", "allocated_preemptible_gpus", "node_lifecycle_events",
    "volumes", "control_plane_nodes", "gpu_worker_nodes", "kube_config"})
_BOOLEAN_FLAGS = frozenset({"--non-interactive", "--json"})
_FLAG_FIELDS = {"--project": "project_id"}
_ENV_FIELDS = {"TOGETHER_PROJECT_ID": "project_id"}
_PROGRAMS = ("tg", "together")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_INTEGER = re.compile(r"-?[0-9]+\Z")


@dataclass(frozen=True)
class Value:
    """A field of a cluster request, with where its value starts."""

    value: Any
    pos: Pos  # where the value starts
    key: Pos  # where its key (or flag) starts


@dataclass(frozen=True)
class ClusterRequest:
    """A cluster create, update or read, as a body or a command line."""

    file: str
    kind: str  # CREATE | UPDATE | READ
    form: str  # "body" | "command"
    fields: dict[str, Value]
    start: Pos  # where the request starts: findings about a missing field point here

    def get(self, name: str) -> Any:
        found = self.fields.get(name)
        return None if found is None else found.value

    @property
    def name(self) -> str | None:
        for key in ("name", "cluster_name"):
            value = self.get(key)
            if isinstance(value, str):
                return value
        return None


def read_request(path: str, kind: str | None = None) -> ClusterRequest:
    """The request in the file ``path`` (``-``: stdin), or an InputError naming it."""
    from pmanifest.io.reading import read_input

    name = "<stdin>" if path == "-" else path
    raw = read_input(path, name)
    try:
        text = decode(raw)
    except YamlProblem as problem:
        raise InputError(problem.message, name, problem.line, problem.column) from None
    return parse_request(text, name, kind)


def parse_request(text: str, file: str, kind: str | None = None) -> ClusterRequest:
    """The request in ``text`` (already decoded), or an InputError naming the file."""
    if _looks_like_command(text):
        return _command(text, file, kind)
    try:
        loaded = load_single(text)
    except YamlProblem as problem:
        raise InputError(f"{problem.message}; expected a cluster request body (JSON or YAML), "
                         "the JSON of a cluster read, or a saved `tg beta clusters` command "
                         "line", file, problem.line, problem.column) from None
    data = loaded.data
    if not isinstance(data, dict):
        raise InputError("expected a mapping of cluster fields (a request body or the JSON of "
                         "a cluster read)", file, loaded.start_line, 1)
    if "apiVersion" in data and "kind" in data:
        raise InputError("a Kubernetes object, not a cluster request (lint it with `pmanifest "
                         "lint`)", file, loaded.start_line, 1)
    if not KNOWN_FIELDS & set(data):
        raise InputError("no field of a cluster request or read (num_gpus, "
                         "num_preemptible_gpus, project_id, ...)", file, loaded.start_line, 1)
    positions = loaded.positions
    positions.prefetch([(), *((key,) for key in data)])
    fields = {key: Value(value, positions.value_at((key,)), positions.at((key,)))
              for key, value in data.items() if isinstance(key, str)}
    return ClusterRequest(file, kind or _guess(fields), "body", fields, positions.at(()))


def _guess(fields: dict[str, Value]) -> str:
    if any(key in fields for key in _READ_ONLY):
        return READ
    if any(key in fields for key in _CREATE_ONLY):
        return CREATE
    return UPDATE


def _looks_like_command(text: str) -> bool:
    for line in text.split("\n"):  # lines as sh reads them (and the lexer below): a CR, VT
        # or U+2028 ends no line, so a comment runs on past it
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        words = stripped.removeprefix("$ ").split()
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        return bool(words) and words[0] in _PROGRAMS
    return False


# --- the command line ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    """A word of a saved command line, with where it starts."""

    text: str
    pos: Pos


def tokens(text: str) -> list[_Token]:
    """POSIX shell words with the position where each starts: quotes, backslashes and
    ``\\``-newline continuations as sh reads them; ``#`` at a word's start comments out the
    rest of the line; a leading ``$ `` prompt on the first command line is dropped."""
    return _Lexer(text).run()


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.words: list[_Token] = []

    def pos(self, index: int) -> Pos:
        line = self.text.count("\n", 0, index) + 1
        return Pos(line, index - (self.text.rfind("\n", 0, index) + 1) + 1)

    def run(self) -> list[_Token]:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char in " \t\n" or text.startswith("\\\n", self.i):
                self.i += 2 if char == "\\" else 1
            elif char == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif char == "$" and not self.words and text.startswith("$ ", self.i):
                self.i += 2
            else:
                self.word()
        return self.words

    def word(self) -> None:
        start, text, out = self.i, self.text, []
        while self.i < len(text) and text[self.i] not in " \t\n":
            char = text[self.i]
            if char == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise _unclosed(self, "'", self.i)
                out.append(text[self.i + 1:end])
                self.i = end + 1
            elif char == '"':
                out.append(self.double_quoted())
            elif char == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2  # a continuation inside a word joins it
                    continue
                out.append(text[self.i + 1:self.i + 2])
                self.i += 2
            else:
                out.append(char)
                self.i += 1
        self.words.append(_Token("".join(out), self.pos(start)))

    def double_quoted(self) -> str:
        text, opening, out = self.text, self.i, []
        self.i += 1
        while self.i < len(text) and text[self.i] != '"':
            if text[self.i] == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`"):
                out.append(text[self.i + 1])
                self.i += 2
            elif text.startswith("\\\n", self.i):
                self.i += 2
            else:
                out.append(text[self.i])
                self.i += 1
        if self.i >= len(text):
            raise _unclosed(self, '"', opening)
        self.i += 1
        return "".join(out)


class CommandError(Exception):
    def __init__(self, message: str, pos: Pos) -> None:
        super().__init__(message)
        self.message, self.pos = message, pos


def _unclosed(lexer: _Lexer, quote: str, index: int) -> CommandError:
    return CommandError(f"unclosed {quote} in the command line", lexer.pos(index))


def _command(text: str, file: str, kind: str | None) -> ClusterRequest:
    try:
        words = tokens(text)
    except CommandError as exc:
        raise InputError(exc.message, file, exc.pos.line, exc.pos.column) from None
    fields: dict[str, Value] = {}
    while words and _ASSIGNMENT.match(words[0].text):
        name, _, value = words[0].text.partition("=")
        if name in _ENV_FIELDS:
            at = Pos(words[0].pos.line, words[0].pos.column + len(name) + 1)
            fields[_ENV_FIELDS[name]] = Value(_typed(value, file, at), at, words[0].pos)
        words.pop(0)
    if not words:
        raise InputError("expected `tg beta clusters create ...` or `tg beta clusters update "
                         "ID ...` after the assignments", file, 1, 1)
    positional, flags = _split(words[1:], file)
    fields.update(flags)
    verb = [w.text for w in positional[:3]]
    if verb[:2] != ["beta", "clusters"] or len(verb) < 3 or verb[2] not in (CREATE, UPDATE):
        raise InputError("expected `tg beta clusters create ...` or `tg beta clusters update "
                         "ID ...`", file, words[0].pos.line, words[0].pos.column)
    return ClusterRequest(file, kind or verb[2], "command", fields, words[0].pos)


def _split(words: list[_Token], file: str) -> tuple[list[_Token], dict[str, Value]]:
    """Positional words, and ``--flag value`` / ``--flag=value`` as fields."""
    positional: list[_Token] = []
    fields: dict[str, Value] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.text.startswith("--"):
            positional.append(word)
            continue
        if word.text in _BOOLEAN_FLAGS:
            continue
        flag, eq, inline = word.text.partition("=")
        if eq:
            value, at = inline, Pos(word.pos.line, word.pos.column + len(flag) + 1)
        elif i < len(words) and not words[i].text.startswith("--"):
            value, at = words[i].text, words[i].pos
            i += 1
        else:
            raise InputError(f"{flag} needs a value", file, word.pos.line, word.pos.column)
        name = _FLAG_FIELDS.get(flag, flag[2:].replace("-", "_"))
        fields[name] = Value(_typed(value, file, at), at, word.pos)
    return positional, fields


def _typed(value: str, file: str, at: Pos) -> Any:
    """Digits-only values are integers (at most MAX_INTEGER_DIGITS of them)."""
    if not _INTEGER.match(value):
        return value
    try:
        return bounded_integer(value, int)
    except TooLong as exc:
        raise InputError(str(exc), file, at.line, at.column) from None
