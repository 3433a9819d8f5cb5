"""Run a rendered container the way a kubelet does, with a real shell as PID 1.

The container (a dict as it appears in the rendered YAML: ``command``, ``args``, ``env``,
``lifecycle.preStop.exec.command``) starts as PID 1 of a new PID namespace (``unshare --pid
--fork --mount-proc``, as root), with ``/bin/sh`` bind-mounted, in that mount namespace only,
to the shell under test. On preemption the preStop command runs inside the container
(``nsenter`` into the PID and mount namespaces of its PID 1; the kubelet runs it for every
termination it starts, preemption or liveness-probe kill), then SIGTERM goes to PID 1 from
outside (where PID 1 drops what it has no handler for, as under a real runtime), and SIGKILL
follows when the grace period, counted from the start of the preemption, is over.

What it reports (``Outcome``): the exit code as the kubelet sees it (128 + signal when killed),
seconds from the start of the preemption (or of the container, when there is none) to PID 1's
exit, how many checkpoints ran (lines ``ckpt`` in the log the test's commands append to), and
which processes of the namespace were still alive, and not already dying of a SIGKILL, when
PID 1 exited (``tracer.Tracer`` stops PID 1 at that instant to look).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .tracer import Tracer

# a new PID namespace, nsenter and ptrace need root (CI runs as root; so does this sandbox)
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: unshare --pid, ptrace")

# PID 1 of the namespace starts as this helper: mount the shell under test over /bin/sh, wait
# until the tracer is attached (the FIFO), then become the container's command, in a session
# of its own as a runtime starts it (runc's init calls setsid): a `kill 0` inside then
# reaches the container's processes, not the test's (setsid does not fork: the helper leads
# no group).
_HELPER = ('mount --bind "$1" /bin/sh || exit 125; read -r _ < "$2"; shift 2; '
           'exec setsid "$@"')
_PF_EXITING = 0x4
_SIGKILL_BIT = 1 << (signal.SIGKILL - 1)


@dataclass(frozen=True)
class Shell:
    """A shell that runs as the container's /bin/sh."""

    name: str
    binary: str
    argv0: str | None = None  # replaces a command's "/bin/sh" (bash outside posix mode)

    def __str__(self) -> str:
        return self.name


def shells() -> list[Shell]:
    """dash, bash (as sh: posix mode, as in an image whose sh is bash), bash outside posix
    mode, and busybox sh."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    bash = shutil.which("bash") or "/bin/bash"
    return [Shell("dash", shutil.which("dash") or "/bin/dash"), Shell("bash", bash),
            Shell("bash-noposix", bash, argv0=bash), Shell("busybox", busybox)]


@dataclass(frozen=True)
class Preemption:
    ready: Path | None = None  # preempt once this file exists (the main is up)
    term_twice: bool = False  # a second SIGTERM 0.2 s after the first
    before_main: bool = False  # SIGTERM as soon as PID 1 catches TERM, before another command
    after_fork: bool = False  # SIGTERM as soon as PID 1, catching TERM, has forked (the main)
    # SIGTERM to every process of the container at once (PID 1 first), as a TERM to the whole
    # tree would: the main dies at the instant PID 1 gets its TERM
    term_all: bool = False


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    seconds: float
    checkpoints: int
    survivors: tuple[str, ...]
    kubelet_killed: bool
    stderr: str = field(repr=False)


def run(container: dict[str, Any], shell: Shell, workdir: Path, *, grace: float,
        preemption: Preemption | None, checkpoint_log: Path, timeout: float = 30) -> Outcome:
    argv = [*container["command"], *container.get("args", [])]
    if shell.argv0 is not None and argv[0] == "/bin/sh":
        argv[0] = shell.argv0
    env = {"PATH": os.environ["PATH"], **{e["name"]: e["value"] for e in container.get("env", [])}}
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    term_when = None
    if preemption is not None and (preemption.before_main or preemption.after_fork):
        term_when = "caught" if preemption.before_main else "forked"
    pod = _Pod(argv, env, shell, workdir, term_when=term_when, mark=pre_stop is not None)
    try:
        return pod.run(grace, preemption, pre_stop, checkpoint_log, timeout)
    finally:
        pod.destroy()


class _Pod:
    def __init__(self, argv: list[str], env: dict[str, str], shell: Shell, workdir: Path, *,
                 term_when: str | None, mark: bool) -> None:
        self.env = env
        self.workdir = workdir
        fifo = workdir / ".kubelet-start"
        os.mkfifo(fifo)
        self.stderr_path = workdir / ".kubelet-stderr"
        with self.stderr_path.open("wb") as stderr:
            self.unshare = subprocess.Popen(
                ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "/bin/sh", "-c",
                 _HELPER, "kubelet", shell.binary, str(fifo), *argv],
                cwd=workdir, env=env, stdin=subprocess.DEVNULL, stderr=stderr)
        self.pid1 = _child_of(self.unshare)
        self.namespace = os.readlink(f"/proc/{self.pid1}/ns/pid")
        # attach only once the helper waits on the FIFO: unshare's own code in the child
        # (it unblocks the signals its parent blocked) is then over
        start = _writer(fifo, self.unshare)
        blocked = _status_field(self.pid1, "SigBlk")
        if int(blocked, 16):
            raise RuntimeError(f"PID 1 starts with signals blocked ({blocked}); a runtime "
                               "starts it with none")
        self.tracer = Tracer(self.pid1, self.survivors, term_when=term_when, mark=mark)
        self.tracer.start()
        self.tracer.attached.wait(10)
        if self.tracer.error is not None:
            raise self.tracer.error
        os.write(start, b"go\n")
        os.close(start)
        self.started = time.monotonic()

    def run(self, grace: float, preemption: Preemption | None, pre_stop: list[str] | None,
            checkpoint_log: Path, timeout: float) -> Outcome:
        start = self.started
        killed_survivors: tuple[str, ...] | None = None
        if preemption is not None:
            start = self.preempt(preemption, pre_stop, grace)
            if not self.tracer.exited.wait(max(0.0, start + grace - time.monotonic())):
                killed_survivors = self.survivors()
                os.kill(self.pid1, signal.SIGKILL)
        if not self.tracer.exited.wait(timeout):
            raise TimeoutError(f"PID 1 still running after {timeout} s")
        self.unshare.wait(10)
        if self.tracer.error is not None:
            raise self.tracer.error
        survivors = self.tracer.survivors
        if survivors is None:
            survivors = killed_survivors or ()
        log = checkpoint_log.read_text().splitlines() if checkpoint_log.exists() else []
        return Outcome(exit_code=self.tracer.exit_code,
                       seconds=round(self.tracer.exit_time - start, 2),
                       checkpoints=log.count("ckpt"), survivors=survivors,
                       kubelet_killed=killed_survivors is not None,
                       stderr=self.stderr_path.read_text(errors="replace"))

    def preempt(self, preemption: Preemption, pre_stop: list[str] | None, grace: float) -> float:
        """Runs the kubelet's side of a preemption; returns when it started."""
        if preemption.before_main or preemption.after_fork:
            if not self.tracer.term_sent.wait(10):
                raise TimeoutError("PID 1 never caught TERM")
            return self.tracer.term_time
        if preemption.ready is not None:
            self.wait_for(preemption.ready)
        start = time.monotonic()
        if pre_stop is not None:
            self.run_hook(pre_stop, grace)
        os.kill(self.pid1, signal.SIGTERM)
        if preemption.term_all:
            for entry in self.survivors():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.split(":")[0]), signal.SIGTERM)
        if preemption.term_twice and not self.tracer.exited.wait(0.2):
            os.kill(self.pid1, signal.SIGTERM)
        return start

    def wait_for(self, ready: Path) -> None:
        deadline = time.monotonic() + 10
        while not ready.exists():
            if self.tracer.exited.is_set():
                raise AssertionError(f"PID 1 exited before {ready.name} appeared: "
                                     + self.stderr_path.read_text(errors="replace"))
            if time.monotonic() > deadline:
                raise TimeoutError(f"{ready} never appeared")
            time.sleep(0.01)

    def run_hook(self, command: list[str], grace: float) -> None:
        """The preStop exec hook, inside the container; its failure does not stop the TERM."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(["nsenter", f"--target={self.pid1}", "--pid", "--mount", "--",
                            *command], cwd=self.workdir, env=self.env, timeout=grace,
                           stdin=subprocess.DEVNULL, check=False)

    def survivors(self) -> tuple[str, ...]:
        """Processes of the namespace other than PID 1 that are alive and not dying."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.pid1:
                continue
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") != self.namespace:
                    continue
                if not _dying(entry):
                    found.append(f"{entry}:{Path(f'/proc/{entry}/comm').read_text().strip()}")
            except OSError:
                continue  # gone meanwhile
        return tuple(found)

    def destroy(self) -> None:
        if self.unshare.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid1, signal.SIGKILL)
            self.unshare.kill()
            self.unshare.wait(10)


def _dying(pid: str) -> bool:
    """A zombie, a task already exiting, or one with a SIGKILL pending."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X") or int(fields[6]) & _PF_EXITING:
        return True
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) & _SIGKILL_BIT:
            return True
    return False


def _child_of(parent: subprocess.Popen[bytes]) -> int:
    """The PID (outside) of unshare's forked child: PID 1 of the new namespace."""
    deadline = time.monotonic() + 10
    path = Path(f"/proc/{parent.pid}/task/{parent.pid}/children")
    while time.monotonic() < deadline:
        children = path.read_text().split() if path.exists() else []
        if children:
            return int(children[0])
        if parent.poll() is not None:
            break
        time.sleep(0.002)
    raise RuntimeError("unshare did not start the container")


def _writer(fifo: Path, unshare: subprocess.Popen[bytes]) -> int:
    """The FIFO's write end, once the helper has it open for reading (it then waits there)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: the helper has not opened it yet
            if unshare.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the container's helper did not start") from None
            time.sleep(0.002)


def _status_field(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split()[1]
    raise KeyError(name)
