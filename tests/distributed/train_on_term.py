"""A trainer for the torchrun-as-PID-1 tests (torch CPU, gloo), run by torchrun: it saves from
its own SIGTERM handler, slowly, as a real one does.

Every process joins the process group, then waits. On SIGTERM its handler logs ``term RANK``
to ``handlers.log`` in CHECKPOINT_DIR, writes its state (``torch.save``) in four parts spread
over ``--save-seconds`` to a temporary file, renames it to ``ckpt-RANK.pt`` (so the file is
there only when complete), logs ``saved RANK`` and exits 0. Rank 0 creates ``ready`` once every
rank has its handler (after a barrier).
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import signal
import sys
import time
from types import FrameType
from typing import Any

import torch
import torch.distributed as dist

PARTS = 4


def state(rank: int) -> dict[str, Any]:
    """What rank ``rank`` saves: the tests load it back and compare."""
    return {"rank": rank, "step": 7,
            "weights": torch.arange(4096, dtype=torch.float64) * (rank + 1)}


def _log(directory: pathlib.Path, line: str) -> None:
    fd = os.open(directory / "handlers.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-seconds", type=float, required=True)
    args = parser.parse_args()
    directory = pathlib.Path(os.environ["CHECKPOINT_DIR"])
    rank = int(os.environ["RANK"])

    def on_term(signum: int, frame: FrameType | None) -> None:
        _log(directory, f"term {rank}")
        buffer = io.BytesIO()
        torch.save(state(rank), buffer)
        payload = buffer.getvalue()
        size = -(-len(payload) // PARTS)
        partial = directory / f".ckpt-{rank}.part"
        with partial.open("wb") as out:
            for part in range(PARTS):
                out.write(payload[part * size:(part + 1) * size])
                out.flush()
                time.sleep(args.save_seconds / PARTS)
        os.replace(partial, directory / f"ckpt-{rank}.pt")
        _log(directory, f"saved {rank}")
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)
    dist.init_process_group("gloo")
    dist.barrier()
    if rank == 0:
        (directory / "ready").touch()
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    main()
