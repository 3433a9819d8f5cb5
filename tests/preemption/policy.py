"""What a Job's podFailurePolicy concludes from a pod's end state, as the Job controller
decides it (no API server can run here): a pod whose container exited 0 succeeded; otherwise
the first rule that matches the pod decides (``onExitCodes``: the named container's exit code,
never 0, In or NotIn the values; ``onPodConditions``: a condition of that type and status on
the pod), and with none matching the failure counts against backoffLimit."""

from __future__ import annotations

from typing import Any

VERDICTS = {"Ignore": "ignored", "Count": "counted", "FailJob": "fails the Job",
            "FailIndex": "fails the index"}


def verdict(job: dict[str, Any], container: str, exit_code: int, *,
            disruption_target: bool) -> str:
    """``disruption_target``: whether the control plane set DisruptionTarget on the pod (an
    eviction, a preemption, a node shutdown; not a liveness-probe kill, not a TERM from
    inside the container)."""
    if exit_code == 0:
        return "succeeded"
    conditions = {"DisruptionTarget": "True"} if disruption_target else {}
    for rule in job["spec"].get("podFailurePolicy", {}).get("rules", []):
        if _matches(rule, container, exit_code, conditions):
            return VERDICTS[rule["action"]]
    return "counted"


def _matches(rule: dict[str, Any], container: str, exit_code: int,
             conditions: dict[str, str]) -> bool:
    codes = rule.get("onExitCodes")
    if codes is not None:
        if codes.get("containerName", container) != container:
            return False
        inside = exit_code in codes["values"]
        return inside if codes["operator"] == "In" else not inside
    return any(conditions.get(c["type"]) == c.get("status", "True")
               for c in rule.get("onPodConditions", []))
