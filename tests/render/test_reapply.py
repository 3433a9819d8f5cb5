"""Re-applying a changed spec (issue 26): the README's apply command works for a first apply
and after a change.

A Job's pod template is immutable: the API server refuses a patch that changes it (422
Invalid). ``kubectl apply --force`` deletes and re-creates exactly the objects whose patch is
refused as invalid or conflicting, and patches the others (kubectl's apply/patcher.go), with
the deletion's ``--cascade`` and ``--timeout``. No API server can run here, so what is proven
is what does not need one:

- the real kubectl accepts the README's command line as written, with the rendered stream on
  stdin, and gets as far as contacting the server (a misspelt flag, or a combination kubectl
  refuses such as ``--force`` with ``--prune`` or ``--server-side``, stops it before; the
  controls below show the difference is seen). ``apply --dry-run=client`` and
  ``create --dry-run=client`` need the server's discovery to map kinds, so they cannot run
  offline either; ``annotate --local`` reads the stream without a server, and does;
- the rendered names: the same spec renders the same objects byte for byte, and a changed
  spec keeps every name, so the changed Job replaces the old one instead of running beside it;
- what ``--force`` would re-create: across changes of every kind of spec field, only Jobs
  change in a field the API server holds immutable (their pod template, completions); a
  Deployment's selector, a Service's and a PodDisruptionBudget's never change, so they are
  patched in place.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.render.engine import render_text
from tests.test_readme import PAGES, README, real_kubectl

SPEC = """\
apiVersion: pmanifest/v1
cluster:
  sharedVolume: {claimName: shared-fs, mountPath: /mnt/shared}
defaults: {namespace: ml}
workloads:
  - name: finetune
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
    completions: 4
    checkpoint: {trigger: sigterm, command: [python, ckpt.py], dir: /mnt/shared/ckpt/finetune}
  - name: chat
    role: serving
    image: vllm/vllm-openai:v0.8.5
    args: [--model, m]
    gpus: 1
    ports: [8000]
"""
# (what changes, old text, new text): changes a user makes between two applies
CHANGES = [
    ("worker image", "trainer:1.4", "trainer:1.5"),
    ("worker command", "[python, train.py]", "[python, train.py, --lr, '3e-4']"),
    ("worker gpus", "gpus: 8\n", "gpus: 4\n"),
    ("worker completions", "completions: 4", "completions: 8"),
    ("worker checkpoint", "command: [python, ckpt.py]", "command: [python, save.py]"),
    ("worker overlay", "    completions: 4\n",
     "    completions: 4\n    podTemplate: {spec: {securityContext: {runAsUser: 1000}}}\n"),
    ("serving image", "v0.8.5", "v0.9.0"),
    ("serving replicas and ports", "    ports: [8000]\n", "    ports: [8000, 9000]\n"
                                                          "    replicas: 4\n"),
    ("serving spread", "    ports: [8000]\n", "    ports: [8000]\n    spread: false\n"),
]
# fields the API server holds immutable once an object exists, by kind (beyond metadata.name)
IMMUTABLE = {
    "Deployment": [("spec", "selector")],
    "Service": [("spec", "clusterIP"), ("spec", "clusterIPs"), ("spec", "ipFamilies")],
    "PodDisruptionBudget": [],  # its selector is mutable since 1.15
    "Job": [("spec", "template"), ("spec", "completions"), ("spec", "completionMode"),
            ("spec", "podFailurePolicy"), ("spec", "selector")],
}


def _objects(text: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for obj in yaml.safe_load_all(text):
        meta = obj["metadata"]
        out[(obj["kind"], meta.get("namespace", ""), meta["name"])] = obj
    return out


def _get(obj: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        obj = obj.get(part, {}) if isinstance(obj, dict) else {}
    return obj


def test_the_same_spec_renders_the_same_objects() -> None:
    assert render_text(SPEC, "spec.yaml") == render_text(SPEC, "spec.yaml")


@pytest.mark.parametrize(("what", "old", "new"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_change_keeps_every_name_and_only_a_job_needs_re_creating(what: str, old: str,
                                                                     new: str) -> None:
    assert old in SPEC
    before = _objects(render_text(SPEC, "spec.yaml"))
    after = _objects(render_text(SPEC.replace(old, new, 1), "spec.yaml"))
    assert before != after
    # names stay (a Service may be added or dropped with ports; none is renamed)
    assert {k for k in before if k[0] != "Service"} == {k for k in after if k[0] != "Service"}
    recreated = set()
    for key in before.keys() & after.keys():
        for path in IMMUTABLE[key[0]]:
            if _get(before[key], path) != _get(after[key], path):
                recreated.add(key[0])
    if what.startswith("worker"):
        assert recreated == {"Job"}  # what a plain apply is refused, and --force re-creates
    else:
        assert recreated == set()  # patched in place: serving rolls out as usual


def _apply_command() -> str:
    """The kubectl part of the README's render-and-apply line."""
    line = next(line for line in README.read_text().splitlines()
                if line.startswith("pmanifest render -f spec.yaml | kubectl apply"))
    command = line.split("|", 1)[1].split("#", 1)[0].strip()
    assert command.startswith("kubectl apply ") and command.endswith(" -f -")
    return command


def test_the_readme_apply_command_recreates_what_cannot_be_patched() -> None:
    command = _apply_command().split()
    assert "--force" in command  # delete and re-create what the server refuses to patch
    assert "--cascade=foreground" in command  # the old pods are gone before the new Job
    assert any(re.fullmatch(r"--timeout=\d+[smh]", part) for part in command)
    pages = "\n".join(page.read_text() for page in PAGES)
    # the front page's summary and its render example, docs/render.md and the kubectl plugin
    assert pages.count(_apply_command()) >= 4


OFFLINE = """\
apiVersion: v1
kind: Config
clusters:
- {name: nowhere, cluster: {server: "https://127.0.0.1:9"}}
contexts:
- {name: nowhere, context: {cluster: nowhere, user: nobody, namespace: ml}}
current-context: nowhere
users:
- {name: nobody, user: {token: none}}
"""


def _kubectl(tmp_path: Path, args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "kubeconfig").write_text(OFFLINE)
    return subprocess.run([real_kubectl(), *args], input=stdin, capture_output=True, text=True,
                          env={"KUBECONFIG": str(tmp_path / "kubeconfig"),
                               "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                          timeout=120, check=False)


REFUSED_BY_KUBECTL = [
    (["--force", "--prune", "-l", "app.kubernetes.io/managed-by=pmanifest"],
     "--force cannot be used with --prune"),
    (["--force", "--server-side"], "--force cannot be used with --server-side"),
    (["--forse"], "unknown flag: --forse"),
    (["--force", "--cascade=foregrund"], "invalid cascade value (foregrund)"),
]


@pytest.mark.parametrize("changed", [False, True], ids=["first apply", "after a change"])
def test_kubectl_takes_the_readme_command_up_to_the_server(tmp_path: Path,
                                                           changed: bool) -> None:
    spec = SPEC.replace("trainer:1.4", "trainer:1.5") if changed else SPEC
    rendered = render_text(spec, "spec.yaml")
    args = _apply_command().split()[1:]
    done = _kubectl(tmp_path, args, rendered)
    assert done.returncode == 1
    assert "127.0.0.1:9" in done.stderr and "connection refused" in done.stderr, done.stderr
    # the same stream is read by kubectl without a server: every object, by its name
    listed = _kubectl(tmp_path, ["annotate", "--local", "-f", "-", "-o", "name",
                                 "pmanifest.io/applied=yes"], rendered)
    assert listed.returncode == 0, listed.stderr
    names = [f"{obj['kind'].lower()}/{obj['metadata']['name']}"
             for obj in yaml.safe_load_all(rendered)]
    assert [re.sub(r"^([a-z]+)\.[a-z.]+/", r"\1/", n) for n in listed.stdout.split()] == names


@pytest.mark.parametrize(("extra", "refusal"), REFUSED_BY_KUBECTL,
                         ids=[r[1] for r in REFUSED_BY_KUBECTL])
def test_kubectl_refuses_a_wrong_command_before_the_server(tmp_path: Path, extra: list[str],
                                                           refusal: str) -> None:
    """The control: what the test above tells apart from a command kubectl accepts."""
    done = _kubectl(tmp_path, ["apply", *extra, "-f", "-"], render_text(SPEC, "spec.yaml"))
    assert done.returncode == 1
    assert refusal in done.stderr and "connection refused" not in done.stderr


def test_the_spec_of_this_test_renders_what_the_readme_describes() -> None:
    kinds = [k[0] for k in _objects(render_text(textwrap.dedent(SPEC), "spec.yaml"))]
    assert sorted(kinds) == ["Deployment", "Job", "PodDisruptionBudget", "Service"]
