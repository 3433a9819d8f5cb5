"""An elastic Job whose rendezvous torchrun has closed trains on, for real (torch CPU, gloo).

torchrun closes a rendezvous for good when an agent exits for a reason other than a signal.
The rendered run id is the Job's UID, the same for every pod of the Job, so before the launcher
(``pmanifest.render.elastic``) every later pod failed at once with RendezvousClosedError and a
person had to recreate the Job. Here the rendered worker's command line runs as each pod (its
supervisor, the launcher, torchrun, the tiny trainer), the rendered store as the coordinator,
and the test plays the Job controller: a pod that failed is replaced (the failure counted,
unless its exit code is one the rendered podFailurePolicy ignores). Both ways a survivor gives
up are played:

- (a) the replacement of a preempted node comes after the join timeout: the survivor, below
  minNodes, gives up (exit 1) and closes the rendezvous; the late replacements start a new one;
- (b) a survivor with ``--max-restarts 1`` sees two preemptions: the second failure of its
  workers exits it (exit 1) and closes the rendezvous; the replacements start a new one.

Either way the training ends as if nothing had happened: resumed from the checkpoint, the
weights of an uninterrupted run. The waits are on events (the trainer's events.jsonl, a pod's
exit), with generous deadlines: the machine is shared.
"""

from __future__ import annotations

from pathlib import Path

from . import kubelet
from .elastic_job import (
    JOB_UID,
    PREEMPT_AT,
    WAIT,
    Job,
    finishes_as_one_run,
    started,
)


def _new_generation(job: Job, *indexes: int) -> None:
    """The replacements trained in a new rendezvous, generation 1: the first to come found
    generation 0 closed and advanced the counter, the others found it advanced."""
    logs = [job.pods[i].log.read_text(errors="replace") for i in indexes]
    assert any(f"rendezvous {JOB_UID}-0 is closed" in log for log in logs), logs
    assert all(f"pmanifest-launcher: rendezvous {JOB_UID}-1\n" in log for log in logs), logs


def test_late_replacement_after_the_join_timeout(tmp_path: Path) -> None:
    """(a) minNodes 2 of 2: one node is preempted, the survivor waits the join timeout for a
    second node and gives up (a counted failure of its index, as before); the replacements of
    both indexes, later still, form a new rendezvous and finish the training."""
    job = Job(tmp_path, minNodes=2, maxNodes=2, joinTimeoutSeconds=5)
    try:
        job.store()
        job.pod(0), job.pod(1)
        kubelet.wait_for(lambda: job.step() >= PREEMPT_AT, WAIT, "training to start")
        job.hold(True)
        preempted_at = job.step()
        job.mark("TERM trainer-1 (preemption)")
        job.pods[1].terminate()  # the preemption: TERM to the container's main process
        assert job.ended(1) == 143, job.logs()
        before = len(job.events())
        job.hold(False)  # the survivor's collective fails: it restarts, waits, gives up
        assert job.ended(0) == 1, job.logs()
        survivor = job.pods[0].log.read_text(errors="replace")
        assert "RendezvousTimeoutError" in survivor, job.logs()
        assert job.counted(1) and not job.counted(143)
        assert not started(job, "trainer-0", 1, before)  # never below minNodes
        # the Job replaces both failed pods, after the join timeout
        job.pod(1), job.pod(0)
        assert (job.ended(0), job.ended(1)) == (0, 0), job.logs()
    finally:
        job.stop()
    job.report("late replacement after the join timeout")
    _new_generation(job, 0, 1)
    finishes_as_one_run(job, preempted_at)


def test_survivor_out_of_restarts_after_two_preemptions(tmp_path: Path) -> None:
    """(b) minNodes 1 of 2, --max-restarts 1: the first preemption costs the survivor its one
    restart (it trains on alone, then with the replacement: a membership change costs none);
    the second fails its workers with no restart left, and it exits 1, closing the rendezvous.
    The replacements of both indexes form a new rendezvous and finish the training."""
    job = Job(tmp_path, minNodes=1, maxNodes=2, maxRestarts=1, joinTimeoutSeconds=120)
    args = job.worker["args"]
    assert args[args.index("--max-restarts") + 1] == "1"
    try:
        job.store()
        job.pod(0), job.pod(1)
        kubelet.wait_for(lambda: job.step() >= PREEMPT_AT, WAIT, "training to start")
        job.hold(True)
        preempted_at = job.step()
        before = len(job.events())
        job.mark("TERM trainer-1 (first preemption)")
        job.pods[1].terminate()
        assert job.ended(1) == 143, job.logs()
        job.hold(False)
        kubelet.wait_for(lambda: started(job, "trainer-0", 1, before), WAIT,
                         "the survivor to train alone")
        job.hold(True)
        before = len(job.events())
        job.pod(1)  # the replacement joins the survivor's rendezvous (a scale-up)
        kubelet.wait_for(lambda: started(job, "trainer-1", 2, before), WAIT,
                         "the replacement to join")
        job.mark("TERM trainer-1.2 (second preemption)")
        job.pods[1].terminate()  # the second preemption
        assert job.ended(1) == 143, job.logs()
        job.hold(False)
        assert job.ended(0) == 1, job.logs()  # out of restarts: it closes the rendezvous
        job.pod(1), job.pod(0)
        assert (job.ended(0), job.ended(1)) == (0, 0), job.logs()
    finally:
        job.stop()
    job.report("survivor with --max-restarts 1, two preemptions")
    _new_generation(job, 0, 1)
    restarts = [e["restart"] for e in job.events() if e["event"] == "start"
                and e["host"] == "trainer-0"]
    assert restarts[:3] == ["0", "1", "1"], restarts  # one restart, then a scale-up
    finishes_as_one_run(job, preempted_at)
