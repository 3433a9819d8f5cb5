"""The rendered torchrun elastic shape, run for real on this machine (torch CPU, gloo).

The elastic example is rendered with ``render_text`` (its training command swapped for the
tiny trainer, the shared volume for a temporary directory, the rendezvous port for a free
one). The coordinator's rendered command is started as a process; three workers run their
rendered command lines under the rendered supervisor, with the rendezvous Service name mapped
to 127.0.0.1 by this test. One worker is preempted mid-run with SIGTERM (to its supervisor,
as the kubelet would), its replacement starts later, and the training must end as if nothing
had happened: same step count, same weights, resumed from a checkpoint.

torch is a test dependency (``pip install '.[test]'``): without it this test fails, it is
never skipped.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import yaml

from pmanifest.render.engine import render_text

from . import kubelet

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "distributed-torchrun.yaml"
TRAINER = Path(__file__).resolve().parent / "train_tiny.py"
STEPS = 40
STEP_SECONDS = 0.2
PREEMPT_AT = 10  # checkpointed steps before the preemption
JOB_UID = "0b6f3a56-4b3e-4d7a-9a37-1f0c2d9e8a11"  # the downward API's value of the Job's UID


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _render(shared: Path, port: int) -> dict[str, dict[str, Any]]:
    """The rendered objects of the example, by kind and name."""
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["cluster"]["sharedVolume"]["mountPath"] = str(shared)
    worker = spec["workloads"][0]
    worker["command"] = ["python", str(TRAINER), "--steps", STEPS,
                         "--step-seconds", str(STEP_SECONDS)]
    worker["gpus"] = 0  # CPU: one training process per node
    worker["distributed"].update(minNodes=2, maxNodes=3, rdzvPort=port,
                                 lastCallTimeoutSeconds=2)
    worker["checkpoint"]["dir"] = str(shared / "ckpt")
    # signal mode: TERM reaches torchrun, whose trainer checkpoints every step itself
    text = render_text(yaml.safe_dump(spec), "distributed-torchrun.yaml")
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in yaml.safe_load_all(text)}


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    containers = obj["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _events(directory: Path) -> list[dict[str, Any]]:
    path = directory / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _step(directory: Path) -> int:
    starts = [e for e in _events(directory) if e["event"] == "start"]
    if not starts:
        return 0
    import torch

    try:
        state = torch.load(directory / "checkpoint.pt", weights_only=True)
    except (FileNotFoundError, RuntimeError, EOFError):
        return 0
    return int(state["step"])


def test_preempted_worker_is_replaced_and_training_resumes(tmp_path: Path) -> None:
    import torch  # a test dependency: fail, never skip, where it is missing

    from .train_tiny import reference

    shared = tmp_path / "shared"
    ckpt = shared / "ckpt"
    ckpt.mkdir(parents=True)
    port = _free_port()
    objects = _render(shared, port)
    coordinator = _container(objects["Deployment/trainer-rendezvous"])
    worker = _container(objects["Job/trainer"])
    fields = {"metadata.labels['batch.kubernetes.io/controller-uid']": JOB_UID}
    rewrite = {f"trainer-rendezvous:{port}": f"127.0.0.1:{port}"}
    started: list[kubelet.Container] = []

    def pod(name: str, container: dict[str, Any]) -> kubelet.Container:
        running = kubelet.start(name, container, hostname=name, fields=fields,
                                rewrite=rewrite, workdir=tmp_path)
        started.append(running)
        return running

    def logs() -> str:
        return "\n".join(f"--- {c.name} (exit {c.process.poll()})\n"
                         + c.log.read_text(errors="replace")[-3000:] for c in started)

    try:
        store = pod("trainer-rendezvous", coordinator)
        kubelet.wait_for(lambda: "listening" in store.log.read_text(), 300, "the store")
        workers = [pod(f"trainer-{i}", worker) for i in range(3)]
        kubelet.wait_for(lambda: _step(ckpt) >= PREEMPT_AT, 300, "training to start")

        workers[1].terminate()  # the preemption: SIGTERM to the container's main process
        assert workers[1].wait(timeout=300) == 143, logs()
        preempted_at = _step(ckpt)
        before = len(_events(ckpt))
        # the Job's new pod for the preempted index, as soon as the old one has failed
        replacement = pod("trainer-1", worker)
        for running in (workers[0], workers[2], replacement):
            assert running.wait(timeout=300) == 0, logs()
    finally:
        for running in started:
            if running.process.poll() is None and running.name != "trainer-rendezvous":
                running.kill_tree()
    store.terminate()
    assert store.wait(timeout=300) == 143, logs()  # a stopped store is a disruption, never 0

    events = _events(ckpt)
    starts = [e for e in events[before:] if e["event"] == "start"]
    # the survivors restarted their worker group (one of their --max-restarts) and re-joined,
    # the replacement joined them (at once, or by a later scale-up round), all from checkpoints
    survivors = [e for e in starts if e["host"] in ("trainer-0", "trainer-2")]
    assert survivors and all(int(e["restart"]) >= 1 for e in survivors), events
    final = [e for e in starts if e["world_size"] == 3]
    assert {e["host"] for e in final} == {"trainer-0", "trainer-1", "trainer-2"}, events
    assert all(PREEMPT_AT <= e["resumed_from"] < STEPS for e in starts), events
    finish = [e for e in events if e["event"] == "finish"]
    assert len(finish) == 1 and finish[0]["step"] == STEPS, events
    # the same weights as an uninterrupted single-process run: nothing lost or repeated
    weights = torch.tensor(finish[0]["weights"], dtype=torch.float64)
    assert torch.allclose(weights, reference(STEPS), rtol=0, atol=1e-9)
    first = [e for e in events if e["event"] == "start"][:3]
    assert [e["resumed_from"] for e in first] == [0, 0, 0]
    assert preempted_at >= PREEMPT_AT
