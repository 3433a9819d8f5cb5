"""The rendered torchrun Job run on this machine (torch CPU, gloo), for the tests of its
rendezvous: the rendered store as the coordinator, each pod the rendered worker's command line
(its supervisor, the launcher, torchrun, the tiny trainer), and the test as the Job controller.
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Job:
    """The rendered objects, run: the store and one pod per index, replaced as the Job
    controller would. ``ran`` records every pod's (log, exit code, start, end), in seconds
    since the Job was made."""

    def __init__(self, work: Path, **distributed: int) -> None:
        self.work = work
        self.ckpt = work / "shared" / "ckpt"
        self.ckpt.mkdir(parents=True)
        self.port = free_port()
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
        self.ran: list[tuple[str, int, float, float]] = []
        self.t0 = time.monotonic()
        self.marks: list[tuple[str, float]] = []  # what the test did, and when

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

    def store(self) -> kubelet.Container:
        store = self._start("trainer-rendezvous", self.store_container)
        kubelet.wait_for(lambda: "listening" in store.log.read_text(), WAIT, "the store")
        return store

    def pod(self, index: int) -> kubelet.Container:
        self.pods[index] = self._start(f"trainer-{index}", self.worker)
        self.started_at[index] = time.monotonic()
        return self.pods[index]

    def ended(self, index: int, timeout: float = WAIT) -> int:
        pod = self.pods[index]
        code = pod.wait(timeout=timeout)
        now = time.monotonic()
        self.ran.append((pod.log.name, code, self.started_at[index] - self.t0, now - self.t0))
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

    def mark(self, what: str) -> None:
        self.marks.append((what, time.monotonic() - self.t0))

    def report(self, title: str) -> None:
        """The pods' runs (shown with ``pytest -s``): for the record of timings."""
        print(f"\n{title}")
        for name, code, start, end in self.ran:
            print(f"  {name:<18} exit {code:>3}  started {start:6.1f} s  ended {end:6.1f} s")
        for what, when in self.marks:
            print(f"  at {when:6.1f} s: {what}")

    def stop(self) -> None:
        for running in self.started:
            if running.process.poll() is None:
                running.kill_tree()


def started(job: Job, host: str, world: int, after: int) -> bool:
    return any(e["event"] == "start" and e["host"] == host and e["world_size"] == world
               for e in job.events()[after:])


def finishes_as_one_run(job: Job, preempted_at: int) -> None:
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
