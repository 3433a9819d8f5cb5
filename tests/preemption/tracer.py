"""An observer attached to a container's PID 1 with ptrace(2), which changes nothing it sees.

Two facts cannot be observed from outside without it:

- which processes of the PID namespace are still alive at the instant PID 1 exits (the kernel
  SIGKILLs them right after, as part of PID 1's exit, so a later look finds nothing);
  ``PTRACE_EVENT_EXIT`` stops PID 1 at the start of its exit, before that happens;
- the instant the shell has installed its TERM handler but not yet run another command, to
  send "a TERM before the main has started" deterministically: with ``PTRACE_SYSCALL`` the
  tracee stops at every system call until ``/proc/PID/status`` shows TERM caught;
- the instant right after the shell's first fork once TERM is caught (the main's), to send "a
  TERM between starting the main and ``wait``": the tracee is stepped on until its ``clone``
  returns, when ``/proc/PID/task/PID/children`` first lists a child.

Every signal that stops the tracee is passed on unchanged (a signal the tracee's disposition
drops is still dropped when delivered: PID 1 ignores what it has no handler for). All ptrace
requests come from the one thread that attached, as the kernel requires.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable

PTRACE_CONT = 7
PTRACE_DETACH = 17
PTRACE_SYSCALL = 24
PTRACE_GETEVENTMSG = 0x4201
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_O_TRACESYSGOOD = 0x01
PTRACE_O_TRACEEXIT = 0x40
PTRACE_EVENT_EXIT = 6
WALL = 0x40000000  # __WALL: wait for a tracee that is not our child
SYSCALL_STOP = signal.SIGTRAP | 0x80

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


def _ptrace(request: int, pid: int, data: int = 0) -> None:
    if _libc.ptrace(request, pid, None, ctypes.c_void_p(data)) == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"ptrace({request}, {pid}): {os.strerror(err)}")


def catches_term(pid: int) -> bool:
    """Whether ``pid`` has a handler for SIGTERM (its SigCgt mask)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def has_child(pid: int) -> bool:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return bool(children.read().split())


class Tracer(threading.Thread):
    """Attaches to ``pid``; on PID 1's exit calls ``at_exit`` (the survivor snapshot)."""

    def __init__(self, pid: int, at_exit: Callable[[], tuple[str, ...]],
                 term_when: str | None, mark: bool = False) -> None:
        """``term_when``: None, "caught" (TERM once the tracee catches it) or "forked" (once
        it catches TERM and has a child); ``mark``: SIGUSR1 (what the rendered preStop hook
        sends PID 1) right before that TERM."""
        super().__init__(daemon=True)
        self.mark = mark
        self.pid = pid
        self.at_exit = at_exit
        self.term_when = term_when
        self.attached = threading.Event()
        self.term_sent = threading.Event()
        self.term_time = 0.0
        self.exited = threading.Event()
        self.exit_time = 0.0
        self.exit_code = -1  # as the kubelet reports it: the status, or 128 + signal
        self.survivors: tuple[str, ...] | None = None  # None: exit not observed (SIGKILL)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._trace()
        except BaseException as exc:  # reported by the harness
            self.error = exc
        finally:
            self.attached.set()
            self.exit_time = self.exit_time or time.monotonic()
            self.exited.set()

    def _trace(self) -> None:
        _ptrace(PTRACE_SEIZE, self.pid, PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD)
        stepping = self.term_when is not None
        marking = False
        if stepping:  # a seized tracee runs on: stop it once to step it from there; the
            _ptrace(PTRACE_INTERRUPT, self.pid)  # container goes on after that stop
        else:
            self.attached.set()
        while True:
            _, status = os.waitpid(self.pid, WALL)
            if not os.WIFSTOPPED(status):
                self.exit_code = _exit_code(status)  # exited without an exit stop (SIGKILL)
                return
            sig, event = os.WSTOPSIG(status), status >> 16
            if event == PTRACE_EVENT_EXIT:
                self.exit_time = time.monotonic()
                message = ctypes.c_ulong()
                _ptrace(PTRACE_GETEVENTMSG, self.pid, ctypes.addressof(message))
                self.exit_code = _exit_code(message.value)
                self.survivors = self.at_exit()
                _ptrace(PTRACE_DETACH, self.pid)
                return
            if sig == SYSCALL_STOP:
                sig = 0
                if marking and ignores_usr1(self.pid):
                    stepping = marking = False
                    self._term()
                elif stepping and not marking and catches_term(self.pid) and (
                        self.term_when == "caught" or has_child(self.pid)):
                    if self.mark and self.term_when == "forked":
                        # the rendered preStop hook's mark first, and the TERM once PID 1
                        # has taken it (it then ignores USR1), as the hook waits for that
                        marking = True
                        os.kill(self.pid, signal.SIGUSR1)
                    else:
                        stepping = False
                        self._term()
            elif event != 0:
                sig = 0  # a group-stop or another event: resume without a signal
            self.attached.set()  # stopped at least once: stepping starts before it runs on
            _ptrace(PTRACE_SYSCALL if stepping else PTRACE_CONT, self.pid, sig)


    def _term(self) -> None:
        os.kill(self.pid, signal.SIGTERM)  # from outside, as the kubelet does
        self.term_time = time.monotonic()
        self.term_sent.set()


def ignores_usr1(pid: int) -> bool:
    """Whether ``pid`` ignores SIGUSR1 (its SigIgn mask): the supervisor's trap has run."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGUSR1 - 1) & 1)
    return False


def _exit_code(status: int) -> int:
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
