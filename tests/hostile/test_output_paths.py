"""Output paths never replace what the user has: devices and FIFOs are written to, not
replaced; links are followed; an output that is one of the run's inputs is refused before
anything is written. Devices and FIFOs are made under tmp_path (never /dev)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, run_real, summary

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "finetune-sigterm.yaml"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def _spec(tmp_path: Path) -> Path:
    return Path(shutil.copy(SPEC, tmp_path / "spec.yaml"))


def test_lint_output_onto_its_own_input_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "job.yaml", "--format", "junit", "--output", "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "job.yaml: --output is one of the inputs: writing there would destroy it; choose "
        "another path\n"))
    assert (tmp_path / "job.yaml").read_text() == CONFIGMAP


def test_lint_output_onto_a_file_found_in_a_linted_directory_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(CONFIGMAP)
    (tmp_path / "k8s" / "b.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "k8s", "--format", "json", "--output", "k8s/b.yaml",
                             "--format", "text"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "k8s/b.yaml: --output is one of the inputs: writing there would destroy it; choose "
        "another path\n"))
    assert (tmp_path / "k8s" / "b.yaml").read_text() == CONFIGMAP


def test_lint_output_through_another_name_of_an_input_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    os.link(tmp_path / "job.yaml", tmp_path / "hard.sarif")
    result = invoke(runner, ["lint", "job.yaml", "--format", "sarif", "--output", "hard.sarif"])
    assert (result.exit_code, result.stderr) == (2, (
        "hard.sarif: --output is one of the inputs (job.yaml): writing there would destroy "
        "it; choose another path\n"))
    assert (tmp_path / "job.yaml").read_text() == CONFIGMAP


def test_lint_output_onto_the_config_file_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / ".pmanifest.yaml").write_text("failOn: error\n")
    (tmp_path / "job.yaml").write_text(CONFIGMAP)
    result = invoke(runner, ["lint", "job.yaml", "--format", "json", "--output",
                             ".pmanifest.yaml"])
    assert (result.exit_code, result.stderr) == (2, (
        ".pmanifest.yaml: --output is one of the inputs: writing there would destroy it; "
        "choose another path\n"))
    assert (tmp_path / ".pmanifest.yaml").read_text() == "failOn: error\n"


def test_render_output_onto_the_spec_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    spec = _spec(tmp_path)
    before = spec.read_bytes()
    result = invoke(runner, ["render", "-f", "spec.yaml", "-O", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "spec.yaml: -O is one of the inputs: writing there would destroy it; choose another "
        "path\n"))
    assert spec.read_bytes() == before


def test_render_output_onto_a_link_to_the_spec_is_refused(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    spec = _spec(tmp_path)
    (tmp_path / "out.yaml").symlink_to(spec)
    result = invoke(runner, ["render", "-f", "spec.yaml", "-O", "out.yaml"])
    assert (result.exit_code, result.stderr) == (2, (
        "out.yaml: -O is one of the inputs (spec.yaml): writing there would destroy it; "
        "choose another path\n"))


def test_a_character_device_is_written_to_not_replaced(tmp_path: Path,
                                                       runner: CliRunner) -> None:
    """A copy of /dev/null (character device 1:3) made under tmp_path, as root."""
    _spec(tmp_path)
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = invoke(runner, ["render", "-f", "spec.yaml", "-O", str(null)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert stat.S_ISCHR(null.stat().st_mode)
    assert null.stat().st_rdev == os.makedev(1, 3)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_fifo_is_written_to_not_replaced(tmp_path: Path, runner: CliRunner) -> None:
    _spec(tmp_path)
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    fifo = tmp_path / "reports.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", str(fifo)])
    reader.join(10)
    assert (result.exit_code, result.stderr) == (
        0, summary("0 errors, 0 warnings, 0 info in 1 file (1 object)"))
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].startswith(b'{\n  "findings": []')


def test_a_link_to_a_report_is_kept_and_its_target_written(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "lint.json").write_text("old")
    (tmp_path / "latest.json").symlink_to("reports/lint.json")
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", "latest.json"])
    assert result.exit_code == 0
    assert (tmp_path / "latest.json").is_symlink()
    assert (tmp_path / "reports" / "lint.json").read_text().startswith('{\n  "findings": []')


def test_a_socket_is_refused_before_any_work(tmp_path: Path, runner: CliRunner) -> None:
    _spec(tmp_path)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        result = invoke(runner, ["render", "-f", "spec.yaml", "-O", "sock"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "sock: is not a regular file, a character device or a FIFO; -O needs a file path\n"))


@pytest.mark.parametrize("flag", ["-O", "--output"])
def test_a_directory_is_refused(tmp_path: Path, runner: CliRunner, flag: str) -> None:
    _spec(tmp_path)
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "out").mkdir()
    args = (["render", "-f", "spec.yaml", "-O", "out"] if flag == "-O"
            else ["lint", "k.yaml", "--format", "json", "--output", "out"])
    result = invoke(runner, args)
    assert (result.exit_code, result.stderr) == (2, f"out: is a directory; {flag} needs a "
                                                    "file path\n")


CLUSTER = ROOT / "examples" / "cluster"


def _unchanged(path: Path, run: list[str], runner: CliRunner, expected: str) -> None:
    before = path.read_bytes()
    result = invoke(runner, run)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected)
    assert path.read_bytes() == before


def test_render_output_onto_one_of_its_templates_is_refused(tmp_path: Path,
                                                           runner: CliRunner) -> None:
    _spec(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "job.yaml.j2").write_text(CONFIGMAP)
    _unchanged(tmp_path / "t" / "job.yaml.j2",
               ["render", "-f", "spec.yaml", "--templates", "t", "-O", "t/job.yaml.j2"], runner,
               "t/job.yaml.j2: -O is one of the inputs: writing there would destroy it; choose "
               "another path\n")


def test_render_output_onto_its_cluster_file_is_refused(tmp_path: Path,
                                                        runner: CliRunner) -> None:
    _spec(tmp_path)
    shutil.copy(CLUSTER / "create-request.json", tmp_path / "c.json")
    _unchanged(tmp_path / "c.json",
               ["render", "-f", "spec.yaml", "--cluster", "c.json", "-O", "c.json"], runner,
               "c.json: -O is one of the inputs: writing there would destroy it; choose another "
               "path\n")


def test_cluster_events_plot_onto_the_spec_is_refused(tmp_path: Path,
                                                      runner: CliRunner) -> None:
    spec = _spec(tmp_path)
    shutil.copy(CLUSTER / "kubectl-events.json", tmp_path / "ev.json")
    _unchanged(spec, ["cluster", "events", "ev.json", "--spec", "spec.yaml", "--plot",
                      "spec.yaml"], runner,
               "spec.yaml: --plot is one of the inputs: writing there would destroy it; choose "
               "another path\n")


@pytest.mark.parametrize(("args", "name", "flag"), [
    (["render", "-f", "-", "-O", "spec.yaml"], "spec.yaml", "-O"),
    (["cluster", "check", "-", "--output", "spec.yaml"], "spec.yaml", "--output"),
])
def test_an_output_onto_the_file_given_as_stdin_is_refused(tmp_path: Path, args: list[str],
                                                           name: str, flag: str) -> None:
    """``< spec.yaml``: stdin is that file; writing the output there would replace it."""
    spec = _spec(tmp_path)
    before = spec.read_bytes()
    with spec.open("rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "pmanifest", *args], cwd=tmp_path,
                              stdin=stdin, capture_output=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr.decode()) == (2, b"", (
        f"{name}: {flag} is one of the inputs (stdin): writing there would destroy it; choose "
        "another path\n"))
    assert spec.read_bytes() == before


# -- one writer: "-" is stdout for every option, and one file is never two outputs -------------

@pytest.mark.parametrize("named_dash", ["file", "link"])
def test_cluster_events_plot_dash_is_stdout_never_a_file_named_dash(
        tmp_path: Path, runner: CliRunner, named_dash: str) -> None:
    """``--plot -`` is stdout, which the report already takes: refused before anything is
    read or written. A file named ``-`` (or a link named ``-`` to the input) keeps its bytes."""
    shutil.copy(CLUSTER / "kubectl-events.json", tmp_path / "ev.json")
    dash = tmp_path / "-"
    if named_dash == "link":
        dash.symlink_to("ev.json")
    else:
        shutil.copy(CLUSTER / "kubectl-events.json", dash)
    before = (tmp_path / "ev.json").read_bytes()
    result = invoke(runner, ["cluster", "events", "ev.json", "./-", "--plot", "-"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "pmanifest: --plot - would share stdout with the report; give --plot a file path\n"))
    assert dash.read_bytes() == before
    assert dash.is_symlink() == (named_dash == "link")
    assert (tmp_path / "ev.json").read_bytes() == before


def test_cluster_events_plot_onto_an_input_named_dash_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    shutil.copy(CLUSTER / "kubectl-events.json", tmp_path / "-")
    _unchanged(tmp_path / "-", ["cluster", "events", "./-", "--plot", "./-"], runner,
               "./-: --plot is one of the inputs: writing there would destroy it; choose "
               "another path\n")


@pytest.mark.parametrize("spelling", ["symlink", "hardlink", "dotted"])
def test_two_spellings_of_one_report_file_are_refused(tmp_path: Path, runner: CliRunner,
                                                      spelling: str) -> None:
    """The second report would replace the first: refused, whatever the spelling."""
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "a.json").write_text("old")
    other = {"symlink": "b.json", "hardlink": "b.json", "dotted": "./a.json"}[spelling]
    if spelling == "symlink":
        (tmp_path / "b.json").symlink_to("a.json")
    elif spelling == "hardlink":
        os.link(tmp_path / "a.json", tmp_path / "b.json")
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", "a.json",
                             "--format", "sarif", "--output", other])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"pmanifest: --output {other} is given twice (as --output a.json): the first output "
        "would be lost; give each its own file\n"))
    assert (tmp_path / "a.json").read_text() == "old"


def test_two_new_report_files_through_a_linked_directory_are_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    (tmp_path / "out").mkdir()
    (tmp_path / "alias").symlink_to("out")
    result = invoke(runner, ["cluster", "check", str(CLUSTER / "create-request.json"),
                             "--format", "json", "--output", "out/r.json",
                             "--format", "sarif", "--output", "alias/r.json"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("pmanifest: --output alias/r.json is given twice")
    assert not (tmp_path / "out" / "r.json").exists()


def test_distinct_reports_and_one_null_device_twice_are_written(tmp_path: Path,
                                                                runner: CliRunner) -> None:
    """The positives around it: two files, or a character device named twice, are fine."""
    (tmp_path / "k.yaml").write_text(CONFIGMAP)
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = invoke(runner, ["lint", "k.yaml", "--format", "json", "--output", "a.json",
                             "--format", "sarif", "--output", "b.sarif", "--format", "junit",
                             "--output", str(null), "--format", "text", "--output", str(null)])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "a.json").read_text().startswith("{")
    assert (tmp_path / "b.sarif").read_text().startswith("{")


GRACE_PATCH = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n"
               "    spec:\n      terminationGracePeriodSeconds: 900\n")


def test_an_output_onto_the_kustomization_the_patch_search_read_is_refused(
        tmp_path: Path, runner: CliRunner) -> None:
    """Not named on the command line, found above a patch: read all the same, so kept."""
    kustomization = tmp_path / "app" / "kustomization.yaml"
    (tmp_path / "app" / "patches").mkdir(parents=True)
    kustomization.write_text("resources: [cm.yaml]\npatches: [{path: patches/grace.yaml}]\n")
    (tmp_path / "app" / "cm.yaml").write_text(CONFIGMAP)
    (tmp_path / "app" / "patches" / "grace.yaml").write_text(GRACE_PATCH)
    _unchanged(kustomization, ["lint", "app/patches/grace.yaml", "app/cm.yaml", "--format",
                               "json", "--output", "app/kustomization.yaml"], runner,
               "app/kustomization.yaml: --output is one of the inputs: writing there would "
               "destroy it; choose another path\n")
    # the positive around it: another path gets the report
    result = invoke(runner, ["lint", "app/patches/grace.yaml", "app/cm.yaml", "--format",
                             "json", "--output", "app/report.json"])
    assert result.exit_code == 0, result.stderr
    assert '"PM007"' in (tmp_path / "app" / "report.json").read_text()


def test_a_named_fifo_kustomization_is_read_once_never_reopened(tmp_path: Path) -> None:
    """A FIFO named kustomization.yaml given as an input is linted as one (its writer writes
    once); the patch search then reads regular files only: reopening the FIFO would wait for
    a second writer for ever."""
    (tmp_path / "app").mkdir()
    fifo = tmp_path / "app" / "kustomization.yaml"
    os.mkfifo(fifo)
    (tmp_path / "app" / "grace.yaml").write_text(GRACE_PATCH)
    writer = threading.Thread(target=lambda: fifo.write_text(CONFIGMAP), daemon=True)
    writer.start()
    proc = run_real(["lint", "app/kustomization.yaml", "app/grace.yaml", "--select", "PM201"],
                    tmp_path, limit=30)
    writer.join(5)
    assert proc.returncode == 1, proc.stderr
    assert b"grace-period-over-limit" in proc.stdout
