"""Render warns on stderr about what its own lint flags on the output, at the spec line of
the workload; the exit code stays 0 and stdout is byte for byte what it is without them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.render.engine import RenderOptions, render_text
from tests.stderr import render_stderr

NO_CHECKPOINT = """\
apiVersion: pmanifest/v1
workloads:
  - name: api
    role: serving
    image: ghcr.io/acme/api:1
  - name: train
    image: ghcr.io/acme/trainer:1.4
    command: [python, train.py]
    gpus: 8
"""
PM302 = ("spec.yaml:6:5: warning: PM302[no-checkpoint-handler] Job runs on preemptible nodes "
         "but no container traps SIGTERM or has a preStop hook: a preemption loses the work "
         "since the last checkpoint (ignore this if the program itself checkpoints on SIGTERM) "
         "(in the rendered Job 'train'); if that is intended, add annotations: "
         "{pmanifest.io/ignore: PM302} to the workload\n")


def _render(*args: str, spec: str = NO_CHECKPOINT) -> tuple[int, str, str]:
    with open("spec.yaml", "w", encoding="utf-8") as handle:
        handle.write(spec)
    result = CliRunner().invoke(main, ["render", "-f", "spec.yaml", *args])
    return result.exit_code, result.stdout, render_stderr(result.stderr, ("PM302",))


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


def test_no_checkpoint_on_a_preemptible_worker_warns() -> None:
    code, out, err = _render()
    assert (code, err) == (0, PM302)
    assert out == render_text(NO_CHECKPOINT, "spec.yaml")  # what render gives without a word


def test_json_output_warns_the_same_with_the_same_items() -> None:
    code, out, err = _render("-o", "json")
    assert (code, err) == (0, PM302)
    assert out == render_text(NO_CHECKPOINT, "spec.yaml", RenderOptions(output="json"))
    assert [item["kind"] for item in json.loads(out)["items"]] == [
        "PodDisruptionBudget", "Deployment", "Job"]


def test_check_mode_warns_and_still_compares() -> None:
    with open("rendered.yaml", "w", encoding="utf-8") as handle:
        handle.write(render_text(NO_CHECKPOINT, "spec.yaml"))
    assert _render("--check", "rendered.yaml") == (0, "", PM302)


@pytest.mark.parametrize("where", ["annotations", "podAnnotations"])
def test_the_ignore_annotation_silences_it_in_render_and_lint(where: str) -> None:
    spec = NO_CHECKPOINT + f"    {where}: {{pmanifest.io/ignore: no-checkpoint-handler}}\n"
    code, out, err = _render(spec=spec)
    assert (code, err) == (0, "")
    linted = CliRunner().invoke(main, ["lint", "--select", "PM302", "--fail-on", "info", "-"],
                                input=out)
    assert (linted.exit_code, linted.stdout) == (0, "")


def test_a_checkpoint_leaves_nothing_to_say() -> None:
    spec = NO_CHECKPOINT + "    checkpoint: {command: [python, ckpt.py], trigger: sigterm}\n"
    code, _, err = _render(spec=spec)
    assert (code, err) == (0, "")


def test_warnings_follow_the_profile() -> None:
    code, out, err = _render("--profile", "gke")
    assert (code, err) == (0, PM302)
    assert "cloud.google.com/gke-spot" in out
    # on standard nodes nothing is preempted, so nothing to warn about
    spec = NO_CHECKPOINT + "    compute: standard\n"
    assert _render("--profile", "gke", spec=spec)[2] == ""


def test_a_test_reads_only_the_lint_warnings_it_is_about() -> None:
    text = ("s.yaml:3:5: warning: PM302[no-checkpoint-handler] no handler (in the rendered Job "
            "'x'); if that is intended, add ...\n"
            "s.yaml:4:5: warning: PM513[preemptible-demand-over-target] short\n"
            "s.yaml:7:1: not a warning of lint\n")
    assert render_stderr(text) == "s.yaml:7:1: not a warning of lint\n"
    assert render_stderr(text, ("PM513",)) == (
        "s.yaml:4:5: warning: PM513[preemptible-demand-over-target] short\n"
        "s.yaml:7:1: not a warning of lint\n")
