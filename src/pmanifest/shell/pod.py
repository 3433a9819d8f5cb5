"""What a pod does when it is terminated, read once per pod template: each container's script,
TERM traps and preStop hook (:class:`Shell`), and the one answer to "does this pod checkpoint
on termination, and how" (:func:`checkpointing`) that every rule asks (PM201-PM203,
PM301-PM306).

A pod checkpoints when it is terminated if

- it is a worker: the preemption contract says it does (PM302 says so when it has no
  handler);
- a container's TERM trap does work (runs something other than reporting, signalling, waiting
  and shell housekeeping: ``trap 'exit 0' TERM`` and a trap that only forwards the signal to
  its child do none; a worker's forwarding trap still starts the checkpoint of the program it
  signals);
- a container names a checkpoint directory in its environment (``CHECKPOINT_DIR``,
  ``CKPT_PATH``, ...).

A preStop hook alone is no evidence: on a serving pod it drains connections, on a daemon it
cleans up. The triggers (what starts the checkpoint) are the working TERM traps and the preStop
hooks that run work or call an endpoint (``httpGet``, ``tcpSocket``: what the endpoint does is
not in the manifest). The checkpoint directories a worker names are read from its environment
and from its trainer's own arguments (``--checkpoint_dir=./ckpt``, ``--output_dir /tmp/x``,
``--save-dir``, Megatron's ``--save``, ``--resume=/x/ckpt.pth.tar``), in exec form or in a
script's commands; an argument alone does not make another role's pod checkpoint (a server's
``--checkpoint-path`` is the model it loads).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from pmanifest.kube.contract import SUPERVISOR_AFTER_HOOK, SUPERVISOR_NO_CHECKPOINT, WORKER_ROLE
from pmanifest.kube.workloads import Container, Workload
from pmanifest.loader.positions import Path
from pmanifest.shell.argv import (
    PreStop,
    container_argv,
    container_script,
    prestop_of,
    script_shell,
    supervised_script,
    supervisor_mode,
)
from pmanifest.shell.facts import Loc, ScriptFacts, Trap
from pmanifest.shell.walker import analyse

CHECKPOINT_ENV = re.compile(
    r"^(?:[A-Z0-9]+_)*(?:CHECKPOINTS?|CKPTS?)(?:_[A-Z0-9]+)*_(?:DIR|PATH|ROOT|LOCATION|FOLDER)$"
)
# A trainer's own flag naming where it writes checkpoints (``-`` read as ``_``, any case):
# --checkpoint_dir, --ckpt-path, --save-dir, --output_dir (Hugging Face's Trainer), --save
# (Megatron), and the checkpoint it resumes from after a restart (--resume=/x/ckpt.pth.tar,
# --resume-from-checkpoint): lost with the node, it resumes nothing. Not --load or
# --model-path: the weights a run starts from may well ship in the image.
CHECKPOINT_FLAG = re.compile(
    r"^(?:(?:[a-z0-9]+_)*(?:checkpoints?|ckpts?)(?:_[a-z0-9]+)*_(?:dir|path|root|location|folder)"
    r"|save|save_dir|save_path|output_dir|resume|resume_from(?:_checkpoint)?|resume_path|"
    r"resume_dir)$"
)


class Shell(NamedTuple):
    """A container with its main script's facts and its preStop hook."""

    container: Container
    script_path: Path | None  # from the document root
    facts: ScriptFacts
    prestop: PreStop | None
    program: str | None = None  # the shell that runs the script: sh, bash, dash, busybox...
    # pmanifest's supervisor whose TERM handler only stops the main: mode none (no
    # checkpoint) or prestop (the preStop hook checkpoints)
    no_checkpoint: bool = False
    # the script of the main the supervisor starts (path from the document root, facts)
    main_script: tuple[Path, ScriptFacts] | None = None

    @property
    def term_handlers(self) -> tuple[Trap, ...]:
        """The TERM traps that handle the signal (whether or not they do work): none for
        pmanifest's supervisor in mode none or prestop, whose handler only stops the main."""
        return () if self.no_checkpoint else self.facts.traps

    @property
    def prestop_path(self) -> Path:
        assert self.prestop is not None
        return (*self.container.path, *self.prestop.path)


class Directory(NamedTuple):
    """A checkpoint directory a container names, as written."""

    value: str
    where: Path  # the env value, the argv item or the script holding it
    loc: Loc | None  # inside the script at ``where``
    said: str  # how messages name it: "CKPT_DIR", "--output_dir"
    argument: bool  # named by an argument (else the environment)


class Checkpointing(NamedTuple):
    """Whether and how a pod checkpoints when it is terminated (see the module)."""

    by_contract: bool  # a worker
    # TERM traps that start a checkpoint: they do work, or pass the signal on to the program
    # (``kill -TERM "$child"``), which may checkpoint on it; not ``trap 'exit 0' TERM``
    traps: tuple[tuple[Shell, Trap], ...]
    hooks: tuple[Shell, ...]  # containers whose preStop hook runs work or calls an endpoint
    directories: tuple[tuple[Shell, Directory], ...]  # checkpoint directories it names

    @property
    def checkpoints(self) -> bool:
        """Does the pod checkpoint when it is terminated?"""
        return self.by_contract or any(t.does_work for _, t in self.traps) or any(
            not d.argument for _, d in self.directories)


def shells_of(workload: Workload) -> tuple[Shell, ...]:
    """The shell facts of every container of ``workload``, init containers included (read
    once per template: every rule of this family asks for them)."""
    found: tuple[Shell, ...] | None = workload.memo.get("shells")
    if found is None:
        found = workload.memo["shells"] = tuple(_read_shells(workload))
    return found


def _read_shells(workload: Workload) -> Iterator[Shell]:
    for container in workload.containers():
        found = container_script(container.data)
        facts = ScriptFacts()
        script_path: Path | None = None
        if found is not None and isinstance(found[1], str):
            script_path = (*container.path, *found[0])
            facts = analyse(found[1])
        argv = container_argv(container.data)
        mode = supervisor_mode(argv)
        main = supervised_script(container.data)
        main_script = None
        if main is not None and isinstance(main[1], str):
            main_script = ((*container.path, *main[0]), analyse(main[1]))
        yield Shell(container, script_path, facts, prestop_of(container.data),
                    script_shell(argv), mode in (SUPERVISOR_NO_CHECKPOINT, SUPERVISOR_AFTER_HOOK),
                    main_script)


def checkpointing(workload: Workload) -> Checkpointing:
    """How ``workload``'s pods checkpoint when they are terminated (worked out once)."""
    found: Checkpointing | None = workload.memo.get("checkpointing")
    if found is None:
        shells = shells_of(workload)
        found = workload.memo["checkpointing"] = Checkpointing(
            workload.role == WORKER_ROLE,
            tuple((s, t) for s in shells for t in s.term_handlers if starts_checkpoint(t)),
            tuple(s for s in shells if is_trigger(s.prestop)),
            tuple((s, d) for s in shells for d in _directories(s)))
    return found


def starts_checkpoint(trap: Trap) -> bool:
    """Does a TERM trap start a checkpoint: do work, or pass the signal on (``kill``)?"""
    return trap.does_work or any(c.program == "kill" for c in trap.commands)


def is_trigger(prestop: PreStop | None) -> bool:
    """Does a preStop hook trigger a checkpoint: run work, or call an endpoint?"""
    if prestop is None:
        return False
    return prestop.action in ("httpGet", "tcpSocket") or prestop.does_work


def _directories(shell: Shell) -> Iterator[Directory]:
    container = shell.container
    env = container.data.get("env")
    for i, item in enumerate(env if isinstance(env, list) else []):
        if isinstance(item, dict) and isinstance(item.get("name"), str) and \
                CHECKPOINT_ENV.match(item["name"]):
            value = item.get("value")
            yield Directory(value if isinstance(value, str) else "",
                            (*container.path, "env", i, "value"), None, item["name"], False)
    for key in ("command", "args"):
        argv = container.data.get(key)
        if isinstance(argv, list):
            for index, flag, value in flag_values(argv):
                yield Directory(value, (*container.path, key, index), None, flag, True)
    if shell.script_path is not None:
        for command in shell.facts.commands:
            for _, flag, value in flag_values(command.args):
                yield Directory(value, shell.script_path, command.loc, flag, True)


def flag_values(argv: Any) -> Iterator[tuple[int, str, str]]:
    """(index of the value, flag, value) of each checkpoint flag in an argument list:
    ``--output_dir=/x`` (its own item) or ``--output_dir /x`` (the next one)."""
    items = list(argv)
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.startswith("-"):
            continue
        flag, eq, value = item.partition("=")
        if not CHECKPOINT_FLAG.match(flag.lstrip("-").replace("-", "_").lower()):
            continue
        if eq:
            yield i, flag, value
        elif i + 1 < len(items) and isinstance(items[i + 1], str) and \
                not items[i + 1].startswith("-"):
            yield i + 1, flag, items[i + 1]
