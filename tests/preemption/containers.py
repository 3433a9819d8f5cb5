"""Phase-1 stand-in for render: containers laid out exactly as render lays them out.

``/bin/sh -c SUPERVISOR pmanifest-supervisor MODE DEADLINE N CHECKPOINT_ARGV...`` as the
command, the main argv as args, the checkpoint as a preStop exec hook for ``prestop``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SUPERVISOR = (Path(__file__).resolve().parents[2] / "templates" / "supervisor.sh").read_text()


def supervised(main: list[str], *, mode: str, grace: int, margin: int,
               checkpoint: list[str] | None = None, env: dict[str, str] | None = None
               ) -> dict[str, Any]:
    deadline = margin if mode == "prestop" else grace - margin
    in_argv = list(checkpoint or []) if mode == "command" else []
    container: dict[str, Any] = {
        "command": ["/bin/sh", "-c", SUPERVISOR, "pmanifest-supervisor", mode, str(deadline),
                    str(len(in_argv)), *in_argv],
        "args": list(main),
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
    }
    if mode == "prestop":
        container["lifecycle"] = {"preStop": {"exec": {"command": list(checkpoint or [])}}}
    return container
