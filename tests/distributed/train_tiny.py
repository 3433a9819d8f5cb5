"""A tiny elastic training script (gloo, CPU) for the distributed tests, run by torchrun.

It trains a linear model for ``--steps`` global steps on a global batch that does not depend on
the number of processes (each rank takes its slice, gradients are summed with all_reduce and
divided by the global batch size), so the final weights are those of a single-process run
however often the world size changes. Rank 0 saves a checkpoint on the shared directory after
every step (written to a temporary file, then renamed, so a reader never sees half of one);
every process resumes from the latest checkpoint when torchrun (re)starts it.

Every start and the finish are appended as JSON lines to ``events.jsonl`` in the checkpoint
directory, which is what the tests read: who started, with which world size, from which step.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

FEATURES = 4
GLOBAL_BATCH = 12  # divisible by every world size the tests use (1, 2, 3, 4, 6)
LEARNING_RATE = 0.05


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global batch of one step: the same for every world size."""
    generator = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(GLOBAL_BATCH, FEATURES, generator=generator, dtype=torch.float64)
    true_w = torch.arange(1, FEATURES + 1, dtype=torch.float64)
    y = x @ true_w + 0.5
    return x, y


def initial_weights() -> torch.Tensor:
    return torch.zeros(FEATURES + 1, dtype=torch.float64)


def gradient_sum(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Sum over the rows of d/dw of the squared error (bias is the last weight)."""
    w = w.detach().clone().requires_grad_(True)
    prediction = x @ w[:-1] + w[-1]
    loss = ((prediction - y) ** 2).sum()
    loss.backward()
    assert w.grad is not None
    return w.grad


def reference(steps: int) -> torch.Tensor:
    """The weights a single process reaches after ``steps`` steps."""
    w = initial_weights()
    for step in range(steps):
        x, y = batch(step)
        w = w - LEARNING_RATE * gradient_sum(w, x, y) / GLOBAL_BATCH
    return w


def _log(directory: pathlib.Path, **event: Any) -> None:
    line = json.dumps({"time": time.time(), "pid": os.getpid(), **event}) + "\n"
    # one small O_APPEND write per event: lines from several processes never interleave
    fd = os.open(directory / "events.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _load(directory: pathlib.Path) -> tuple[int, torch.Tensor]:
    path = directory / "checkpoint.pt"
    if not path.exists():
        return 0, initial_weights()
    state = torch.load(path, weights_only=True)
    return int(state["step"]), state["weights"]


def _save(directory: pathlib.Path, step: int, w: torch.Tensor) -> None:
    temporary = directory / f".checkpoint.pt.{os.getpid()}"
    torch.save({"step": step, "weights": w}, temporary)
    os.replace(temporary, directory / "checkpoint.pt")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, default=0.2)
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR"))
    # while this file exists (in the checkpoint directory) no step starts: a test holds the
    # training still around a preemption, so it cannot finish first on a slow machine
    parser.add_argument("--hold", default=None)
    args = parser.parse_args()
    if not args.checkpoint_dir:
        parser.error("--checkpoint-dir or CHECKPOINT_DIR is required")
    directory = pathlib.Path(args.checkpoint_dir)
    directory.mkdir(parents=True, exist_ok=True)

    # a peer that exits closes its connections, which fails a collective at once; the timeout
    # only bounds a hang, and leaves room for slow starts on a loaded machine
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    step, w = _load(directory)
    _log(directory, event="start", rank=rank, world_size=world, resumed_from=step,
         host=os.environ.get("HOSTNAME"), node=os.environ.get("GROUP_RANK"),
         restart=os.environ.get("TORCHELASTIC_RESTART_COUNT"))
    share = GLOBAL_BATCH // world
    hold = directory / args.hold if args.hold else None
    while step < args.steps:
        while hold is not None and hold.exists():
            time.sleep(0.05)
        x, y = batch(step)
        rows = slice(rank * share, (rank + 1) * share)
        grad = gradient_sum(w, x[rows], y[rows])
        dist.all_reduce(grad)
        w = w - LEARNING_RATE * grad / GLOBAL_BATCH
        step += 1
        if rank == 0:
            _save(directory, step, w)
        time.sleep(args.step_seconds)
    dist.barrier()
    if rank == 0:
        _log(directory, event="finish", rank=rank, world_size=world, step=step,
             weights=w.tolist())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
