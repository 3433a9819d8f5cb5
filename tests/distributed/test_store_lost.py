"""Losing the rendezvous store is a disruption of an elastic run, not a failure of its work
(real torchrun, torch CPU, gloo; ``elastic_job`` runs the rendered Job).

The store runs on a standard node, which is drained and upgraded now and then: the kubelet
TERMs it. It exits 143 (0 would complete a JobSet's rendezvous Job, which nothing restarts),
every worker's torchrun fails when its store goes away, and the launcher, which reached the
store at its start and finds it gone (or new and empty) after, exits 75: the worker Job's
podFailurePolicy ignores that code, so the replacements cost no index its backoff. They start
on the new store (a new rendezvous) and resume from the checkpoint. The JobSet's side of it, the
rendezvous Job failed by its podFailurePolicy on 143 and the JobSet restarted without counting,
is in the rendered rules (tests/render/test_distributed.py): there is no JobSet controller here.
"""

from __future__ import annotations

from pathlib import Path

from pmanifest.render.elastic import STORE_LOST_EXIT

from . import kubelet
from .elastic_job import JOB_UID, PREEMPT_AT, WAIT, Job, finishes_as_one_run


def test_a_lost_store_costs_no_backoff_and_training_resumes(tmp_path: Path) -> None:
    job = Job(tmp_path, minNodes=1, maxNodes=2)
    try:
        store = job.store()
        job.pod(0), job.pod(1)
        kubelet.wait_for(lambda: job.step() >= PREEMPT_AT, WAIT, "training to start")
        job.hold(True)  # nothing finishes while the store is away
        stopped_at = job.step()
        job.mark("TERM the store")
        store.terminate()  # the kubelet stops the store: its node is drained
        assert store.wait(timeout=WAIT) == 143, job.logs()
        codes = (job.ended(0), job.ended(1))
        assert codes == (STORE_LOST_EXIT, STORE_LOST_EXIT), job.logs()
        assert not any(job.counted(code) for code in codes)  # the failure policy ignores it
        assert job.counted(1)  # while a genuine failure still counts
        for index in (0, 1):
            log = job.pods[index].log.read_text(errors="replace")
            assert "the rendezvous store went away" in log, log
        job.hold(False)
        job.mark("new store")
        job.store()  # the Deployment's new store pod: empty
        job.pod(0), job.pod(1)
        assert (job.ended(0), job.ended(1)) == (0, 0), job.logs()
    finally:
        job.stop()
    job.report("rendezvous store lost")
    for index in (0, 1):  # on the new store, the rendezvous starts again at generation 0
        log = job.pods[index].log.read_text(errors="replace")
        assert f"pmanifest-launcher: rendezvous {JOB_UID}-0\n" in log, log
    finishes_as_one_run(job, stopped_at)
