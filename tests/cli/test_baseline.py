"""Adopting pmanifest on a repository that already has findings: ``--write-baseline FILE``
records them by rule, file, object and path (never by line), ``--baseline FILE`` (or the
config's ``baseline:``) reports only new ones, and says on stderr what the baseline holds that
matches nothing any more, so ``--write-baseline`` again shrinks it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pmanifest.cli.main import main

# the rules the findings below come from (a new rule changes nothing here)
SELECT = [arg for rule in ("PM005", "PM102", "PM103", "PM201", "PM305", "PM401", "PM402")
          for arg in ("--select", rule)]
# five findings: PM401, PM201 and PM305 on the Job, PM102 on the Deployment, PM103 on the
# StatefulSet
FIVE = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train-N, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      terminationGracePeriodSeconds: 900
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - name: main
          image: ghcr.io/acme/trainer:1.4
          command: [sh, -c, "trap 'python ckpt.py; exit 0' TERM; python train.py & wait"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api-N, namespace: ml}
spec:
  selector: {matchLabels: {app: api-N}}
  template:
    metadata: {labels: {app: api-N}}
    spec:
      containers: [{name: api, image: ghcr.io/acme/api:2}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db-N, namespace: ml}
spec:
  serviceName: db-N
  selector: {matchLabels: {app: db-N}}
  template:
    metadata: {labels: {app: db-N}}
    spec:
      containers: [{name: db, image: postgres:16}]
"""
# the same three objects written another way: block and flow swapped, keys reordered,
# comments and blank lines added, the Job moved to the end
REFORMATTED = """\
# the team's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  namespace: ml
  name: db-N
spec:
  selector:
    matchLabels: {app: db-N}
  serviceName: db-N

  template:
    metadata: {labels: {app: db-N}}
    spec:
      containers:
        - image: postgres:16
          name: db
---
kind: Deployment
apiVersion: apps/v1
metadata: {namespace: ml, name: api-N}
spec:
  template:
    spec: {containers: [{image: ghcr.io/acme/api:2, name: api}]}
    metadata: {labels: {app: api-N}}
  selector: {matchLabels: {app: api-N}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train-N
  namespace: ml
spec:
  template:
    spec:
      nodeSelector:
        together.ai/compute-class: preemptible
      terminationGracePeriodSeconds: 900   # long checkpoints
      restartPolicy: OnFailure
      containers:
        - command:
            - sh
            - -c
            - trap 'python ckpt.py; exit 0' TERM; python train.py & wait
          name: main
          image: ghcr.io/acme/trainer:1.4
"""
NEW_MISTAKE = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1}]
"""
BASELINE = ".pmanifest-baseline.json"


def lint(*args: str) -> Result:
    return CliRunner().invoke(main, ["lint", *SELECT, "--format", "json", *args])


def found(result: Result) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["file"], f["object"]["name"])
            for f in json.loads(result.stdout)["findings"]]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of ten files with five findings each, and a config naming the baseline."""
    monkeypatch.chdir(tmp_path)
    for n in range(10):
        (tmp_path / "k8s" / f"team{n}").mkdir(parents=True)
        (tmp_path / "k8s" / f"team{n}" / "apps.yaml").write_text(FIVE.replace("-N", f"-{n}"))
    (tmp_path / ".pmanifest.yaml").write_text(f"baseline: {BASELINE}\n")
    return tmp_path


def test_fifty_findings_adopted_then_only_a_new_mistake_fails(repo: Path) -> None:
    before = lint("k8s", "--no-baseline")
    assert (before.exit_code, len(found(before))) == (1, 50)
    written = lint("k8s", "--write-baseline", BASELINE)
    assert (written.exit_code, found(written)) == (0, [])
    assert written.stderr.endswith(f"pmanifest: recorded 50 findings in {BASELINE}; give it to "
                                   "--baseline (or `baseline:` in the config)\n")
    recorded = json.loads((repo / BASELINE).read_text())["findings"]
    assert sum(entry["count"] for entry in recorded) == 50
    assert not any("line" in entry for entry in recorded)

    adopted = lint("k8s")  # the config names the baseline
    assert (adopted.exit_code, found(adopted)) == (0, [])
    assert "pmanifest: 50 findings held by the baseline .pmanifest-baseline.json not " \
           "reported\n" in adopted.stderr

    # every file reformatted (lines moved, styles swapped, comments added): still adopted
    for n in range(10):
        (repo / "k8s" / f"team{n}" / "apps.yaml").write_text(
            REFORMATTED.replace("-N", f"-{n}"))
    assert (lint("k8s").exit_code, found(lint("k8s"))) == (0, [])

    # a new mistake: only it fails the gate
    with open(repo / "k8s" / "team3" / "apps.yaml", "a", encoding="utf-8") as handle:
        handle.write(NEW_MISTAKE)
    gate = lint("k8s")
    assert (gate.exit_code, found(gate)) == (0, [
        ("PM102", "k8s/team3/apps.yaml", "web")])  # info (no accelerator): exit 0 at error
    assert lint("k8s", "--fail-on", "warning").exit_code == 0
    assert lint("k8s", "--fail-on", "info").exit_code == 1
    assert len(found(lint("k8s", "--no-baseline"))) == 51


def test_what_no_longer_matches_is_said_and_written_away(repo: Path) -> None:
    assert lint("k8s", "--write-baseline", BASELINE).exit_code == 0
    job = repo / "k8s" / "team7" / "apps.yaml"
    job.write_text(job.read_text().replace("terminationGracePeriodSeconds: 900",
                                           "terminationGracePeriodSeconds: 300"))
    result = lint("k8s")
    assert (result.exit_code, found(result)) == (0, [])
    assert result.stderr.splitlines()[1:] == [
        "profile together, inferred from together.ai/compute-class in 10 objects",
        "pmanifest: 49 findings held by the baseline .pmanifest-baseline.json not reported",
        "pmanifest: 1 baseline finding of .pmanifest-baseline.json matched nothing (fixed, or "
        "the object renamed); `pmanifest lint ... --write-baseline .pmanifest-baseline.json` "
        "drops them:",
        "  k8s/team7/apps.yaml: PM201 ml/Job/train-7 "
        "spec.template.spec.terminationGracePeriodSeconds"]
    pruned = lint("k8s", "--write-baseline", BASELINE)
    assert pruned.stderr.endswith("pmanifest: recorded 49 findings in .pmanifest-baseline.json "
                                  "(0 not in it before, 1 dropped that matched no finding any "
                                  "more)\n")
    assert sum(e["count"] for e in json.loads((repo / BASELINE).read_text())["findings"]) == 49
    assert "matched nothing" not in lint("k8s").stderr


def test_a_renamed_object_is_new(repo: Path) -> None:
    assert lint("k8s", "--write-baseline", BASELINE).exit_code == 0
    apps = repo / "k8s" / "team0" / "apps.yaml"
    apps.write_text(apps.read_text().replace("train-0", "train-zero"))
    result = lint("k8s")
    assert sorted(found(result)) == [("PM201", "k8s/team0/apps.yaml", "train-zero"),
                                     ("PM305", "k8s/team0/apps.yaml", "train-zero"),
                                     ("PM401", "k8s/team0/apps.yaml", "train-zero")]
    assert "3 baseline findings of .pmanifest-baseline.json matched nothing" in result.stderr


def test_the_count_of_one_fingerprint(repo: Path, tmp_path: Path) -> None:
    """Two hits at the same path of one object are two findings: a third one is new."""
    twice = tmp_path / "twice.yaml"
    job = FIVE.split("---")[0].replace("-N", "-t")
    one = "trap 'python ckpt.py; exit 0' TERM; python train.py & wait"
    twice.write_text(job.replace(one, f"{one}; trap 'exit 0' TERM; python eval.py & wait"))
    assert [r for r, _, _ in found(lint("twice.yaml", "--no-baseline"))].count("PM305") == 2
    assert lint("twice.yaml", "--write-baseline", "t.json").exit_code == 0
    assert [e["count"] for e in json.loads(Path("t.json").read_text())["findings"]
            if e["rule"] == "PM305"] == [2]
    assert found(lint("twice.yaml", "--baseline", "t.json")) == []
    twice.write_text(twice.read_text().replace("eval.py & wait", "eval.py & wait; trap "
                                               "'exit 0' TERM; python eval2.py & wait"))
    assert [r for r, _, _ in found(lint("twice.yaml", "--baseline", "t.json"))] == ["PM305"]


def test_findings_about_no_object_ignore_line_numbers(repo: Path) -> None:
    comment = repo / "comment.yaml"
    comment.write_text("# pmanifest: ignore=PM201\n" + FIVE.split("---")[1])
    assert [r for r, _, _ in found(lint("comment.yaml", "--no-baseline"))] == ["PM005", "PM102"]
    assert lint("comment.yaml", "--write-baseline", "c.json").exit_code == 0
    comment.write_text("\n\n" + comment.read_text())  # its message now names another line
    assert found(lint("comment.yaml", "--baseline", "c.json")) == []


def test_paths_are_relative_to_the_baseline_wherever_lint_runs(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lint("k8s", "--write-baseline", BASELINE).exit_code == 0
    monkeypatch.chdir(repo / "k8s")
    result = lint(".", "--baseline", f"../{BASELINE}")
    assert (result.exit_code, found(result)) == (0, [])
    assert "50 findings held by the baseline" in result.stderr


def test_a_broken_baseline_is_an_error_at_its_position(repo: Path) -> None:
    (repo / BASELINE).write_text('{"version": 1, "findings": [{"rule": "PM201"}]}\n')
    result = lint("k8s")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(".pmanifest-baseline.json:1:29: findings[0] is missing ")
    (repo / BASELINE).unlink()
    missing = lint("k8s")
    assert (missing.exit_code, missing.stderr) == (2, (
        ".pmanifest-baseline.json: cannot read the baseline: No such file or directory; write "
        "one with `pmanifest lint PATH... --write-baseline .pmanifest-baseline.json`\n"))


def test_write_baseline_never_replaces_an_input_or_another_file(repo: Path) -> None:
    apps = repo / "k8s" / "team0" / "apps.yaml"
    text = apps.read_text()
    for path in ("k8s/team0/apps.yaml", ".pmanifest.yaml"):
        result = lint("k8s", "--write-baseline", path)
        assert result.exit_code == 2, path
        assert result.stderr.startswith(f"{path}: --write-baseline would replace a file that "
                                        "is not a pmanifest baseline")
    assert apps.read_text() == text
    result = lint("k8s/team0/apps.yaml", "--write-baseline", "k8s/team0/apps.yaml",
                  "--no-baseline")
    assert result.exit_code == 2
    assert apps.read_text() == text
