"""Rules: checkpoint triggers and handlers (see policies/rules-checkpoint.yaml).

The preemption contract: SIGTERM at T+0, the preStop hook first, both inside one grace period
capped by the provider (the profile's cap: 300 s on Together), the node gone as soon as the
pods exit. These rules read each container's shell script (``sh -c``) and preStop hook
through :mod:`pmanifest.shell`, never with regular expressions, and point at the exact line
inside the script where the YAML allows it.

Decisions (documented in the rules' metadata):

- "does work" means running something other than reporting, signalling, waiting and shell
  housekeeping (``echo``, ``printf``, ``exit``, ``kill``, ``wait``, ``sleep``, ``true``, ``:``,
  ``trap``, ...): a trap that only forwards SIGTERM to its child does no checkpoint work.
- PM302 applies to worker-role workloads only (Job, CronJob, Pod, or ``pmanifest.io/role:
  worker``) that are confined to preemptible nodes (they select them): a worker that merely
  *can* land there would make every bare Pod and Job a warning; serving and coordinator roles
  on preemptible nodes are PM101/PM103's findings.
- An ``httpGet``/``tcpSocket`` preStop counts as a checkpoint trigger (PM202, PM302) but not as
  work for PM301: what the endpoint does is not in the manifest.
- What starts a checkpoint is decided once, by :func:`pmanifest.shell.pod.checkpointing`, for
  every rule: a TERM trap that does work or passes the signal on to the program, a preStop
  hook that does work or calls an endpoint. ``trap 'exit 0' TERM`` starts none (PM202 does not
  count it, PM302 reports the worker that has nothing else).
- PM201-PM203 are about checkpoints: they apply to pods that checkpoint (``checkpointing``):
  workers, and other roles whose containers trap TERM to do work or name a checkpoint
  directory. A serving pod's long grace period or preStop hook is its drain, which matters on
  standard nodes; where it can run on preemptible nodes, PM101-PM103 say so.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pmanifest.kube.contract import (
    KUBERNETES_DEFAULT_GRACE,
)
from pmanifest.loader.positions import Path
from pmanifest.rules import Context, Hit, Mention, rule
from pmanifest.rules.shells import trap_hit
from pmanifest.shell import (
    Command,
    Loc,
    analyse,
    written_paths,
    zero_exit,
)
from pmanifest.shell.pod import Shell, checkpointing, shells_of

DEFAULT_GRACE = KUBERNETES_DEFAULT_GRACE
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _grace(pod: dict[str, Any]) -> int | None:
    """The grace period the pod gets (30 s when unset), None when it is not an integer."""
    value = pod.get("terminationGracePeriodSeconds", DEFAULT_GRACE)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@rule("PM202")
def grace_period_unclaimed(context: Context) -> Iterable[Hit]:
    workload = context.workload
    grace = _grace(workload.pod)
    cap = context.profile.grace_period_cap
    # where the provider's whole window is 30 s or less (GKE spot: 15 s), the default already
    # claims all of it: nothing is unclaimed
    if not workload.placement.preemptible or grace is None or grace >= min(cap, DEFAULT_GRACE + 1):
        return
    if workload.recovers:
        return  # Ray: `ray stop` in preStop is a shutdown; Ray resumes from its own checkpoints
    how = checkpointing(workload)
    if not how.checkpoints:
        return  # a serving pod's preStop drains it: no checkpoint needs the window
    told = ("is not set, so the pod gets the default 30 s"
            if "terminationGracePeriodSeconds" not in workload.pod
            else f"is {grace} s")
    fix = f"claim the window with terminationGracePeriodSeconds (up to {cap})"
    for shell in shells_of(workload):  # the first trigger, in container order
        trap = next((t for s, t in how.traps if s is shell), None)
        if trap is not None:  # (`trap 'exit 0' TERM` starts none)
            yield trap_hit(
                shell, trap,
                f"container {shell.container.name!r} checkpoints on SIGTERM but "
                f"terminationGracePeriodSeconds {told}: {fix}",
            )
            return
        if any(s is shell for s in how.hooks):
            yield Hit(shell.prestop_path,
                      f"container {shell.container.name!r} has a preStop checkpoint hook but "
                      f"terminationGracePeriodSeconds {told}: {fix}")
            return


@rule("PM301")
def double_checkpoint_trigger(context: Context) -> Iterable[Hit]:
    how = checkpointing(context.workload)
    for shell in shells_of(context.workload):
        if shell.prestop is None or not shell.prestop.does_work:
            continue
        trap = next((t for s, t in how.traps if s is shell and t.does_work), None)
        where = shell.script_path
        if trap is None and shell.main_script is not None:
            # the supervisor passes the TERM on to the main after the hook: a main whose
            # script saves on TERM checkpoints a second time
            where = shell.main_script[0]
            trap = next((t for t in shell.main_script[1].traps if t.does_work), None)
        if trap is None or where is None:
            continue
        before = (f"container {shell.container.name!r} checkpoints twice: in this preStop "
                  "hook and in its TERM trap")
        yield Hit(shell.prestop_path,
                  f"{before}; both run inside the same grace period, so keep one trigger",
                  mention=Mention(where, trap.loc, len(before)))


@rule("PM302")
def no_checkpoint_handler(context: Context) -> Iterable[Hit]:
    workload = context.workload
    if workload.role != "worker" or workload.recovers or not workload.placement.only_preemptible:
        return
    shells = [s for s in shells_of(workload) if not s.container.init]
    how = checkpointing(workload)
    if not shells or how.traps or how.hooks or any(s.facts.opaque for s in shells):
        return  # (an opaque script may well trap TERM: PM006 says it was not read)
    first = shells[0].container
    path = (*first.path, "name") if "name" in first.data else first.path
    yield Hit(path,
              f"{workload.title} runs on preemptible nodes but no container traps SIGTERM "
              "or has a preStop hook: a preemption loses the work since the last checkpoint "
              "(ignore this if the program itself checkpoints on SIGTERM)")


@rule("PM303")
def trap_lost_by_exec(context: Context) -> Iterable[Hit]:
    for shell in shells_of(context.workload):
        if not shell.facts.traps or not shell.facts.execs:
            continue  # (positions are only worked out for what is reported)
        for command in shell.facts.execs:
            before = (f"`exec {command.exec_target}` replaces the shell, discarding the TERM "
                      "trap")
            yield trap_hit(
                shell, command, f"{before}: run it in the background and `wait` for it instead",
                mention=shell.facts.traps[0], at=len(before))


@rule("PM304")
def trap_blocked_by_foreground(context: Context) -> Iterable[Hit]:
    for shell in shells_of(context.workload):
        if shell.facts.traps and shell.facts.foreground:
            command = shell.facts.foreground[0]
            yield trap_hit(
                shell, command,
                f"`{command.name}` runs in the foreground after the TERM trap, and the shell "
                "runs no trap until it returns: start it with `&`, then `wait \"$child\"`",
            )


@rule("PM305")
def trap_exits_zero(context: Context) -> Iterable[Hit]:
    kind = context.workload.kind_title or context.workload.kind
    for shell in shells_of(context.workload):
        for trap in shell.facts.traps:
            found = zero_exit(trap, shell.program)
            if found is None:
                continue
            if not found.returns and not found.reason:  # a literal exit 0 in the handler
                yield trap_hit(
                    shell, trap,
                    "the TERM handler exits 0, so a preempted pod counts as succeeded and the "
                    f"{kind} can complete with unfinished work: exit 143 "
                    "(128+SIGTERM)",
                )
                continue
            start = (f"the TERM handler {'returns, and the script ' if found.returns else ''}"
                     f"ends with `{found.code}`")
            reason = f" {found.reason}" if found.reason else ""
            same_line = found.command.loc.row == trap.loc.row
            yield trap_hit(
                shell, trap,
                f"{start}{reason}, so a preempted pod can count as succeeded and the {kind} "
                "complete with unfinished work: end the handler with exit 143 (128+SIGTERM)",
                mention=None if same_line else found.command, at=len(start),
            )


# --- PM306 ----------------------------------------------------------------------------------


@rule("PM306")
def checkpoint_on_ephemeral_storage(context: Context) -> Iterable[Hit]:
    workload = context.workload
    if not workload.placement.preemptible:
        return
    volumes = workload.volumes()
    for shell in shells_of(workload):
        env = _literal_env(shell.container.data)
        mounts = _mounts(shell.container.data)
        seen: set[tuple[str, Loc | None, Path]] = set()
        for path, where, loc, raw in _checkpoint_paths(context, shell, env):
            reason = _ephemeral(path, mounts, volumes) if path.startswith("/") else \
                _relative(mounts, volumes)
            if reason is None or (raw, loc, where) in seen:
                continue
            seen.add((raw, loc, where))
            yield Hit(where,
                      f"checkpoint path {path if path.startswith('/') else raw} {reason}: it "
                      "is lost with the node; write "
                      "checkpoints to the persistent shared volume",
                      inner=loc, value=loc is None)


CheckpointPath = tuple[str, Path, Loc | None, str]  # resolved, where, inside, as written


def _checkpoint_paths(
    context: Context, shell: Shell, env: dict[str, tuple[int, str]]
) -> Iterator[CheckpointPath]:
    """(resolved path, where, location inside the script at ``where`` if any, as written) of
    every checkpoint path of a container: the checkpoint directories a worker names in its
    environment and its arguments (:func:`pmanifest.shell.pod.checkpointing`; a relative one
    stays relative when the container sets no absolute workingDir), paths the TERM trap's
    work writes, and paths the preStop hook writes."""
    values = {name: value for name, (_, value) in env.items()}
    how = checkpointing(context.workload)
    if how.by_contract:
        workdir = shell.container.data.get("workingDir")
        for _, directory in (d for d in how.directories if d[0] is shell):
            resolved = _directory(directory.value, directory.argument, values, workdir)
            if resolved is not None:
                yield resolved, directory.where, directory.loc, directory.value
    if shell.script_path is not None:
        work = [command for trap in shell.facts.traps for command in trap.work]
        yield from _written(work, shell.script_path, values)
    yield from _prestop_paths(shell, values)


def _directory(value: str, argument: bool, env: dict[str, str], workdir: Any) -> str | None:
    """Where a named checkpoint directory is: an absolute path (``$VAR`` replaced by the
    container's literal env), or, for an argument, a relative one below an absolute
    ``workingDir`` or as written (the image's working directory); None when unknown."""
    if value.startswith("/"):
        return _substitute(value, env)
    if not argument or not value or "$" in value or value.startswith("~") or ":" in value:
        return None  # (gs://, s3://, hf:...: not a local path)
    if isinstance(workdir, str) and workdir.startswith("/"):
        return posixpath.normpath(posixpath.join(workdir, value))
    return posixpath.normpath(value)


def _relative(mounts: list[tuple[str, str]], volumes: dict[str, dict[str, Any]]) -> str | None:
    """Why a path relative to the image's (unknown) working directory does not survive the
    node: no volume that survives it is mounted in the container, so it is on the container
    filesystem or an ephemeral volume; None when one is mounted (it may hold the workdir)."""
    for _, name in mounts:
        volume = volumes.get(name)
        if volume is None or not any(k in volume for k in ("emptyDir", "hostPath", "ephemeral")):
            return None
    return ("is relative to the image's working directory, on the container filesystem (no "
            "persistent volume is mounted in the container)")


def _written(commands: Iterable[Command], where: Path,
             values: dict[str, str]) -> Iterator[CheckpointPath]:
    """The resolvable paths the commands of the script at ``where`` write to."""
    for command in commands:
        for raw in written_paths(command):
            resolved = _substitute(raw, values)
            if resolved is not None:
                yield resolved, where, command.loc, raw


def _prestop_paths(shell: Shell, values: dict[str, str]) -> Iterator[CheckpointPath]:
    prestop = shell.prestop
    if prestop is None or prestop.action != "exec":
        return
    if prestop.script is not None:
        path = (*shell.container.path, *prestop.script[0])
        yield from _written(analyse(prestop.script[1]).work, path, values)
        return
    command = prestop.commands()[0] if prestop.argv else None
    if command is None or not command.does_work:
        return
    for raw in written_paths(command):
        resolved = _substitute(raw, values)
        index = next((i for i, a in enumerate(prestop.argv) if raw in a), 0)
        if resolved is not None:
            yield resolved, (*shell.prestop_path, "exec", "command", index), None, raw


def _literal_env(container: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """Environment variables with a literal value: name -> (index in ``env``, value)."""
    env = container.get("env")
    out: dict[str, tuple[int, str]] = {}
    for i, item in enumerate(env if isinstance(env, list) else []):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            value = item.get("value")
            if isinstance(value, str):
                out[item["name"]] = (i, value)
    return out


def _substitute(raw: str, env: dict[str, str]) -> str | None:
    """``$CKPT_DIR/x`` with the container's literal env; None if something stays unknown."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "\0")

    resolved = _VAR.sub(value, raw)
    if "\0" in resolved or "$" in resolved or not resolved.startswith("/"):
        return None
    return posixpath.normpath(resolved)


def _mounts(container: dict[str, Any]) -> list[tuple[str, str]]:
    mounts = container.get("volumeMounts")
    out = []
    for mount in mounts if isinstance(mounts, list) else []:
        if isinstance(mount, dict):
            path, name = mount.get("mountPath"), mount.get("name")
            if isinstance(path, str) and isinstance(name, str) and path.startswith("/"):
                out.append((posixpath.normpath(path), name))
    return out


def _ephemeral(
    path: str, mounts: list[tuple[str, str]], volumes: dict[str, dict[str, Any]]
) -> str | None:
    """Why ``path`` does not survive the node, or None when it does (or cannot be told)."""
    best: tuple[str, str] | None = None
    for mount_path, name in mounts:
        inside = mount_path == "/" or path == mount_path or path.startswith(mount_path + "/")
        if inside and (best is None or len(mount_path) > len(best[0])):
            best = (mount_path, name)
    if best is None:
        if path == "/home" or path.startswith("/home/"):
            return "is under /home on the container filesystem (no persistent volume mounted)"
        return "is on the container filesystem (no volume mounted there)"
    volume = volumes.get(best[1])
    if volume is None:
        return None
    if "emptyDir" in volume:
        return f"is on emptyDir volume {best[1]!r} (mounted at {best[0]})"
    if "hostPath" in volume:
        return f"is on hostPath volume {best[1]!r}, the node's local disk (mounted at {best[0]})"
    if "ephemeral" in volume:
        return f"is on ephemeral volume {best[1]!r}, deleted with the pod"
    return None
