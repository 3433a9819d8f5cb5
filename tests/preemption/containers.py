"""Containers as render writes them: a one-worker spec through ``render_text``, and the Job's
container and grace period taken from the output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pmanifest.render.engine import render_text

SUPERVISOR = (Path(__file__).resolve().parents[2] / "templates" / "supervisor.sh").read_text()
KUBERNETES_DEFAULT_GRACE = 30


def rendered(main: list[str], *, mode: str, grace: int, margin: int,
             checkpoint: list[str] | None = None, env: dict[str, str] | None = None,
             probes: dict[str, Any] | None = None
             ) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """(container, terminationGracePeriodSeconds, the Job) of a worker whose checkpoint is
    ``mode``: signal, command, prestop (a preStop hook) or none (no checkpoint)."""
    worker: dict[str, Any] = {"name": "w", "image": "x", "command": main, "env": env or {}}
    if probes:
        worker["probes"] = probes
    if mode != "none":
        body: dict[str, Any] = {"trigger": "preStop" if mode == "prestop" else "sigterm",
                                "gracePeriodSeconds": grace, "marginSeconds": margin}
        if mode != "prestop":
            body["mode"] = mode
        if checkpoint is not None:
            body["command"] = checkpoint
        worker["checkpoint"] = body
    spec = {"apiVersion": "pmanifest/v1", "workloads": [worker]}
    text = render_text(yaml.safe_dump(spec, allow_unicode=True), "scenario.yaml")
    [job] = [o for o in yaml.safe_load_all(text) if o["kind"] == "Job"]
    pod = job["spec"]["template"]["spec"]
    container: dict[str, Any] = pod["containers"][0]
    return (container, pod.get("terminationGracePeriodSeconds", KUBERNETES_DEFAULT_GRACE),
            job)
