"""render reads the config lint reads (``.pmanifest.yaml`` or ``[tool.pmanifest]``, found by
walking up from the current directory, or ``--config``): profile, Kubernetes version,
templates, rule levels. Flags beat the spec's ``cluster:`` fields, which beat the config,
which beats the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from pmanifest.cli.main import main
from tests.stderr import render_stderr

WORKER = """\
apiVersion: pmanifest/v1
{cluster}workloads:
  - name: train
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
    checkpoint: {{command: [python, ckpt.py], trigger: sigterm, expectedSeconds: 20,
                 dir: /mnt/shared/ckpt}}
"""
SHARED = "  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}\n"


def spec(**cluster: str) -> str:
    fields = "".join(f"  {key}: {value}\n" for key, value in cluster.items())
    return WORKER.format(cluster="cluster:\n" + fields + SHARED)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose config sits at its root; commands run in a directory below it."""
    (tmp_path / "deploy").mkdir()
    monkeypatch.chdir(tmp_path / "deploy")
    return tmp_path


def render(*args: str) -> Result:
    return CliRunner().invoke(main, ["render", *args])


def pod_of(result: Result) -> dict[str, object]:
    assert result.exit_code == 0, result.stderr
    job = next(d for d in yaml.safe_load_all(result.stdout) if d["kind"] == "Job")
    pod: dict[str, object] = job["spec"]["template"]["spec"]
    return pod


def profile_of(result: Result) -> str:
    """The profile a render used, told by the preemptible label in the worker's nodeSelector."""
    selector = pod_of(result)["nodeSelector"]
    assert isinstance(selector, dict)
    return {"together.ai/compute-class": "together", "cloud.google.com/gke-spot": "gke",
            "karpenter.sh/capacity-type": "karpenter",
            "kubernetes.azure.com/scalesetpriority": "aks"}[next(iter(selector))]


@pytest.mark.parametrize("where", [".pmanifest.yaml", "pyproject.toml"])
def test_a_karpenter_repository_renders_what_its_lint_passes(repo: Path, where: str) -> None:
    if where == "pyproject.toml":
        (repo / where).write_text('[project]\nname = "x"\n\n[tool.pmanifest]\n'
                                  'profile = "karpenter"\nkubernetesVersion = "1.33"\n')
    else:
        (repo / where).write_text('profile: karpenter\nkubernetesVersion: "1.33"\n')
    Path("spec.yaml").write_text(WORKER.format(cluster="cluster:\n" + SHARED))
    result = render("-f", "spec.yaml", "-O", "rendered.yaml")
    assert (result.exit_code, result.stderr) == (0, "")
    job = yaml.safe_load(Path("rendered.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"karpenter.sh/capacity-type": "spot"}
    assert pod["terminationGracePeriodSeconds"] == 120  # the karpenter profile's cap
    linted = CliRunner().invoke(main, ["lint", "rendered.yaml", "--fail-on", "info"])
    assert (linted.exit_code, linted.stdout) == (0, "")
    # what render made before it read the config (the default profile's labels and 300 s)
    # fails this repository's gate
    assert render("-f", "spec.yaml", "--profile", "together", "-O", "rendered.yaml"
                  ).exit_code == 0
    other = CliRunner().invoke(main, ["lint", "rendered.yaml"])
    assert other.exit_code == 1
    assert "PM201[grace-period-over-limit] terminationGracePeriodSeconds is 300, above the " \
           "120 s cap" in other.stdout


# (flag, spec's cluster.profile, config's profile) -> the profile used
@pytest.mark.parametrize(("flag", "in_spec", "in_config", "used"), [
    (None, None, None, "together"),            # the default
    (None, None, "karpenter", "karpenter"),    # the config beats the default
    (None, "gke", "karpenter", "gke"),         # the spec beats the config
    ("aks", "gke", "karpenter", "aks"),        # the flag beats the spec
    ("aks", None, "karpenter", "aks"),         # and the config
])
def test_profile_precedence(repo: Path, flag: str | None, in_spec: str | None,
                            in_config: str | None, used: str) -> None:
    if in_config is not None:
        (repo / ".pmanifest.yaml").write_text(f"profile: {in_config}\n")
    fields = {"profile": in_spec} if in_spec else {}
    quick = spec(**fields).replace("expectedSeconds: 20", "expectedSeconds: 2")  # fits gke's 15 s
    Path("spec.yaml").write_text(quick)
    args = ["--profile", flag] if flag else []
    assert profile_of(render("-f", "spec.yaml", *args)) == used


# Kubernetes 1.25 cannot run a worker (a Job with a podFailurePolicy needs 1.26): which
# version a render targets shows in whether it is refused, and in the message.
@pytest.mark.parametrize(("flag", "in_spec", "in_config", "used"), [
    (None, None, None, None),           # the default, 1.31
    (None, None, "1.25", "1.25"),       # the config beats the default
    (None, '"1.31"', "1.25", None),     # the spec beats the config
    ("1.25", '"1.31"', None, "1.25"),   # the flag beats the spec
    ("1.31", None, "1.25", None),       # and the config
])
def test_kubernetes_version_precedence(repo: Path, flag: str | None, in_spec: str | None,
                                       in_config: str | None, used: str | None) -> None:
    if in_config is not None:
        (repo / ".pmanifest.yaml").write_text(f'kubernetesVersion: "{in_config}"\n')
    fields = {"kubernetesVersion": in_spec} if in_spec else {}
    Path("spec.yaml").write_text(spec(**fields))
    result = render("-f", "spec.yaml", *(["--kubernetes-version", flag] if flag else []))
    if used is None:
        assert (result.exit_code, render_stderr(result.stderr)) == (0, "")
    else:
        assert result.exit_code == 2
        assert f"target is {used}" in result.stderr


def test_templates_from_the_config_and_the_flag(repo: Path) -> None:
    builtin = Path(__file__).resolve().parents[2].joinpath("templates", "job.yaml.j2").read_text()
    for folder, marker in (("config-templates", 111), ("flag-templates", 222)):
        (repo / folder).mkdir()
        (repo / folder / "job.yaml.j2").write_text(
            builtin.replace("\nspec:\n", f"\nspec:\n  ttlSecondsAfterFinished: {marker}\n", 1))
    (repo / ".pmanifest.yaml").write_text("templates: config-templates\n")
    Path("spec.yaml").write_text(spec())

    def made_by(*args: str) -> object:
        result = render("-f", "spec.yaml", *args)
        assert result.exit_code == 0, result.stderr
        job = next(d for d in yaml.safe_load_all(result.stdout) if d["kind"] == "Job")
        return job["spec"].get("ttlSecondsAfterFinished")

    assert made_by() == 111  # relative to the config file, not the current directory
    assert made_by("--templates", str(repo / "flag-templates")) == 222
    (repo / ".pmanifest.yaml").write_text("templates: no-such-dir\n")
    result = render("-f", "spec.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{repo / '.pmanifest.yaml'}:1:1: templates directory "
                                    "'no-such-dir' not found")
    (repo / ".pmanifest.yaml").unlink()
    assert made_by() is None  # the built-in templates


def test_config_flag_and_rule_levels(repo: Path, tmp_path: Path) -> None:
    """--config names a file anywhere; its rule levels silence render's own lint warnings."""
    other = tmp_path / "elsewhere.yaml"
    other.write_text("profile: gke\nrules: {PM302: off}\n")
    Path("spec.yaml").write_text(spec().replace(
        "    checkpoint: {command: [python, ckpt.py], trigger: sigterm, expectedSeconds: 20,\n"
        "                 dir: /mnt/shared/ckpt}\n", ""))
    warned = render("-f", "spec.yaml")
    assert "PM302[no-checkpoint-handler]" in warned.stderr
    result = render("-f", "spec.yaml", "--config", str(other))
    assert (profile_of(result), render_stderr(result.stderr, ("PM302",))) == ("gke", "")
    missing = render("-f", "spec.yaml", "--config", "nope.yaml")
    assert (missing.exit_code, missing.stderr) == (2, "nope.yaml: config file not found\n")


def test_the_config_is_an_input_render_never_overwrites(repo: Path) -> None:
    (repo / ".pmanifest.yaml").write_text("profile: karpenter\n")
    Path("spec.yaml").write_text(spec())
    result = render("-f", "spec.yaml", "-O", str(repo / ".pmanifest.yaml"))
    assert result.exit_code == 2
    assert "is one of the inputs" in result.stderr
    assert (repo / ".pmanifest.yaml").read_text() == "profile: karpenter\n"


def test_a_broken_config_is_an_error_for_render_too(repo: Path) -> None:
    (repo / ".pmanifest.yaml").write_text("profile: karpenterr\n")
    Path("spec.yaml").write_text(spec())
    result = render("-f", "spec.yaml")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"{repo / '.pmanifest.yaml'}:1:1: unknown profile 'karpenterr' "
                             "(did you mean 'karpenter'?); known profiles: aks, gke, "
                             "gke-autopilot, karpenter, together\n")
