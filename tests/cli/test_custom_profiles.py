"""Custom profiles in the config (`profiles:`): each extends a built-in or another custom
profile and changes any field of policies/profiles.yaml. lint, render, `cluster events` and
`export admission` take them by name (`--profile`, the config's `profile:`), and a broken one
is an error at its line and column, with a suggestion."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from pmanifest.cli.main import main
from tests.stderr import render_stderr

PLAYGROUND = """\
profile: playground
profiles:
  playground:
    extends: gke
    taint: {key: spot, value: "true", effect: NoSchedule}
    gracePeriodCap: 60
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  podFailurePolicy:
    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: GRACE
      nodeSelector: {cloud.google.com/gke-spot: "true"}
TOLERATIONS      containers:
        - name: train
          image: ghcr.io/acme/trainer:1.4
          command: [python, train.py]
"""
TOLERATE = "      tolerations: [{key: spot, operator: Equal, value: \"true\"}]\n"


def job(grace: int, tolerates: bool = True) -> str:
    return JOB.replace("GRACE", str(grace)).replace("TOLERATIONS", TOLERATE if tolerates else "")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with the playground config at its root; commands run below it."""
    (tmp_path / ".pmanifest.yaml").write_text(PLAYGROUND)
    (tmp_path / "deploy").mkdir()
    monkeypatch.chdir(tmp_path / "deploy")
    return tmp_path


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def rules_of(result: Result) -> list[tuple[str, str]]:
    return [(f["rule"], f["message"]) for f in json.loads(result.stdout)["findings"]]


def lint(text: str, *args: str) -> list[tuple[str, str]]:
    result = run("lint", "--format", "json", "--select", "PM201", "--select", "PM104", *args,
                 "-", stdin=text)
    assert result.exit_code in (0, 1), result.stderr
    return rules_of(result)


def test_lint_takes_the_config_profile_with_its_cap_and_taint(repo: Path) -> None:
    # 200 s: over the custom cap of 60 s, said with the profile's name
    over = lint(job(200))
    assert [r for r, _ in over] == ["PM201"]
    assert "above the 60 s cap of preemptible nodes (playground profile)" in over[0][1]
    # 50 s: within the custom cap, though over gke's 15 s (the profile it extends)
    assert lint(job(50)) == []
    assert [r for r, _ in lint(job(50), "--profile", "gke")] == ["PM201"]
    # the custom taint: without its toleration the pod cannot land on preemptible nodes
    assert lint(job(200, tolerates=False)) == []
    assert [r for r, _ in lint(job(200, tolerates=False), "--profile", "gke")] == ["PM201"]


def test_the_profile_flag_names_a_custom_profile(repo: Path) -> None:
    (repo / ".pmanifest.yaml").write_text(PLAYGROUND.replace("profile: playground\n", ""))
    assert [r for r, _ in lint(job(50), "--profile", "gke")] == ["PM201"]
    assert lint(job(50), "--profile", "playground") == []
    other = repo / "elsewhere.yaml"
    other.write_text("rules: {PM302: off}\n")
    result = run("lint", "--config", str(other), "--profile", "playground", "-", stdin=job(50))
    assert (result.exit_code, result.stderr) == (
        2, "pmanifest: unknown profile 'playground'; known profiles: aks, gke, gke-autopilot, "
           "karpenter, together\n")
    result = run("lint", "--profile", "playgrond", "-", stdin=job(50))
    assert (result.exit_code, result.stderr) == (
        2, "pmanifest: unknown profile 'playgrond' (did you mean 'playground'?); known "
           "profiles: aks, gke, gke-autopilot, karpenter, together, playground\n")


def test_pyproject_defines_custom_profiles(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.pmanifest]
        profile = "pool"
        [tool.pmanifest.profiles.base]
        extends = "karpenter"
        gracePeriodCap = 90
        [tool.pmanifest.profiles.pool]
        extends = "base"
        label = {key = "example.com/pool", value = "spot"}
        """))
    monkeypatch.chdir(tmp_path)
    text = job(100).replace("cloud.google.com/gke-spot", "example.com/pool").replace(
        '"true"}\n      tol', 'spot}\n      tol')
    found = lint(text)
    assert [r for r, _ in found] == ["PM201"]
    assert "the 90 s cap of preemptible nodes (pool profile)" in found[0][1]


ERRORS = [
    ("profiles:\n  playground:\n    extend: gke\n",
     "3:5: unknown key 'extend' in profiles.playground; did you mean 'extends'?"),
    ("profiles:\n  playground:\n    extends: gk\n",
     "3:5: unknown profile 'gk' in extends (did you mean 'gke'?); known profiles: aks, gke, "
     "gke-autopilot, karpenter, together, playground"),
    ("profiles:\n  a:\n    extends: b\n  b:\n    extends: a\n",
     "5:5: profiles extend each other in a cycle: a -> b -> a"),
    ("profiles:\n  a:\n    extends: a\n", "3:5: profiles extend each other in a cycle: a -> a"),
    ("profiles:\n  gke:\n    extends: gke\n",
     "2:3: profile 'gke' is built in: give yours another name, with extends: gke"),
    ("profiles:\n  a:\n    gracePeriodCap: 60\n",
     "2:3: profile 'a' extends no profile, so it must give label, standardNodePrefix, "
     "preemptibleNodePrefix, taint, drainWindowSeconds (or extends: one of aks, gke, "
     "gke-autopilot, karpenter, together, a)"),
    ("profiles:\n  a:\n    extends: gke\n    gracePeriodCap: 0\n",
     "4:21: profiles.a.gracePeriodCap must be at least 1, got 0; change the value"),
    ("profiles:\n  a:\n    extends: gke\n    taint: {key: spot, effect: Nope}\n",
     "4:32: profiles.a.taint.effect is 'Nope', which is not one of NoSchedule, "
     "PreferNoSchedule, NoExecute; use one of: NoSchedule, PreferNoSchedule, NoExecute"),
    ("profiles:\n  Play:\n    extends: gke\n",
     "2:3: profiles 'Play' does not match ^[a-z][a-z0-9-]*$; name a profile with lower-case "
     "letters, digits and '-', from a letter"),
    ("profiles:\n  a:\n    extends: gke\n    computeClasses: {key: k, values: [v], "
     "profile: gke}\n",
     "4:43: computeClasses.profile 'gke' must name a profile without computeClasses of its "
     "own"),
    ("profile: playgrond\nprofiles:\n  playground:\n    extends: gke\n",
     "1:1: unknown profile 'playgrond' (did you mean 'playground'?); known profiles: aks, "
     "gke, gke-autopilot, karpenter, together, playground"),
]


@pytest.mark.parametrize(("config", "error"), ERRORS, ids=[e for _, e in ERRORS])
def test_a_broken_custom_profile_is_an_error_at_its_place(repo: Path, config: str,
                                                           error: str) -> None:
    (repo / ".pmanifest.yaml").write_text(config)
    for args in (["lint", "-"], ["export", "admission"], ["render", "-f", "-"]):
        result = run(*args, stdin=job(50))
        assert (result.exit_code, result.stdout) == (2, ""), args
        assert result.stderr == f"{repo / '.pmanifest.yaml'}:{error}\n", args


SPEC = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
workloads:
  - name: train
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
    checkpoint: {command: [python, ckpt.py], trigger: sigterm, dir: /mnt/shared/ckpt}
  - name: api
    role: serving
    image: ghcr.io/acme/api:1.0
    ports: [8000]
"""


def test_render_uses_the_custom_profile_and_lints_clean(repo: Path) -> None:
    rendered = run("render", "-f", "-", stdin=SPEC)
    assert (rendered.exit_code, rendered.stderr) == (0, "")
    pod = next(d for d in yaml.safe_load_all(rendered.stdout)
               if d["kind"] == "Job")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-spot": "true"}
    assert pod["terminationGracePeriodSeconds"] == 60
    assert {"key": "spot", "operator": "Equal", "value": "true",
            "effect": "NoSchedule"} in pod["tolerations"]
    linted = run("lint", "--fail-on", "info", "--format", "json", "-", stdin=rendered.stdout)
    assert (linted.exit_code, rules_of(linted)) == (0, [])


def test_export_admission_bakes_in_the_custom_profile(repo: Path) -> None:
    result = run("export", "admission")
    assert result.exit_code == 0, result.stderr
    assert "# profile playground: preemptible nodes carry cloud.google.com/gke-spot=true, " \
           "grace-period cap 60 s" in result.stdout
    policies = [o for o in yaml.safe_load_all(result.stdout)
                if o["kind"] == "ValidatingAdmissionPolicy"]
    assert {p["metadata"]["annotations"]["pmanifest.io/profile"] for p in policies} == {
        "playground"}
    grace = next(p for p in policies if p["metadata"]["name"].startswith("pmanifest-pm201"))
    assert "== 'spot'" in json.dumps(grace)  # the custom taint's key
    gke = run("export", "admission", "--profile", "gke")
    assert "== 'spot'" not in gke.stdout


def test_cluster_events_take_the_custom_profile(repo: Path) -> None:
    read = Path(__file__).resolve().parents[2] / "examples/cluster/cluster-read.json"
    result = run("cluster", "events", str(read), "--format", "json", "--profile", "playground",
                 "--checkpoint-seconds", "50")
    assert result.exit_code == 0, result.stderr
    assert '"playground"' in result.stdout
    assert "60" in result.stdout


def test_explain_and_help_name_the_custom_profiles(repo: Path) -> None:
    explained = " ".join(run("explain", "PM201").stdout.split())
    assert "Built in: aks, gke, gke-autopilot, karpenter, together; the config's profiles: " \
           "defines custom ones" in explained
    assert "In .pmanifest.yaml: playground (extends gke)." in explained
    (repo / ".pmanifest.yaml").write_text("")
    assert "In .pmanifest.yaml" not in run("explain", "PM201").stdout
    for command in (["lint"], ["render"], ["export", "admission"], ["cluster", "events"]):
        helped = " ".join(run(*command, "--help").stdout.split())
        assert "built in or from the config's profiles:" in helped or \
            "built in, or one of the config's profiles:" in helped, command


def test_a_spec_names_a_custom_profile_in_cluster_profile(repo: Path) -> None:
    (repo / ".pmanifest.yaml").write_text(PLAYGROUND.replace("profile: playground\n", ""))
    named = SPEC.replace("cluster:\n", "cluster:\n  profile: playground\n")
    rendered = run("render", "-f", "-", stdin=named)
    assert (rendered.exit_code, render_stderr(rendered.stderr)) == (0, "")
    pod = next(d for d in yaml.safe_load_all(rendered.stdout)
               if d["kind"] == "Job")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 60
    typo = run("render", "-f", "-", stdin=named.replace("playground", "playgrond"))
    assert (typo.exit_code, typo.stdout) == (2, "")
    assert typo.stderr == ("<stdin>:3:12: unknown profile 'playgrond' (did you mean "
                           "'playground'?); known profiles: aks, gke, gke-autopilot, "
                           "karpenter, together, playground\n")
