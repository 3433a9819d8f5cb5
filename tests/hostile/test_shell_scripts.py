"""Hostile shell scripts inside manifests (issue 15, items 5, 11, 20): exponential inlining and
deep nesting make a script opaque in bounded time instead of running for minutes or raising
RecursionError; positions after multi-byte characters are character columns. Every case runs
the real CLI and compares exit code, stdout and stderr exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.shell import analyse
from tests.hostile.conftest import invoke, run_real, summary
from tests.hostile.corpus import BASE, COMMAND

# An opaque script is said to be one (PM006, info) instead of passing for one without a trap
# (PM302 stays silent: the script may well trap TERM).
OPAQUE = ("15:29: info PM006[script-not-analysed] the script of container 'main' was not "
          "analysed ({why}): the shell rules cannot tell what it does on SIGTERM; move the "
          "logic into a file the image runs, or simplify it\n")
NO_TRAP = ("13:11: warning PM302[no-checkpoint-handler] Job runs on preemptible nodes but no "
           "container traps SIGTERM or has a preStop hook: a preemption loses the work since "
           "the last checkpoint (ignore this if the program itself checkpoints on SIGTERM)\n")
WHY = {"too much": "too much to read once the script's functions are inlined",
       "deep": "nested more than 150 levels deep"}
SELECT = ["--select", "PM006", "--select", "PM302"]
ONE_INFO = summary("0 errors, 0 warnings, 1 info in 1 file (1 object)", 4)  # + PM001, PM007


def _job(script: str) -> str:
    return BASE.replace(COMMAND, f"          command: [sh, -c, {json.dumps(script)}]\n")


def _doubling(levels: int, leaf: str) -> str:
    """f0 calls f1 twice, f1 calls f2 twice, ...: 2**levels calls of the leaf, in ~50 bytes a
    level (44 s and 585 MB for 20 levels before the walk had a budget)."""
    return ("".join(f"f{i}() {{ f{i + 1}; f{i + 1}; }}\n" for i in range(levels))
            + f"f{levels}() {{ {leaf}; }}\ntrap 'f0; exit 143' TERM\nf0\npython t.py & wait $!\n")


SCRIPTS = {
    # item 5: exponential inlining (with and without commands at the leaves)
    "doubling-functions": _doubling(20, "echo hi"),
    "doubling-functions-quiet-leaf": _doubling(24, "x=1"),
    "doubling-through-the-trap-only": "".join(
        f"f{i}() {{ f{i + 1}; f{i + 1}; }}\n" for i in range(22)) + "f22() { :; }\n"
        "trap f0 TERM\npython t.py & wait $!\n",
    # item 11: nesting 1,000 deep
    "and-chain": " && ".join(["true"] * 1000) + "; trap 'exit 143' TERM; python t.py & wait $!",
    "subshells": "(" * 1000 + "true" + ")" * 1000,
    "command-substitutions": "echo " + "$(echo " * 1000 + "x" + ")" * 1000,
    "ifs": "if true; then " * 1000 + "true" + "; fi" * 1000,
    "parameter-expansions": "echo " + "${a:-" * 1000 + "x" + "}" * 1000,
    "nested-calls": "".join(f"g{i}() {{ g{i + 1}; }}\n" for i in range(1000)) + "g0\n",
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_hostile_script_is_opaque_in_bounded_time(runner: CliRunner, tmp_path: Path,
                                                  name: str) -> None:
    (tmp_path / f"{name}.yaml").write_text(_job(SCRIPTS[name]))
    result = invoke(runner, ["lint", f"{name}.yaml", *SELECT], limit=10)
    if name == "parameter-expansions":  # read to the end (expansions are walked without
        # recursion): a script without a trap, as it is
        assert (result.exit_code, result.stdout, result.stderr) == (
            0, f"{name}.yaml:{NO_TRAP}",
            summary("0 errors, 1 warning, 0 info in 1 file (1 object)", 4))
        return
    why = WHY["too much" if "doubling" in name else "deep"]
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, f"{name}.yaml:" + OPAQUE.format(why=why), ONE_INFO)


@pytest.mark.parametrize("name", ["doubling-functions", "and-chain", "subshells"])
def test_hostile_script_in_a_real_process(tmp_path: Path, name: str) -> None:
    (tmp_path / "job.yaml").write_text(_job(SCRIPTS[name]))
    proc = run_real(["lint", "job.yaml", *SELECT], tmp_path, limit=20)
    why = WHY["too much" if "doubling" in name else "deep"]
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (
        0, "job.yaml:" + OPAQUE.format(why=why), ONE_INFO)


def test_why_a_script_is_opaque() -> None:
    assert analyse(SCRIPTS["doubling-functions"]).opaque == (
        "too much to read once the script's functions are inlined")
    assert analyse(SCRIPTS["ifs"]).opaque == "nested more than 150 levels deep"


def test_real_scripts_with_helpers_called_often_are_read() -> None:
    helpers = ('log() { echo "$(date -u +%FT%TZ) $*" >&2; }\n'
               'retry() { n=0; until "$@"; do n=$((n+1)); [ $n -ge 5 ] && return 1; '
               'log retry $n; sleep $((2**n)); done; }\n'
               "trap 'log stop; python ckpt.py; exit 143' TERM\n"
               + "".join(f"retry python step{i}.py & wait $!\nlog done {i}\n" for i in range(40)))
    facts = analyse(helpers)
    assert facts.opaque == ""
    assert [t.action for t in facts.traps] == ["log stop; python ckpt.py; exit 143"]
    assert len([c for c in facts.commands if c.program == "sleep"]) == 40  # retry, inlined


# -- item 20: character columns ------------------------------------------------------------------

EXEC = ("error PM303[trap-lost-by-exec] `exec python` replaces the shell, discarding the TERM "
        "trap (line {line}): run it in the background and `wait` for it instead\n")
# the trap only exits, so it starts no checkpoint either (PM302: one definition of that)
ONE_ERROR = summary("1 error, 1 warning, 0 info in 1 file (1 object)")


def test_positions_after_multibyte_characters_in_a_flow_scalar(runner: CliRunner,
                                                               tmp_path: Path) -> None:
    command = "          command: [sh, -c, 'echo é😀; trap \"exit 143\" TERM; exec python t.py']\n"
    (tmp_path / "job.yaml").write_text(BASE.replace(COMMAND, command))
    result = invoke(runner, ["lint", "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "job.yaml:" + NO_TRAP + "job.yaml:15:61: " + EXEC.format(line=15), ONE_ERROR)
    assert command[60:64] == "exec"  # column 61, 1-based, in characters


def test_positions_after_multibyte_characters_in_a_block_scalar(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    block = ("          command:\n          - sh\n          - -c\n          - |\n"
             "            echo 'ünïcödé 😀😀'; trap 'exit 143' TERM\n"
             "            echo ✓✓✓; exec python t.py\n")
    (tmp_path / "job.yaml").write_text(BASE.replace(COMMAND, block))
    result = invoke(runner, ["lint", "job.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "job.yaml:" + NO_TRAP + "job.yaml:20:23: " + EXEC.format(line=19), ONE_ERROR)
    assert block.splitlines()[5][22:26] == "exec"


def test_sarif_columns_are_code_points(runner: CliRunner, tmp_path: Path) -> None:
    command = "          command: [sh, -c, 'echo é😀; trap \"exit 143\" TERM; exec python t.py']\n"
    (tmp_path / "job.yaml").write_text(BASE.replace(COMMAND, command))
    result = invoke(runner, ["lint", "--format", "sarif", "job.yaml"])
    sarif = json.loads(result.stdout)
    run = sarif["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    (pm303,) = [r for r in run["results"] if r["ruleId"] == "PM303"]
    region = pm303["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (15, 61)
