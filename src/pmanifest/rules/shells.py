"""The shell facts of a pod template's containers, read once for every rule that reads scripts
(PM006, PM201-PM203, PM301-PM306): each container's script and preStop hook through
:mod:`pmanifest.shell`, and whether the pod checkpoints at all (:func:`checkpoints`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from pmanifest.kube.contract import SUPERVISOR_AFTER_HOOK, SUPERVISOR_NO_CHECKPOINT, WORKER_ROLE
from pmanifest.kube.workloads import Container, Workload
from pmanifest.loader.positions import Path
from pmanifest.rules import Hit, Mention
from pmanifest.shell import (
    Command,
    PreStop,
    ScriptFacts,
    Trap,
    analyse,
    container_argv,
    container_script,
    prestop_of,
    script_shell,
    supervised_script,
    supervisor_mode,
)

CHECKPOINT_ENV = re.compile(
    r"^(?:[A-Z0-9]+_)*(?:CHECKPOINTS?|CKPTS?)(?:_[A-Z0-9]+)*_(?:DIR|PATH|ROOT|LOCATION|FOLDER)$"
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
    supervised: bool = False  # runs pmanifest's supervisor, in any mode
    # the script of the main the supervisor starts (path from the document root, facts)
    main_script: tuple[Path, ScriptFacts] | None = None

    @property
    def hook_marks_only(self) -> bool:
        """A preStop exec hook that does no work in a container under pmanifest's
        supervisor: it only tells the supervisor the pod is being terminated (the rendered
        `kill -USR1 1`), which triggers no checkpoint."""
        return (self.supervised and self.prestop is not None and self.prestop.action == "exec"
                and not self.prestop.does_work)

    @property
    def term_handlers(self) -> tuple[Trap, ...]:
        """The TERM traps that stand for a checkpoint trigger: none for pmanifest's
        supervisor in mode none or prestop, whose handler only stops the main."""
        return () if self.no_checkpoint else self.facts.traps

    def trap_hit(self, trap: Trap | Command, message: str,
                 mention: Trap | Command | None = None, at: int = 0) -> Hit:
        """A hit at ``trap`` (or a command) inside the script; ``mention``: the line of
        another trap, inserted into the message at ``at``."""
        assert self.script_path is not None
        named = Mention(self.script_path, mention.loc, at) if mention is not None else None
        return Hit(self.script_path, message, inner=trap.loc, mention=named)

    @property
    def prestop_path(self) -> Path:
        assert self.prestop is not None
        return (*self.container.path, *self.prestop.path)


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
                    mode is not None, main_script)


def checkpoints(workload: Workload, found: Iterable[Shell]) -> bool:
    """Does the pod checkpoint when it is terminated? A worker does by the preemption contract
    (PM302 says so when it has no handler); any other role only when a container traps TERM
    to do work or names a checkpoint directory in its environment. A preStop hook alone is
    no evidence: on a serving pod it drains connections, on a daemon it cleans up."""
    if workload.role == WORKER_ROLE:
        return True
    return any(any(trap.does_work for trap in shell.facts.traps)
               or any(CHECKPOINT_ENV.match(name) for name in _env_names(shell.container.data))
               for shell in found)


def _env_names(container: dict[str, Any]) -> Iterator[str]:
    env = container.get("env")
    for item in env if isinstance(env, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            yield item["name"]


