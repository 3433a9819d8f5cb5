"""A rendered torchrun worker as a container's PID 1, preempted the way a kubelet does it
(tests/preemption's harness: a new PID namespace, TERM from outside, SIGKILL at the grace
period), with real torchrun (torch CPU, gloo): 2 trainers on the node, the rendered c10d
rendezvous store as a process, its Service name mapped to 127.0.0.1 by the test.

torchrun starts its trainers in sessions of their own and forwards TERM to them itself; the
supervisor signals the main's process group only, so each trainer's handler runs once and the
checkpoint it writes is complete (the launcher before torchrun gets the TERM and forwards it
once). torchrun's shutdown timeout, rendered from the supervisor's deadline as
TORCH_ELASTIC_SHUTDOWN_TIMEOUT (torch releases without it ignore the variable, where the flag
would stop them at start), is what bounds a trainer's save (torchrun's default is 30 s,
whatever the grace).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.render.engine import render_text

from ..preemption.kubelet import Outcome, Preemption, Shell, needs_root, run, shells
from . import kubelet

pytestmark = needs_root
READY_SECONDS = 300  # torch starts three times before the trainers are ready: a loaded machine


@pytest.fixture(autouse=True)
def _generous_ready_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/preemption's harness waits 10 s for the main to be ready (enough for a shell
    script); the launcher, torchrun and two trainers each import torch first, which a shared
    machine can take longer than that for. The same wait, on the same events, with a
    deadline that does not fail a correct run."""
    from ..preemption import kubelet as harness

    def wait_for(pod: Any, ready: Path) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while not ready.exists():
            if pod.tracer.exited.is_set():
                raise AssertionError(f"PID 1 exited before {ready.name} appeared: "
                                     + pod.stderr_path.read_text(errors="replace"))
            if time.monotonic() > deadline:
                raise TimeoutError(f"{ready} never appeared")
            time.sleep(0.01)

    monkeypatch.setattr(harness._Pod, "wait_for", wait_for)

TRAINER = Path(__file__).resolve().parent / "train_on_term.py"
SAVE_SECONDS = 4  # each trainer's handler needs this long to save
JOB_UID = "5c1d9e0e-1f7a-4c43-9d0b-2f6f0a7c4e21"
FIELDS = {"metadata.labels['batch.kubernetes.io/controller-uid']": JOB_UID}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _render(ckpt: Path, port: int, grace: int, margin: int) -> dict[str, dict[str, Any]]:
    spec = {"apiVersion": "pmanifest/v1", "cluster": {"sharedVolume": {
        "claimName": "shared", "mountPath": str(ckpt.parent)}}, "workloads": [{
        "name": "trainer", "image": "x",
        "command": ["python", str(TRAINER), "--save-seconds", str(SAVE_SECONDS)],
        "distributed": {"minNodes": 1, "maxNodes": 1, "nprocPerNode": 2, "rdzvPort": port},
        "checkpoint": {"trigger": "sigterm", "mode": "signal", "gracePeriodSeconds": grace,
                       "marginSeconds": margin, "dir": str(ckpt)},
    }]}
    text = render_text(yaml.safe_dump(spec), "torchrun.yaml")
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in yaml.safe_load_all(text)}


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    [container] = obj["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def _preempt(shell: Shell, work: Path, grace: int, margin: int
             ) -> tuple[Outcome, list[str], dict[str, str]]:
    """Runs the rendered worker as PID 1 under ``shell`` until it is preempted and exits;
    returns the outcome, the argv it ran and its environment."""
    ckpt = work / "ckpt"
    ckpt.mkdir()
    port = _free_port()
    objects = _render(ckpt, port, grace, margin)
    worker = _container(objects["Job/trainer"])
    assert objects["Job/trainer"]["spec"]["template"]["spec"][
        "terminationGracePeriodSeconds"] == grace
    store = kubelet.start("trainer-rendezvous", _container(
        objects["Deployment/trainer-rendezvous"]), hostname="trainer-rendezvous",
        fields=FIELDS, rewrite={}, workdir=work)
    try:
        kubelet.wait_for(lambda: "listening" in store.log.read_text(), READY_SECONDS, "the store")
        env = kubelet.container_env(worker, "trainer-0", FIELDS)
        argv = [kubelet.expand(str(a), env).replace(f"trainer-rendezvous:{port}",
                                                    f"127.0.0.1:{port}")
                for a in [*worker["command"], *worker["args"]]]
        container = {"command": argv, "env": [{"name": k, "value": v} for k, v in env.items()],
                     "lifecycle": worker["lifecycle"]}  # the preStop mark the kubelet runs
        outcome = run(container, shell, work, grace=grace,
                      preemption=Preemption(ready=ckpt / "ready"),
                      checkpoint_log=ckpt / "handlers.log", timeout=READY_SECONDS)
    finally:
        store.kill_tree()
    return outcome, argv, env


def _handler_runs(ckpt: Path) -> list[str]:
    return sorted(line for line in (ckpt / "handlers.log").read_text().splitlines()
                  if line.startswith("term "))


# each run starts torch three times: the process-group semantics are proven under every shell
# by tests/preemption (scenario own-session-child); here dash (Debian's /bin/sh) and bash
SHELLS = {s.name: s for s in shells()}


def test_each_trainer_saves_once_and_completely(tmp_path: Path) -> None:
    import torch  # a test dependency: fail, never skip, where it is missing

    from .train_on_term import state

    # the supervisor's deadline: 12 - 2 = 10 s; torchrun's shutdown timeout 7 s > the save
    outcome, argv, env = _preempt(SHELLS["dash"], tmp_path, grace=12, margin=2)
    assert env["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"] == "7"
    assert "--shutdown-timeout" not in argv
    ckpt = tmp_path / "ckpt"
    assert (outcome.exit_code, outcome.survivors, outcome.kubelet_killed) == (143, (), False), (
        outcome.stderr)
    assert _handler_runs(ckpt) == ["term 0", "term 1"], outcome.stderr
    for rank in (0, 1):
        saved = torch.load(ckpt / f"ckpt-{rank}.pt", weights_only=True)
        expected = state(rank)
        assert saved["rank"] == rank and saved["step"] == expected["step"]
        assert torch.equal(saved["weights"], expected["weights"])
    assert SAVE_SECONDS <= outcome.seconds < 10, outcome
    assert "deadline reached" not in outcome.stderr


def test_torchrun_honours_the_rendered_shutdown_timeout(tmp_path: Path) -> None:
    """A save longer than torchrun's shutdown timeout is cut by torchrun itself, which then
    exits before the supervisor's deadline: the variable is what gives a trainer its time
    (on torch releases that read it; older ones kill at 30 s, and render warns)."""
    # the supervisor's deadline: 7 - 2 = 5 s; torchrun's shutdown timeout 2 s < the save
    outcome, argv, env = _preempt(SHELLS["bash"], tmp_path, grace=7, margin=2)
    assert env["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"] == "2" and "--shutdown-timeout" not in argv
    ckpt = tmp_path / "ckpt"
    assert (outcome.exit_code, outcome.survivors, outcome.kubelet_killed) == (143, (), False), (
        outcome.stderr)
    assert _handler_runs(ckpt) == ["term 0", "term 1"], outcome.stderr
    assert not list(ckpt.glob("ckpt-*.pt"))  # both saves were cut
    assert outcome.stderr.count("forcefully exiting via 9") == 2  # torchrun's own SIGKILL
    assert "deadline reached" not in outcome.stderr
    assert 2 <= outcome.seconds < 5, outcome
