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

import json
import socket
import time
from pathlib import Path
from typing import Any

import yaml

from pmanifest.render.engine import render_text

from . import kubelet

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "distributed-torchrun.yaml"
TRAINER = Path(__file__).resolve().parent / "train_tiny.py"
STEPS = 30
PREEMPT_AT = 8  # checkpointed steps before the first preemption
HOLD = "hold"  # while this file is in the checkpoint directory, no training step starts
JOB_UID = "7d0c1f4e-9a52-4b8e-8f3d-2c6e5b1a9f30"
FIELDS = {"metadata.labels['batch.kubernetes.io/controller-uid']": JOB_UID}
WAIT = 300  # seconds: a deadline for an event, never a sleep


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Job:
    """The rendered objects, run: the store and one pod per index, replaced as the Job
    controller would. ``ran`` records every pod's (name, exit code, seconds)."""

    def __init__(self, work: Path, **distributed: int) -> None:
        self.work = work
        self.ckpt = work / "shared" / "ckpt"
        self.ckpt.mkdir(parents=True)
        self.port = _free_port()
        spec = yaml.safe_load(EXAMPLE.read_text())
        spec["cluster"]["sharedVolume"]["mountPath"] = str(work / "shared")
        worker = spec["workloads"][0]
        worker["command"] = ["python", str(TRAINER), "--steps", STEPS, "--step-seconds",
                             "0.1", "--hold", HOLD]
        worker["gpus"] = 0  # CPU: one training process per node
        worker["distributed"].update(rdzvPort=self.port, lastCallTimeoutSeconds=1,
                                     **distributed)
        worker["checkpoint"]["dir"] = str(self.ckpt)
        text = render_text(yaml.safe_dump(spec), "distributed-torchrun.yaml")
        objects = {f"{o['kind']}/{o['metadata']['name']}": o for o in yaml.safe_load_all(text)}
        self.job = objects["Job/trainer"]
        self.worker = self._container(self.job)
        self.store_container = self._container(objects["Deployment/trainer-rendezvous"])
        self.pods: dict[int, kubelet.Container] = {}
        self.started: list[kubelet.Container] = []
        self.started_at: dict[int, float] = {}
        self.ran: list[tuple[str, int, float]] = []

    @staticmethod
    def _container(obj: dict[str, Any]) -> dict[str, Any]:
        [container] = obj["spec"]["template"]["spec"]["containers"]
        assert isinstance(container, dict)
        return container

    def _start(self, name: str, container: dict[str, Any]) -> kubelet.Container:
        running = kubelet.start(name, container, hostname=name, fields=FIELDS,
                                rewrite={f"trainer-rendezvous:{self.port}":
                                         f"127.0.0.1:{self.port}"}, workdir=self.work)
        self.started.append(running)
        return running

    def store(self) -> None:
        store = self._start("trainer-rendezvous", self.store_container)
        kubelet.wait_for(lambda: "listening" in store.log.read_text(), WAIT, "the store")

    def pod(self, index: int) -> kubelet.Container:
        self.pods[index] = self._start(f"trainer-{index}", self.worker)
        self.started_at[index] = time.monotonic()
        return self.pods[index]

    def ended(self, index: int, timeout: float = WAIT) -> int:
        pod = self.pods[index]
        code = pod.wait(timeout=timeout)
        self.ran.append((pod.log.name, code, time.monotonic() - self.started_at[index]))
        return code

    def counted(self, code: int) -> bool:
        """What the rendered podFailurePolicy makes of a pod that exited ``code`` (no
        DisruptionTarget condition: the test has no API server to set one)."""
        ignored = {v for rule in self.job["spec"]["podFailurePolicy"]["rules"]
                   if rule["action"] == "Ignore" and "onExitCodes" in rule
                   for v in rule["onExitCodes"]["values"]}
        return code != 0 and code not in ignored

    def events(self) -> list[dict[str, Any]]:
        path = self.ckpt / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def step(self) -> int:
        import torch

        try:
            state = torch.load(self.ckpt / "checkpoint.pt", weights_only=True)
        except (FileNotFoundError, RuntimeError, EOFError):
            return 0
        return int(state["step"])

    def hold(self, on: bool) -> None:
        (self.ckpt / HOLD).touch() if on else (self.ckpt / HOLD).unlink()

    def logs(self) -> str:
        return "\n".join(f"--- {c.log.name} (exit {c.process.poll()})\n"
                         + c.log.read_text(errors="replace")[-2500:] for c in self.started)

    def report(self, title: str) -> None:
        """The pods' runs (shown with ``pytest -s``): for the record of timings."""
        print(f"\n{title}")
        for name, code, seconds in self.ran:
            print(f"  {name:<18} exit {code:>3}  {seconds:6.1f} s")

    def stop(self) -> None:
        for running in self.started:
            if running.process.poll() is None:
                running.kill_tree()


def _started(job: Job, host: str, world: int, after: int) -> bool:
    return any(e["event"] == "start" and e["host"] == host and e["world_size"] == world
               for e in job.events()[after:])


def _finishes_as_one_run(job: Job, preempted_at: int) -> None:
    import torch

    from .train_tiny import reference

    events = job.events()
    finish = [e for e in events if e["event"] == "finish"]
    assert len(finish) == 1 and finish[0]["step"] == STEPS, events
    weights = torch.tensor(finish[0]["weights"], dtype=torch.float64)
    assert torch.allclose(weights, reference(STEPS), rtol=0, atol=1e-9)
    starts = [e for e in events if e["event"] == "start"]
    assert [e["resumed_from"] for e in starts[:2]] == [0, 0], events
    assert all(e["resumed_from"] >= preempted_at for e in starts[2:]), events


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
        job.pods[1].terminate()  # the preemption: TERM to the container's main process
        assert job.ended(1) == 143, job.logs()
        before = len(job.events())
        job.hold(False)  # the survivor's collective fails: it restarts, waits, gives up
        assert job.ended(0) == 1, job.logs()
        survivor = job.pods[0].log.read_text(errors="replace")
        assert "RendezvousTimeoutError" in survivor, job.logs()
        assert job.counted(1) and not job.counted(143)
        assert not _started(job, "trainer-0", 1, before)  # never below minNodes
        # the Job replaces both failed pods, after the join timeout
        job.pod(1), job.pod(0)
        assert (job.ended(0), job.ended(1)) == (0, 0), job.logs()
    finally:
        job.stop()
    job.report("late replacement after the join timeout")
    _new_generation(job, 0, 1)
    _finishes_as_one_run(job, preempted_at)


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
        job.pods[1].terminate()
        assert job.ended(1) == 143, job.logs()
        job.hold(False)
        kubelet.wait_for(lambda: _started(job, "trainer-0", 1, before), WAIT,
                         "the survivor to train alone")
        job.hold(True)
        before = len(job.events())
        job.pod(1)  # the replacement joins the survivor's rendezvous (a scale-up)
        kubelet.wait_for(lambda: _started(job, "trainer-1", 2, before), WAIT,
                         "the replacement to join")
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
    _finishes_as_one_run(job, preempted_at)
