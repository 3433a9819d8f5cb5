"""What render writes so that exit code 143 means "the kubelet is terminating the pod"
(issue 23): every supervised container has a preStop hook that marks the termination for the
supervisor, a preStop checkpoint runs bounded below the grace period, and the Job ignores 143
without DisruptionTarget only where no probe can have had the kubelet kill the container
(tests/preemption runs all of it as PID 1 under every shell)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from pmanifest.kube.contract import SIGTERM_EXIT
from pmanifest.render.context import PRESTOP_MARK
from pmanifest.render.engine import render_text


def _job(worker: dict[str, Any]) -> dict[str, Any]:
    spec = {"apiVersion": "pmanifest/v1",
            "workloads": [{"name": "w", "image": "x", "command": ["python", "t.py"], **worker}]}
    text = render_text(yaml.safe_dump(spec), "spec.yaml")
    [job] = [o for o in yaml.safe_load_all(text) if o["kind"] == "Job"]
    return job  # type: ignore[no-any-return]


def _ignores_143(job: dict[str, Any]) -> bool:
    return any(rule.get("onExitCodes", {}).get("values") == [SIGTERM_EXIT]
               for rule in job["spec"]["podFailurePolicy"]["rules"])


SIGTERM = {"trigger": "sigterm", "command": ["python", "ckpt.py"]}


@pytest.mark.parametrize(("probes", "fallback"), [
    ({}, True),
    ({"liveness": {"exec": {"command": ["true"]}}}, False),
    ({"startup": {"tcpSocket": {"port": 80}}}, False),
], ids=["none", "liveness", "startup"])
def test_143_alone_is_ignored_only_without_a_killing_probe(probes: dict[str, Any],
                                                           fallback: bool) -> None:
    job = _job({"checkpoint": SIGTERM, **({"probes": probes} if probes else {})})
    assert _ignores_143(job) is fallback
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]


@pytest.mark.parametrize("checkpoint", [None, SIGTERM, {"trigger": "sigterm"}],
                         ids=["none", "command", "signal"])
def test_every_supervised_container_marks_the_termination(checkpoint: Any) -> None:
    job = _job({"checkpoint": checkpoint} if checkpoint else {})
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][3] == "pmanifest-supervisor"
    assert container["lifecycle"]["preStop"]["exec"]["command"] == [
        "/bin/sh", "-c", PRESTOP_MARK]


def test_a_prestop_checkpoint_is_bounded_below_the_grace_period() -> None:
    job = _job({"checkpoint": {"trigger": "preStop", "command": ["python", "ckpt.py"],
                               "gracePeriodSeconds": 120, "marginSeconds": 15}})
    hook = job["spec"]["template"]["spec"]["containers"][0]["lifecycle"]["preStop"]["exec"]
    assert hook["command"][0:2] == ["/bin/sh", "-c"]
    assert hook["command"][2].startswith(PRESTOP_MARK)
    assert hook["command"][3:] == ["pmanifest-prestop", "105", "python", "ckpt.py"]
