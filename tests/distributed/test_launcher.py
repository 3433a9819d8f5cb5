"""The rendered launcher (``pmanifest.render.elastic.LAUNCHER``) run for real against the
rendered store (a TCPStore server process), with a shell program in torchrun's place: the
rendezvous generation it picks, the status it exits with, the TERM it forwards. Cheap (no
torchrun, no trainer), so the races and edges are played here; tests/distributed/
test_closed_rendezvous.py and test_store_lost.py play the same with real torchrun.

The rendezvous is closed here with torch's own handler (``set_closed``), as an agent that
gives up closes it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pmanifest.render.distributed import STORE_SCRIPT
from pmanifest.render.elastic import LAUNCHER, STORE_LOST_EXIT, STORE_OPS

from . import kubelet
from .elastic_job import free_port

UID = "2f4c8e1a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
WAIT = 120  # seconds, for a launcher on a loaded machine (it imports torch)


class Store:
    """The rendered store as a process, on a fixed port (a restart listens on the same)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        path = self.work / "store.log"
        before = path.read_bytes().count(b"listening") if path.exists() else 0
        with path.open("ab") as log:
            self.process = subprocess.Popen([sys.executable, "-c", STORE_SCRIPT,
                                             str(self.port)], stdout=log,
                                            stderr=subprocess.STDOUT)
        kubelet.wait_for(lambda: path.read_bytes().count(b"listening") > before, WAIT,
                         "the store")

    def stop(self) -> int:
        assert self.process is not None
        self.process.terminate()
        return self.process.wait(WAIT)

    def close(self, run_id: str) -> None:
        """What an agent that gives up does: mark the rendezvous ``run_id`` closed."""
        from torch.distributed import TCPStore
        from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import (
            C10dRendezvousBackend,
        )
        from torch.distributed.elastic.rendezvous.dynamic_rendezvous import (
            DynamicRendezvousHandler,
        )

        store = TCPStore("127.0.0.1", self.port, is_master=False,
                         timeout=timedelta(seconds=WAIT))
        handler = DynamicRendezvousHandler.from_backend(
            run_id, store, C10dRendezvousBackend(store, run_id), 1, 1)
        handler.set_closed()
        assert handler.is_closed()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    running = Store(tmp_path)
    yield running
    if running.process is not None and running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def launch(store: Store, program: str, wait: int = WAIT) -> subprocess.Popen[str]:
    """The launcher with ``sh -c PROGRAM`` as torchrun: $4 is the rendezvous id it got."""
    argv = [sys.executable, "-c", LAUNCHER, STORE_OPS, str(wait), "sh", "-c", program, "sh",
            "--rdzv-endpoint", f"127.0.0.1:{store.port}", "--rdzv-id", UID]
    return subprocess.Popen(argv, cwd=store.work, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=WAIT)
    return process.returncode, out, err


GAVE_UP = 'echo "$4"; exit 1'  # torchrun that gave up: closed the rendezvous, exited 1


def test_pods_that_arrive_together_agree_on_one_new_generation(store: Store) -> None:
    code, out, err = result(launch(store, GAVE_UP))
    assert (code, out) == (1, f"{UID}-0\n"), err
    store.close(f"{UID}-0")
    together = [launch(store, GAVE_UP) for _ in range(3)]
    outcomes = [result(p) for p in together]
    assert [(c, o) for c, o, _ in outcomes] == [(1, f"{UID}-1\n")] * 3, outcomes
    assert any(f"rendezvous {UID}-0 is closed" in e for _, _, e in outcomes), outcomes
    store.close(f"{UID}-1")  # closed again: the next generation
    code, out, err = result(launch(store, GAVE_UP))
    assert (code, out) == (1, f"{UID}-2\n"), err


def test_an_open_rendezvous_is_joined(store: Store) -> None:
    """The positive around it: while the rendezvous is open, a new pod joins it (no new
    generation), however many pods came before."""
    for _ in range(2):
        code, out, err = result(launch(store, 'echo "$4"; exit 3'))
        assert (code, out) == (3, f"{UID}-0\n"), err  # torchrun's own status, the store alive
        assert "closed" not in err and "went away" not in err


def test_a_finished_run_is_not_started_again(store: Store, tmp_path: Path) -> None:
    """torchrun's 0 closes the rendezvous as a give-up does: a pod that comes after the run
    finished exits 0 at once instead of training alone in a new generation."""
    code, _, err = result(launch(store, "exit 0"))
    assert code == 0, err
    store.close(f"{UID}-0")  # what the finishing agents did
    code, _, err = result(launch(store, "touch ran"))
    assert code == 0 and not (tmp_path / "ran").exists(), err
    assert f"the run of rendezvous {UID}-0 finished" in err


def test_a_failure_is_the_stores_only_when_the_store_went_away(store: Store,
                                                                 tmp_path: Path) -> None:
    wait = 'touch started; while [ ! -e go ]; do sleep 0.05; done; exit 1'
    # the store stops while the program runs: 75, the code the failure policy ignores
    running = launch(store, wait)
    kubelet.wait_for(lambda: (tmp_path / "started").exists(), WAIT, "the program")
    assert store.stop() == 143
    (tmp_path / "go").touch()
    code, _, err = result(running)
    assert code == STORE_LOST_EXIT and "the rendezvous store went away" in err, err
    # a new, empty store by the time the program fails (a restart): the same
    for name in ("go", "started"):
        (tmp_path / name).unlink()
    store.start()
    running = launch(store, wait)
    kubelet.wait_for(lambda: (tmp_path / "started").exists(), WAIT, "the program")
    assert store.stop() == 143
    store.start()
    (tmp_path / "go").touch()
    code, _, err = result(running)
    assert code == STORE_LOST_EXIT, err
    # the store is there and the same: the program's own failure, counted
    for name in ("go", "started"):
        (tmp_path / name).unlink()
    running = launch(store, wait)
    kubelet.wait_for(lambda: (tmp_path / "started").exists(), WAIT, "the program")
    (tmp_path / "go").touch()
    code, _, err = result(running)
    assert code == 1 and "went away" not in err, err


def test_no_store_at_the_start_is_a_counted_failure(tmp_path: Path) -> None:
    """A wrong endpoint (or a store that never came) must not be retried forever: exit 1."""
    argv = [sys.executable, "-c", LAUNCHER, STORE_OPS, "2", "sh", "-c", "touch ran", "sh",
            "--rdzv-endpoint", f"127.0.0.1:{free_port()}", "--rdzv-id", UID]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if "pmanifest-launcher" in line]
    # one line, not torch's C++ stack that comes with its error
    assert len(said) == 1 and said[0].startswith(
        "pmanifest-launcher: no rendezvous store at 127.0.0.1:"), done.stderr
    assert "frame #" not in said[0] and "timed out" in said[0], said
    assert not (tmp_path / "ran").exists()


def test_term_is_forwarded_once(store: Store, tmp_path: Path) -> None:
    """The launcher forwards the supervisor's TERM to torchrun once; a second TERM (a
    launcher that forwards within its group, a kubelet's retry) is not passed on, so torchrun's
    shutdown is never cut by its own handler running twice. It then exits with torchrun's
    status (the supervisor reports the preemption)."""
    program = ('trap "echo term >> terms" TERM; touch started; '
               'while [ ! -e stop ]; do sleep 0.05; done; exit 0')
    running = launch(store, program)
    kubelet.wait_for(lambda: (tmp_path / "started").exists(), WAIT, "the program")
    running.send_signal(signal.SIGTERM)
    kubelet.wait_for(lambda: (tmp_path / "terms").exists(), WAIT, "the forwarded TERM")
    running.send_signal(signal.SIGTERM)
    time.sleep(0.5)  # a second forward would be written by now; nothing to wait for
    (tmp_path / "stop").touch()
    code, _, err = result(running)
    assert code == 0, err
    assert (tmp_path / "terms").read_text() == "term\n"
