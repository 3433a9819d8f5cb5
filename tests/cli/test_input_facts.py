"""What the whole input tells before a file is linted: the GKE ComputeClasses it defines (in
any file: a class whose every priority is on-demand is never preemptible capacity) and, with
no profile given, the provider whose preemptible labels it uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pmanifest.cli.main import main

CLASSES = """\
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata: {name: on-demand}
spec:
  priorities:
    - machineFamily: a3
    - {machineFamily: a2, spot: false}
---
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata: {name: spot-first}
spec:
  priorities:
    - {machineFamily: a3, spot: true}
    - machineFamily: a3
"""

SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
      nodeSelector: {SELECTOR}
      containers: [{name: server, image: vllm/vllm-openai}]
"""


def serving(name: str, selector: str) -> str:
    return SERVING.replace("NAME", name).replace("SELECTOR", selector)


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def flagged(result: Result) -> list[str]:
    assert result.exit_code in (0, 1), result.stderr
    return sorted(f["object"]["name"] for f in json.loads(result.stdout)["findings"])


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "classes.yaml").write_text(CLASSES)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "serving.yaml").write_text("---\n".join([
        serving("on-demand", "cloud.google.com/compute-class: on-demand"),
        serving("spot-first", "cloud.google.com/compute-class: spot-first"),
        serving("unknown", "cloud.google.com/compute-class: elsewhere"),
        serving("plain", ""),
    ]))
    return tmp_path


LINT = ("lint", "--profile", "gke", "--select", "PM102", "--format", "json")


def test_a_compute_class_in_another_file_is_read(tree: Path) -> None:
    assert flagged(run(*LINT, ".")) == ["plain", "spot-first", "unknown"]
    # without the file that defines the classes, nothing tells: every one can be Spot
    assert flagged(run(*LINT, "apps")) == ["on-demand", "plain", "spot-first", "unknown"]
    # the classes named on the command line after the pods, and the pods from stdin
    text = (tree / "apps" / "serving.yaml").read_text()
    assert flagged(run(*LINT, "-", "classes.yaml", stdin=text)) == [
        "plain", "spot-first", "unknown"]


def test_parallel_workers_see_the_classes_too(tree: Path) -> None:
    for i in range(70):  # enough inputs for worker processes
        (tree / "apps" / f"more-{i:02}.yaml").write_text(
            serving(f"more-{i:02}", "cloud.google.com/compute-class: on-demand"))
    assert flagged(run(*LINT, "--jobs", "2", ".")) == ["plain", "spot-first", "unknown"]



def test_a_class_defined_in_several_files_is_on_demand_only_if_every_definition_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files that define one name differently are alternatives (a script applies one of
    them): a pod that selects the name can land on Spot when any of them has a Spot
    priority, whichever file comes last; a name whose every definition is on-demand stays
    never-preemptible."""
    monkeypatch.chdir(tmp_path)
    spot = CLASSES.split("---\n")[1].replace("spot-first", "shared")
    on_demand = CLASSES.split("---\n")[0].replace("{name: on-demand}", "{name: shared}")
    (tmp_path / "serving.yaml").write_text(serving("shared", "cloud.google.com/compute-class: "
                                                   "shared"))
    (tmp_path / "b-reservation.yaml").write_text(on_demand)
    for spot_file in ("a-spot.yaml", "c-spot.yaml"):  # before and after the on-demand one
        (tmp_path / spot_file).write_text(spot)
        assert flagged(run(*LINT, ".")) == ["shared"]
        assert flagged(run(*LINT, "--jobs", "2", ".")) == ["shared"]
        (tmp_path / spot_file).unlink()
    (tmp_path / "c-reservation.yaml").write_text(on_demand.replace("a3", "a2"))
    assert flagged(run(*LINT, ".")) == []


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
PLACEMENT      containers: [{name: server, image: vllm/vllm-openai}]
"""


def deployment(name: str, placement: str = "") -> str:
    return DEPLOYMENT.replace("NAME", name).replace("PLACEMENT", placement)


def lint_text(text: str, *args: str) -> Result:
    return run("lint", "--select", "PM101", "--select", "PM102", *args, "-", stdin=text)


PROVIDERS = [
    ("karpenter", "karpenter.sh/capacity-type", "      nodeSelector: {karpenter.sh/capacity-type: "
                                                "on-demand}\n"),
    ("gke", "cloud.google.com/gke-spot", "      affinity: {nodeAffinity: {preferredDuringSchedul"
     "ingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: "
     "cloud.google.com/gke-spot, operator: In, values: ['true']}]}}]}}\n"),
    ("aks", "kubernetes.azure.com/scalesetpriority",
     "      tolerations: [{key: kubernetes.azure.com/scalesetpriority, operator: Exists}]\n"),
    ("together", "together.ai/compute-class", "      nodeSelector: {together.ai/compute-class: "
                                              "standard}\n"),
]


@pytest.mark.parametrize(("profile", "label", "placement"), PROVIDERS,
                         ids=[p for p, _, _ in PROVIDERS])
def test_the_provider_is_inferred_from_the_labels_the_input_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str, label: str,
        placement: str) -> None:
    monkeypatch.chdir(tmp_path)
    text = "---\n".join([deployment("labelled", placement), deployment("plain"),
                         deployment("also-plain")])
    result = lint_text(text)
    assert result.stderr.splitlines()[-1] == f"profile {profile}, inferred from {label} in 1 object"
    # the advice names this provider's label, never another's
    assert "NotIn" in result.stdout
    others = {lbl for _, lbl, _ in PROVIDERS} - {label}
    assert not any(other in result.stdout for other in others), result.stdout
    assert label in result.stdout
    # JSON and SARIF carry it
    found = json.loads(lint_text(text, "--format", "json").stdout)["summary"]["profile"]
    assert found == {"name": profile, "why": f"inferred from {label} in 1 object"}
    sarif = json.loads(lint_text(text, "--format", "sarif").stdout)
    assert sarif["runs"][0]["properties"]["profile"] == found


def test_no_provider_label_means_the_default_and_says_so(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # a label in a comment is no use of it
    text = "# runs on cloud.google.com/gke-spot nodes one day\n" + deployment("plain")
    result = lint_text(text)
    assert result.stderr.splitlines()[-1] == \
        "profile together, the default: no provider label found"
    assert "together.ai/compute-class NotIn [preemptible]" in result.stdout


def test_any_label_of_a_provider_tells_when_no_preemptible_label_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = deployment("gpu", "      nodeSelector: {cloud.google.com/gke-accelerator: "
                             "nvidia-l4}\n")
    result = lint_text(text)
    assert result.stderr.splitlines()[-1] == (
        "profile gke, inferred from cloud.google.com/* in 1 object (no preemptible label found)")
    assert "cloud.google.com/gke-spot NotIn [true]" in result.stdout


def test_a_mixed_input_judges_each_object_under_its_own_provider(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    gke_spot = "      nodeSelector: {cloud.google.com/gke-spot: 'true'}\n"
    karpenter_spot = "      nodeSelector: {karpenter.sh/capacity-type: spot}\n"
    text = "---\n".join([deployment("gke-1", gke_spot), deployment("gke-2", gke_spot),
                         deployment("aws", karpenter_spot), deployment("plain")])
    result = lint_text(text, "--format", "json")
    summary = json.loads(result.stdout)["summary"]["profile"]
    assert summary == {"name": "gke", "why": "inferred from cloud.google.com/gke-spot in 2 "
                                             "objects; karpenter.sh/capacity-type in 1 object, "
                                             "judged under karpenter"}
    found = {f["object"]["name"]: (f["rule"], f["message"])
             for f in json.loads(result.stdout)["findings"]}
    assert set(found) == {"gke-1", "gke-2", "aws", "plain"}
    # the Karpenter Spot pod is caught under Karpenter's label, with its 120 s notice
    assert found["aws"][0] == "PM101" and "120 s notice" in found["aws"][1]
    assert found["gke-1"][0] == "PM101" and "30 s notice" in found["gke-1"][1]
    # the rest is judged under the most used provider, GKE
    assert found["plain"][0] == "PM102" and "cloud.google.com/gke-spot" in found["plain"][1]


def test_a_tie_is_broken_the_same_way_every_time(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = deployment("a", "      nodeSelector: {karpenter.sh/capacity-type: spot}\n")
    second = deployment("b", "      nodeSelector: {cloud.google.com/gke-spot: 'true'}\n")
    for text in ("---\n".join([first, second]), "---\n".join([second, first])):
        assert lint_text(text).stderr.splitlines()[-1].startswith("profile gke, inferred from ")


def test_a_given_profile_is_used_as_before(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = deployment("spot", "      nodeSelector: {cloud.google.com/gke-spot: 'true'}\n")
    result = lint_text(text, "--profile", "karpenter")
    assert not result.stderr.splitlines()[-1].startswith("profile ")  # nothing more said
    assert "karpenter.sh/capacity-type NotIn [spot]" in result.stdout
    found = json.loads(lint_text(text, "--profile", "karpenter", "--format", "json").stdout)
    assert found["summary"]["profile"] == {"name": "karpenter", "why": "--profile"}
    (tmp_path / ".pmanifest.yaml").write_text("profile: aks\n")
    found = json.loads(lint_text(text, "--format", "json").stdout)
    assert found["summary"]["profile"] == {"name": "aks", "why": "the config's profile:"}


def test_a_custom_profile_with_its_own_label_is_inferred(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".pmanifest.yaml").write_text(
        "profiles:\n  pool:\n    extends: karpenter\n"
        "    label: {key: example.com/capacity, value: spot}\n")
    text = deployment("spot", "      nodeSelector: {example.com/capacity: spot}\n")
    result = lint_text(text)
    assert result.stderr.splitlines()[-1] == \
        "profile pool, inferred from example.com/capacity in 1 object"
    assert "PM101" in result.stdout


def test_labels_are_counted_once_per_document_and_never_in_comments() -> None:
    from pmanifest.lint.inputscan import scan

    raw = (b"a: {karpenter.sh/capacity-type: spot}\nb: karpenter.sh/capacity-type\n---\n"
           b"# karpenter.sh/capacity-type in a comment\nc: 1\n---\n"
           b"d: [karpenter.sh/capacity-type]  # and karpenter.sh/capacity-type\n")
    assert scan([raw, raw], ["karpenter.sh/capacity-type", "cloud.google.com/"]).labels == {
        "karpenter.sh/capacity-type": 4}
    assert scan([b"x: 1\n"], ["karpenter.sh/capacity-type"]).labels == {}
    # a URL or a longer name is no use of a label
    url = b"metadata: {annotations: {docs: 'https://cloud.google.com/kubernetes-engine'}}\n"
    assert scan([url, b"a: storage.cloud.google.com/x\n"], ["cloud.google.com/"]).labels == {}
    assert scan([b"- cloud.google.com/gke-spot\n"], ["cloud.google.com/"]).labels == {
        "cloud.google.com/": 1}
