"""The torchrun launcher of a rendered elastic worker: what keeps an elastic Job alive when its
rendezvous is closed or its store is lost.

torchrun closes its rendezvous for good whenever an agent exits for a reason other than a
signal (it waited longer than the join timeout below the minimum node count; it spent
``--max-restarts``; the training finished). Every later node that joins the same run id fails
at once with ``RendezvousClosedError``. The rendered run id is the Job's UID, which is the same
for every pod of the Job, so a Job whose rendezvous is closed could never train again.

The launcher runs before torchrun, in the trainer image (which has torch). It reads a
generation counter kept in the rendezvous store itself (the key ``GENERATION_KEY`` + the Job's
UID, created at 0), and checks with torch's own rendezvous handler whether the rendezvous
``UID-GENERATION`` is closed. If it is, it advances the counter (compare-and-set, so pods that
arrive together agree on one new generation) and looks again; torchrun then runs with
``--rdzv-id UID-GENERATION``. New pods of a Job whose rendezvous was closed therefore form a
new one and resume from the checkpoint; pods that arrive while it is open join it. A store that
restarts is empty: the counter starts again at 0, whose rendezvous is new as well.

The launcher itself never loads torch: each talk with the store (``STORE_OPS``: the generation
at the start, the store's state after a failure) runs in a short-lived python of its own, so
the process that lives as long as torchrun costs a few MB and exits at once after it.

torchrun runs as the launcher's child in a session of its own: the launcher forwards the
supervisor's TERM to it once (as torchrun forwards it to its trainers), and exits with
torchrun's status, except when torchrun failed because the store went away. The launcher
connected to the store before torchrun started; if, after a failure, the store no longer
answers or no longer holds the generation counter (a new, empty store), the failure is the
store's disruption, not the work's: the launcher exits ``STORE_LOST_EXIT``, which the worker
Job's podFailurePolicy ignores. A store that cannot be reached at the start is a failure
(exit 1, counted): a wrong endpoint must not retry forever.

A run that finished closes its rendezvous too. When torchrun exits 0 (no TERM: every trainer
finished), the launcher records the generation under ``FINISHED_KEY`` + UID; a pod that comes
later (a replacement of an index whose pod was preempted at the end) finds that generation
closed and finished, and exits 0 at once instead of starting a new run alone.

torchrun's shutdown timeout (TERM to the trainers, SIGKILL after) is rendered as the variable
``SHUTDOWN_TIMEOUT_ENV``, read by torch releases with pytorch/pytorch PR #172596 (2026) and
ignored by older ones, which kill a trainer 30 s after TERM; the ``--shutdown-timeout`` flag
would stop an older torchrun at start. Render warns (``shutdown_warnings``) where a save in
the trainers' TERM handler is declared longer than that.

It uses TCPStore's add, compare_set and check and torch elastic's
DynamicRendezvousHandler.from_backend with C10dRendezvousBackend (torch >= 1.10; run by the
tests with torch 2.13 only), and ``python`` on the image's PATH, as torchrun itself does.
"""

from __future__ import annotations

from pmanifest.render.context import supervisor_deadline
from pmanifest.render.spec import Spec

# torchrun's shutdown timeout, read where pytorch/pytorch PR #172596 (2026) is in (ignored by
# older releases, whose launcher kills a trainer 30 s after TERM whatever the grace period)
SHUTDOWN_TIMEOUT_ENV = "TORCH_ELASTIC_SHUTDOWN_TIMEOUT"
TORCHRUN_DEFAULT_SHUTDOWN_SECONDS = 30
# torchrun SIGKILLs its trainers this long before the supervisor's deadline (its default is 30 s
# after TERM, whatever the grace period), so it has stopped them and exited by then
SHUTDOWN_HEADROOM_SECONDS = 3

# EX_TEMPFAIL (sysexits.h): a temporary failure, to be retried; neither torchrun (0, 1, a
# signal's 128+N), the supervisor (143, 43, 2) nor the launcher otherwise exits with it
STORE_LOST_EXIT = 75
GENERATION_KEY = "pmanifest/rendezvous-generation/"
FINISHED_KEY = "pmanifest/rendezvous-finished/"  # + UID: the generation whose run succeeded
# How long the launcher waits for the store at the start and after a failure (seconds);
# the start uses the rendezvous join timeout, as torchrun would
STORE_CHECK_SECONDS = 10

# python -c STORE_OPS OP ENDPOINT BASE SECONDS [GENERATION CODE]: the launcher's talks with the
# store, each in a short-lived python, so torch is never loaded in the launcher, which lives
# as long as torchrun (its memory, and its exit after torchrun's within the supervisor's
# deadline). OP start: prints the generation to run (or "finished"), exit 1 without a store.
# OP after (torchrun exited CODE): exit STORE_LOST_EXIT when the store is gone or new.
STORE_OPS = f"""\
import sys
from datetime import timedelta
from torch.distributed import TCPStore
op, endpoint, base, seconds = sys.argv[1:5]
host, port = endpoint.rsplit(':', 1)
key, finished = '{GENERATION_KEY}' + base, '{FINISHED_KEY}' + base
try:
    store = TCPStore(host, int(port), is_master=False, timeout=timedelta(seconds=int(seconds)))
except Exception as error:
    if op == 'after':
        sys.exit({STORE_LOST_EXIT})
    reason = (str(error).splitlines() or [type(error).__name__])[0]
    sys.exit(f'pmanifest-launcher: no rendezvous store at {{endpoint}}: {{reason}}')
if op == 'after':
    generation, code = sys.argv[5:7]
    if not store.check([key]):
        sys.exit({STORE_LOST_EXIT})
    if code == '0':
        store.set(finished, generation)
    sys.exit(0)
from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
from torch.distributed.elastic.rendezvous.dynamic_rendezvous import DynamicRendezvousHandler


def closed(run_id):
    backend = C10dRendezvousBackend(store, run_id)
    return DynamicRendezvousHandler.from_backend(run_id, store, backend, 1, 1).is_closed()


generation = store.add(key, 0)
while closed(f'{{base}}-{{generation}}'):
    if store.check([finished]) and store.get(finished) == str(generation).encode():
        print(f'pmanifest-launcher: the run of rendezvous {{base}}-{{generation}} finished',
              file=sys.stderr, flush=True)
        print('finished')
        sys.exit(0)
    print(f'pmanifest-launcher: rendezvous {{base}}-{{generation}} is closed; a new one, '
          f'generation {{generation + 1}}, resumes from the checkpoint', file=sys.stderr,
          flush=True)
    store.compare_set(key, str(generation), str(generation + 1))
    generation = store.add(key, 0)
print(generation)
"""

# python -c LAUNCHER STORE_OPS JOIN_TIMEOUT torchrun ARGS...: no dollar sign (the kubelet
# expands $(X) in args), nothing but the standard library
LAUNCHER = f"""\
import os, signal, subprocess, sys
ops, wait, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
at = argv.index('--rdzv-id') + 1
base, endpoint = argv[at], argv[argv.index('--rdzv-endpoint') + 1]


def store(*args):
    return subprocess.run([sys.executable, '-c', ops, args[0], endpoint, base, *args[1:]],
                          stdout=subprocess.PIPE, text=True)


start = store('start', wait)
if start.returncode != 0 or start.stdout.split()[-1:] == ['finished']:
    sys.exit(start.returncode)
generation = start.stdout.split()[-1]
argv[at] = f'{{base}}-{{generation}}'
print(f'pmanifest-launcher: rendezvous {{argv[at]}}', file=sys.stderr, flush=True)
child, caught = None, []


def forward(number, frame):  # once: a second TERM would cut torchrun's own shutdown
    if not caught:
        caught.append(number)
        if child is not None:
            caught.append(child.send_signal(number))


signal.signal(signal.SIGTERM, forward)
child = subprocess.Popen(argv, start_new_session=True)
if len(caught) == 1:
    caught.append(child.send_signal(caught[0]))
code = child.wait()
code = 128 - code if code < 0 else code
if caught:
    os._exit(code)
lost = store('after', '{STORE_CHECK_SECONDS}', generation, str(code)).returncode != 0
if code != 0 and lost:
    print('pmanifest-launcher: the rendezvous store went away: a disruption, exit '
          '{STORE_LOST_EXIT}', file=sys.stderr, flush=True)
os._exit(0 if code == 0 else {STORE_LOST_EXIT} if lost else code)
"""


def shutdown_timeout(deadline: int) -> int:
    """torchrun's shutdown timeout (TERM to its trainers, SIGKILL after) for a supervisor
    ``deadline`` (seconds after TERM): it ends before the deadline."""
    return max(1, deadline - SHUTDOWN_HEADROOM_SECONDS)


def shutdown_warnings(spec: Spec) -> list[tuple[tuple[str | int, ...], str]]:
    """(spec path, message) for every torchrun worker whose trainers save in their own TERM
    handler (``mode: signal``) for longer than torchrun's built-in 30 s: a torch release
    without SHUTDOWN_TIMEOUT_ENV kills them before the save ends. (command mode and preStop
    save outside torchrun, which only stops the trainers after.)"""
    found = []
    for w in spec.workloads:
        d, ckpt = w.distributed, w.checkpoint
        if (d is None or d.framework != "torchrun" or ckpt is None or ckpt.mode != "signal"
                or ckpt.expected_seconds is None
                or ckpt.expected_seconds <= TORCHRUN_DEFAULT_SHUTDOWN_SECONDS):
            continue
        found.append(((*w.path, "checkpoint", "expectedSeconds"),
                      f"workload {w.name!r}: its trainers save for up to "
                      f"{ckpt.expected_seconds} s after TERM, and torchrun kills them "
                      f"{TORCHRUN_DEFAULT_SHUTDOWN_SECONDS} s after TERM unless its torch "
                      f"reads {SHUTDOWN_TIMEOUT_ENV} (rendered: "
                      f"{shutdown_timeout(supervisor_deadline(w, spec.profile))} s; torch "
                      "releases with pytorch/pytorch PR #172596, 2026; older ones ignore it): "
                      "run such a torch in the image, or save with mode: command or "
                      "trigger: preStop, which torchrun does not cut"))
    return found
