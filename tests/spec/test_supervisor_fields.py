"""The termination supervisor's spec fields: checkpoint.mode, marginSeconds, expectedSeconds,
activeDeadlineSeconds, and how render lays out the supervisor's arguments from them."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.kube.contract import SIGTERM_EXIT, UNEXPECTED_TERM_EXIT
from pmanifest.render.engine import RenderOptions, render_text

HEAD = "apiVersion: pmanifest/v1\nworkloads:\n  - name: train\n    image: x\n"
MAIN = "    command: [python, train.py]\n"


def _objects(body: str, profile: str | None = None) -> list[dict[str, Any]]:
    text = render_text(HEAD + textwrap.indent(textwrap.dedent(body), "    "), "s.yaml",
                       RenderOptions(profile=profile))
    return list(yaml.safe_load_all(text))


def _container(body: str, profile: str | None = None) -> dict[str, Any]:
    obj = _objects(body, profile)[-1]
    container: dict[str, Any] = obj["spec"]["template"]["spec"]["containers"][0]
    return container


@pytest.mark.parametrize(("body", "arguments"), [
    # no checkpoint: Kubernetes' default 30 s grace period, minus the default 10 s margin
    ("command: [run]", ["none", "20", "0"]),
    ("command: [run]\ncheckpoint: {trigger: sigterm}", ["signal", "290", "0"]),
    ("command: [run]\ncheckpoint: {trigger: sigterm, mode: signal, marginSeconds: 30}",
     ["signal", "270", "0"]),
    ("command: [run]\ncheckpoint: {trigger: sigterm, command: [save, -f]}",
     ["command", "290", "2", "save", "-f"]),
    ("command: [run]\ncheckpoint: {trigger: sigterm, mode: command, command: save,\n"
     "             gracePeriodSeconds: 120, expectedSeconds: 90, marginSeconds: 30}",
     ["command", "90", "3", "/bin/sh", "-c", "save"]),
    # preStop: the hook has used its share of the grace period; the main gets the margin
    ("command: [run]\ncheckpoint: {trigger: preStop, command: [save], marginSeconds: 15}",
     ["prestop", "15", "0"]),
])
def test_supervisor_arguments(body: str, arguments: list[str]) -> None:
    container = _container(body)
    assert container["command"][:2] == ["/bin/sh", "-c"]
    assert container["command"][3:] == ["pmanifest-supervisor", *arguments]
    assert container["args"] == ["run"]


def test_no_checkpoint_on_a_short_window_profile() -> None:
    # GKE spot: 15 s at most, so the supervisor gives up after 5 s
    assert _container("command: [run]", profile="gke")["command"][4:] == ["none", "5", "0"]


def test_only_143_is_ignored_not_the_unexpected_term_code() -> None:
    [job] = _objects("command: [run]\ncheckpoint: {trigger: sigterm}")
    rules = job["spec"]["podFailurePolicy"]["rules"]
    codes = [r["onExitCodes"]["values"] for r in rules if "onExitCodes" in r]
    assert codes == [[SIGTERM_EXIT]] and UNEXPECTED_TERM_EXIT not in codes[0]
    assert [r["onPodConditions"] for r in rules if "onExitCodes" not in r] == [
        [{"type": "DisruptionTarget", "status": "True"}]]


def test_active_deadline_seconds() -> None:
    [job] = _objects("command: [run]\nactiveDeadlineSeconds: 604800")
    assert job["spec"]["activeDeadlineSeconds"] == 604800
    [job] = _objects("command: [run]")
    assert "activeDeadlineSeconds" not in job["spec"]


def test_roles_under_the_supervisor() -> None:
    text = textwrap.dedent("""\
        apiVersion: pmanifest/v1
        defaults: {image: x}
        workloads:
          - {name: coord, role: coordinator, command: [serve],
             checkpoint: {trigger: sigterm, command: [save]}}
          - {name: api, role: serving, command: [serve]}
        """)
    coord, api = (o for o in yaml.safe_load_all(render_text(text, "s.yaml"))
                  if o["kind"] == "Deployment")
    assert coord["spec"]["template"]["spec"]["containers"][0]["command"][3:5] == [
        "pmanifest-supervisor", "command"]
    assert api["spec"]["template"]["spec"]["containers"][0]["command"] == ["serve"]


REFUSALS = [
    ("mode command without a command",
     MAIN + "    checkpoint: {trigger: sigterm, mode: command}\n",
     "s.yaml:6:42: mode: command runs checkpoint.command on SIGTERM, and there is none; add "
     "command: [...] under checkpoint, or use mode: signal if the main's own TERM handler "
     "checkpoints"),
    ("mode signal with a command",
     MAIN + "    checkpoint: {trigger: sigterm, mode: signal, command: [save]}\n",
     "s.yaml:6:50: mode: signal forwards SIGTERM to the main, whose own handler checkpoints, "
     "so checkpoint.command would never run; remove command or use mode: command"),
    ("mode with preStop",
     MAIN + "    checkpoint: {trigger: preStop, mode: signal, command: [save]}\n",
     "s.yaml:6:36: mode applies to trigger: sigterm; with trigger: preStop the hook runs "
     "checkpoint.command and the supervisor then stops the main, so remove mode"),
    ("preStop without a command",
     MAIN + "    checkpoint: {trigger: preStop}\n",
     "s.yaml:6:5: trigger: preStop runs checkpoint.command as the hook, and there is none; "
     "add command: [...] under checkpoint"),
    ("unknown mode",
     MAIN + "    checkpoint: {trigger: sigterm, mode: signals}\n",
     "s.yaml:6:42: workloads[0].checkpoint.mode is 'signals', which is not one of signal, "
     "command; did you mean 'signal'?"),
    ("margin leaves no time",
     MAIN + "    checkpoint: {trigger: sigterm, gracePeriodSeconds: 10, marginSeconds: 10}\n",
     "s.yaml:6:75: marginSeconds 10 leaves no time before the supervisor's deadline "
     "(gracePeriodSeconds 10 - marginSeconds 10 < 1 s); set marginSeconds to at most 9 or "
     "raise gracePeriodSeconds"),
    ("default margin on a short grace period",
     MAIN + "    checkpoint: {trigger: sigterm, gracePeriodSeconds: 8}\n",
     "s.yaml:6:56: marginSeconds 10 leaves no time before the supervisor's deadline "
     "(gracePeriodSeconds 8 - marginSeconds 10 < 1 s); set marginSeconds to at most 7 or "
     "raise gracePeriodSeconds"),
    ("checkpoint outlasts the deadline",
     MAIN + "    checkpoint: {trigger: sigterm, gracePeriodSeconds: 120, expectedSeconds: 115}\n",
     "s.yaml:6:78: the checkpoint takes up to 115 s (expectedSeconds) and the supervisor "
     "stops everything 110 s after SIGTERM: 115 + 10 s exceeds gracePeriodSeconds 120; raise "
     "gracePeriodSeconds to at least 125 or lower marginSeconds"),
    ("preStop hook longer than the grace period",
     MAIN + "    checkpoint: {trigger: preStop, command: [save], gracePeriodSeconds: 60,\n"
     "                 expectedSeconds: 90}\n",
     "s.yaml:7:35: the preStop hook takes up to 90 s (expectedSeconds), more than the 60 s "
     "grace period: the kubelet SIGKILLs the pod before it ends; raise gracePeriodSeconds or "
     "make the checkpoint faster"),
    ("preStop hook and margin longer than the grace period",
     MAIN + "    checkpoint: {trigger: preStop, command: [save], gracePeriodSeconds: 100,\n"
     "                 expectedSeconds: 95}\n",
     "s.yaml:7:35: the preStop hook takes up to 95 s (expectedSeconds) and the main then gets "
     "marginSeconds to stop: 95 + 10 s exceeds gracePeriodSeconds 100; raise "
     "gracePeriodSeconds to at least 105 or lower marginSeconds"),
    ("activeDeadlineSeconds on a serving workload",
     "    role: serving\n    activeDeadlineSeconds: 60\n",
     "s.yaml:6:5: activeDeadlineSeconds applies to worker workloads, not serving; remove it "
     "or change role"),
    ("activeDeadlineSeconds zero",
     MAIN + "    activeDeadlineSeconds: 0\n",
     "s.yaml:6:28: workloads[0].activeDeadlineSeconds must be at least 1, got 0; change the "
     "value"),
]


_CAP_300 = ("cannot fit the drain window: preemptible nodes allow at most 300 s of grace (the "
            "node is removed after 300 s), leaving 290 s with marginSeconds 10; make the "
            "checkpoint faster (at most 290 s)")
_CAP_15 = ("the checkpoint cannot fit the drain window: preemptible nodes allow at most 15 s of "
           "grace (the node is removed after 30 s), leaving 5 s with marginSeconds 10; make the "
           "checkpoint faster (at most 5 s)")
# (name, profile, checkpoint, error after "s.yaml:6:COL: "): a grace period that would have to
# pass the profile's cap is never advised; a smaller margin is, where it suffices
BEYOND_THE_CAP = [
    ("at the 300 s cap, a smaller margin suffices", None,
     "{trigger: sigterm, expectedSeconds: 295}",
     "6:53: the checkpoint takes up to 295 s (expectedSeconds) and the supervisor stops "
     "everything 290 s after SIGTERM: 295 + 10 s exceeds gracePeriodSeconds 300; the checkpoint "
     f"{_CAP_300} or set marginSeconds 5"),
    ("below the cap, the cap and a smaller margin suffice", None,
     "{trigger: sigterm, gracePeriodSeconds: 200, expectedSeconds: 295}",
     "6:78: the checkpoint takes up to 295 s (expectedSeconds), more than the 200 s grace "
     "period: the kubelet SIGKILLs the pod before it ends; the checkpoint "
     f"{_CAP_300} or set gracePeriodSeconds 300 and marginSeconds 5"),
    ("as long as the cap: only a faster checkpoint", None,
     "{trigger: sigterm, expectedSeconds: 300}",
     "6:53: the checkpoint takes up to 300 s (expectedSeconds) and the supervisor stops "
     f"everything 290 s after SIGTERM: 300 + 10 s exceeds gracePeriodSeconds 300; the checkpoint "
     f"{_CAP_300}"),
    ("a preStop hook longer than the cap", None,
     "{trigger: preStop, command: [save], expectedSeconds: 301}",
     "6:70: the preStop hook takes up to 301 s (expectedSeconds), more than the 300 s grace "
     f"period: the kubelet SIGKILLs the pod before it ends; the preStop hook {_CAP_300}"),
    ("gke: 20 s is past the 15 s cap", "gke", "{trigger: sigterm, expectedSeconds: 20}",
     "6:53: the checkpoint takes up to 20 s (expectedSeconds), more than the 15 s grace period: "
     f"the kubelet SIGKILLs the pod before it ends; {_CAP_15}"),
    ("gke: 12 s fits with a 3 s margin", "gke", "{trigger: sigterm, expectedSeconds: 12}",
     "6:53: the checkpoint takes up to 12 s (expectedSeconds) and the supervisor stops "
     f"everything 5 s after SIGTERM: 12 + 10 s exceeds gracePeriodSeconds 15; {_CAP_15} or set "
     "marginSeconds 3"),
    ("gke: a margin that fills the capped grace period", "gke",
     "{trigger: sigterm, gracePeriodSeconds: 15, marginSeconds: 15}",
     "6:75: marginSeconds 15 leaves no time before the supervisor's deadline "
     "(gracePeriodSeconds 15 - marginSeconds 15 < 1 s); set marginSeconds to at most 14"),
    ("standard compute has no cap: raise the grace period", None,
     "{trigger: sigterm, expectedSeconds: 295}\n    compute: standard",
     "6:53: the checkpoint takes up to 295 s (expectedSeconds) and the supervisor stops "
     "everything 290 s after SIGTERM: 295 + 10 s exceeds gracePeriodSeconds 300; raise "
     "gracePeriodSeconds to at least 305 or lower marginSeconds"),
]


@pytest.mark.parametrize(("profile", "checkpoint", "expected"),
                         [c[1:] for c in BEYOND_THE_CAP], ids=[c[0] for c in BEYOND_THE_CAP])
def test_refusal_beyond_the_cap(profile: str | None, checkpoint: str, expected: str) -> None:
    result = CliRunner().invoke(main, ["render", "-f", "-",
                                       *(["--profile", profile] if profile else [])],
                                input=HEAD + MAIN + f"    checkpoint: {checkpoint}\n")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"<stdin>:{expected}\n")


@pytest.mark.parametrize(("body", "expected"), [(c[1], c[2]) for c in REFUSALS],
                         ids=[c[0] for c in REFUSALS])
def test_refusal(body: str, expected: str) -> None:
    result = CliRunner().invoke(main, ["render", "-f", "-"], input=HEAD + body)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", expected.replace("s.yaml", "<stdin>", 1) + "\n")
