"""``pmanifest lint --fix`` and ``--diff`` on real-looking files (tests/cli/fixing/: comments,
anchors and merge keys, 4-space indentation and unindented lists, flow style, a ``kind: List``
with aliases, several documents; and the README's example): the fixed rules lint clean
afterwards, every byte outside the edits is unchanged, a second run changes nothing, and a
fix that cannot be placed exactly is skipped and said."""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pmanifest.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "fixing"
FIXED_RULES = ("PM102", "PM103", "PM201", "PM401", "PM402")
SELECT = [arg for rule in FIXED_RULES for arg in ("--select", rule)]


def lint(*args: str) -> Result:
    return CliRunner().invoke(main, ["lint", *args])


def found(path: Path) -> list[str]:
    """``line:col rule`` of what the fixed rules still find in ``path``."""
    result = lint(*SELECT, str(path))
    return [f"{line.split(':')[1]}:{line.split(':')[2]} {line.split()[2][:5]}"
            for line in result.stdout.splitlines()]


def _tokens(text: str) -> list[str]:
    """Words (a number, a name, a label key), runs of blanks, and every other character."""
    return re.findall(r"[\w./-]+|[ \t]+|.|\n", text)


def edits(before: str, after: str) -> list[tuple[str, str]]:
    """What changed, token by token: (old, new) of every span that is not equal. Every
    other byte is the same."""
    a, b = _tokens(before), _tokens(after)
    assert "".join(a) == before and "".join(b) == after
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [("".join(a[i1:i2]), "".join(b[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def insert(text: str, *after: tuple[str, str]) -> str:
    """``text`` with each new text inserted right after the only place its anchor is."""
    for anchor, new in after:
        assert text.count(anchor) == 1, anchor
        text = text.replace(anchor, anchor + new)
    return text


def check_only_values_replaced(changes: list[tuple[str, str]]) -> None:
    """What a fix removes is at most a scalar's text: never a comment, a key, a line break."""
    for old, new in changes:
        assert not any(ch in old for ch in "#\n:{}[],&*"), (old, new)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_anchors_merge_keys_and_four_space_indentation(work: Path) -> None:
    path = work / "jobs.yaml"
    shutil.copyfile(CASES / "anchors-and-merge-keys.yaml", path)
    before = path.read_text()
    result = lint(str(path.name), "--fix")
    after = path.read_text()
    assert result.stderr.splitlines()[:2] == [
        "jobs.yaml:16:17: PM201[grace-period-over-limit] not fixed: "
        "spec.template.spec.terminationGracePeriodSeconds comes from a merge key (<<): the "
        "mapping it merges is shared; change it there, or set the key here by hand",
        "pmanifest: fixed 3 findings in 1 file; 1 not fixed (said above)"]
    check_only_values_replaced(edits(before, after))
    assert after == insert(before.replace(
        "terminationGracePeriodSeconds: 1200   # eval", "terminationGracePeriodSeconds: 300   "
        "# eval"),  # the comment after the value stays
        ('              command: ["/bin/sh", "-c", "trap \'python flush.py; exit 143\' TERM; '
         'python eval.py & wait"]\n',
         "    podFailurePolicy:\n"  # after the Job's template, at the file's 4-space step
         "        rules:\n"
         "        - action: Ignore\n"  # lists unindented under their key, as the file has
         "          onPodConditions:\n"
         "          - type: DisruptionTarget\n"
         '            status: "True"\n'),  # the file's double quotes
        ("values: [us-central-2a]}\n",
         "                          - {key: together.ai/compute-class, operator: NotIn, "
         "values: [preemptible]}\n"),  # in flow, as the term's other expression is
        ("values: [gpu-dp-001, gpu-preemptible-dp-002]\n",
         "                          matchExpressions:\n"  # the matchFields term gets one
         "                          - key: together.ai/compute-class\n"
         "                            operator: NotIn\n"
         "                            values: [preemptible]\n"))
    assert found(path) == ["16:17 PM201"]  # only what was said: the merged grace period
    assert "# zone a, or the nodes named in matchFields" in after
    assert lint(path.name, "--fix").exit_code == 1 and path.read_text() == after  # twice


def test_flow_style_crlf_and_a_cronjob(work: Path) -> None:
    path = work / "nightly.yaml"
    path.write_bytes((CASES / "flow-style.yaml").read_bytes().replace(b"\n", b"\r\n"))
    before = path.read_bytes()
    result = lint(path.name, "--fix")
    assert result.exit_code == 0, result.output
    after = path.read_bytes()
    assert after.count(b"\r\n") == after.count(b"\n")  # every line still ends in CRLF
    changes = edits(before.decode(), after.decode())
    check_only_values_replaced(changes)
    assert after.decode() == before.decode().replace(
        "rules: [{action: FailJob", 'rules: [{action: Ignore, onPodConditions: [{type: '
        'DisruptionTarget, status: "True"}]}, {action: FailJob').replace(  # first: in order
        "restartPolicy: 'OnFailure', terminationGracePeriodSeconds: 450",
        "restartPolicy: 'Never', terminationGracePeriodSeconds: 300").replace(  # quotes kept
        "containerPort: 8080}]}]}", "containerPort: 8080}]}], affinity: {nodeAffinity: "
        "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: together.ai/compute-class, operator: NotIn, values: "
        "[preemptible]}]}]}}}}")
    assert found(path) == []
    assert lint(path.name, "--fix").stderr.startswith("pmanifest: fixed 0 findings in 0 files")
    assert path.read_bytes() == after


def test_a_list_with_aliases_and_no_final_newline(work: Path) -> None:
    path = work / "shards.yaml"
    path.write_text((CASES / "list-with-aliases.yaml").read_text().rstrip("\n"))
    before = path.read_text()
    result = lint(path.name, "--fix")
    after = path.read_text()
    assert result.stderr.splitlines()[:3] == [
        "shards.yaml:31:9: PM201[grace-period-over-limit] not fixed: "
        "items[1].spec.template.spec.terminationGracePeriodSeconds is written through an "
        "alias, not in this place",
        "shards.yaml:16:11: PM201[grace-period-over-limit] not fixed: "
        "items[0].spec.template.spec.terminationGracePeriodSeconds is inside &worker, which an "
        "alias (*worker) repeats: a change there would change that too",
        "pmanifest: fixed 1 finding in 1 file; 2 not fixed (said above)"]
    assert after == before + (
        "\n          affinity:\n"  # the StatefulSet of items[2], after its last line
        "            nodeAffinity:\n"
        "              requiredDuringSchedulingIgnoredDuringExecution:\n"
        "                nodeSelectorTerms:\n"
        "                  - matchExpressions:\n"
        "                      - key: together.ai/compute-class\n"
        "                        operator: NotIn\n"
        "                        values: [preemptible]")  # and still no final newline
    assert found(path) == ["16:11 PM201", "31:9 PM201"]


def test_the_readme_example_is_fixed_clean_and_the_diff_shows_it_first(work: Path) -> None:
    shutil.copytree(ROOT / "examples" / "lint", work / "examples" / "lint")
    path = work / "examples" / "lint" / "llama-8b.yaml"
    before = path.read_text()
    fixable = [f for f in json.loads(lint("examples/lint/", "--format", "json").stdout)[
        "findings"] if "fix" in f]
    assert len(fixable) >= 4  # PM102, PM201, PM401, PM402 at least: what the README shows
    shown = lint("examples/lint/", "--diff")
    assert (shown.exit_code, path.read_text()) == (1, before)  # --diff writes nothing
    said = re.fullmatch(r"pmanifest: would fix (\d+) findings in 1 file\n", shown.stderr)
    # every fixable finding, and those a fix brings out (a podFailurePolicy, then PM402)
    assert said is not None and int(said.group(1)) >= len(fixable)
    result = lint("examples/lint/", "--fix", "--fail-on", "info")
    assert (result.exit_code, result.stdout) == (0, "")  # every rule: nothing left
    after = path.read_text()
    # the diff said exactly what --fix wrote
    patch = shown.stdout.splitlines()
    assert patch[:2] == ["--- examples/lint/llama-8b.yaml (now)",
                         "+++ examples/lint/llama-8b.yaml (fixed)"]
    assert [line[1:] for line in patch if line.startswith("+") and not line.startswith("+++")] \
        == [line for line in after.splitlines() if line not in before.splitlines()]
    changes = edits(before, after)
    check_only_values_replaced(changes)
    assert [new for old, new in changes if old] == ["Never", "300"]
    again = lint("examples/lint/", "--diff")
    assert (again.exit_code, again.stdout) == (0, "")


def test_json_a_block_scalar_and_mixed_line_endings_are_not_edited(work: Path) -> None:
    job = (CASES / "list-with-aliases.yaml").read_text()
    (work / "job.json").write_text(
        '{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": '
        '{"template": {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": '
        '900, "nodeSelector": {"together.ai/compute-class": "preemptible"}, "containers": '
        '[{"name": "m", "image": "busybox", "command": ["sh", "-c", "trap \'exit 143\' TERM; '
        'run & wait"]}]}}}}\n')
    mixed = work / "mixed.yaml"
    mixed.write_bytes(job.replace("kind: List\n", "kind: List\r\n").encode())
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    result = lint("job.json", "mixed.yaml", "--fix", "--select", "PM201")
    assert {p.name: p.read_bytes() for p in work.iterdir()} == before
    said = result.stderr.splitlines()
    assert "job.json:1:127: PM201[grace-period-over-limit] not fixed: the document is JSON " \
           "(one flow collection); edit it by hand" in said
    assert "mixed.yaml:16:11: PM201[grace-period-over-limit] not fixed: the file mixes line " \
           "endings (CRLF and LF or CR): an edit would have to choose one" in said


def test_stdin_can_be_shown_not_written(work: Path) -> None:
    text = (ROOT / "examples" / "lint" / "llama-8b.yaml").read_text()
    refused = CliRunner().invoke(main, ["lint", "-", "--fix"], input=text)
    assert (refused.exit_code, refused.stdout) == (2, "")
    assert refused.stderr == ("pmanifest: --fix writes the fixed files back; stdin has none: "
                              "use --diff to see the fixes\n")
    shown = CliRunner().invoke(main, ["lint", "-", "--diff", "--stdin-filename", "s.yaml"],
                               input=text)
    assert shown.exit_code == 1
    assert shown.stdout.startswith("--- s.yaml (now)\n+++ s.yaml (fixed)\n")


def test_files_are_written_atomically_keeping_mode_and_links(work: Path) -> None:
    real = work / "real.yaml"
    shutil.copyfile(ROOT / "examples" / "lint" / "llama-8b.yaml", real)
    real.chmod(0o640)
    (work / "k8s").mkdir()
    link = work / "k8s" / "link.yaml"
    link.symlink_to(real)
    result = lint("k8s/link.yaml", "--fix")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert "status: \"True\"" in real.read_text()
    assert sorted(p.name for p in work.iterdir()) == ["k8s", "real.yaml"]  # no temp file left


def test_fix_never_writes_the_config_or_a_report_over_an_input(work: Path) -> None:
    shutil.copyfile(ROOT / "examples" / "lint" / "llama-8b.yaml", work / "a.yaml")
    before = (work / "a.yaml").read_text()
    result = lint("a.yaml", "--fix", "--format", "json", "--output", "a.yaml")
    assert result.exit_code == 2
    assert (work / "a.yaml").read_text() == before  # refused before any fix was written
