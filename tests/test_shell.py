"""The shell reader: traps, exec, foreground commands and positions, on scripts built to fool
a regular expression."""

from __future__ import annotations

from pathlib import Path as FsPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmanifest.kube.document import Document
from pmanifest.loader.documents import Loaded, load_documents
from pmanifest.loader.positions import Pos
from pmanifest.shell import (
    Command,
    Loc,
    Trap,
    analyse,
    container_script,
    prestop_of,
    script_index,
    script_pos,
    written_paths,
)
from tests.hypothesis_profiles import examples

SUPERVISOR = FsPath(__file__).parents[1] / "templates" / "supervisor.sh"


def _exits_zero(trap: Trap) -> bool:
    """Does the handler's action run ``exit 0`` (read from the commands the analysis found)?"""
    return any(c.program == "exit" and c.args[:1] == ("0",) for c in trap.commands)


@pytest.mark.parametrize(
    ("argv", "index"),
    [
        (["/bin/sh", "-c", "x"], 2),
        (["bash", "-ec", "x"], 2),
        (["bash", "-euxc", "x", "arg0"], 2),
        (["/usr/bin/env", "FOO=1", "bash", "-c", "x"], 4),
        (["tini", "--", "sh", "-e", "-c", "x"], 5),
        (["busybox", "sh", "-c", "x"], 3),
        (["bash", "-o", "pipefail", "-c", "x"], 4),
        (["/bin/sh", "-c"], None),
        (["python", "-c", "print(1)"], None),
        (["bash", "script.sh"], None),
        (["bash", "-e", "script.sh"], None),
        ([], None),
        ([1, "-c", "x"], None),
    ],
)
def test_script_index(argv: list[object], index: int | None) -> None:
    assert script_index(argv) == index


def test_container_script_spans_command_and_args() -> None:
    found = container_script({"command": ["/bin/sh", "-c"], "args": ["run", "x"]})
    assert found == (("args", 0), "run")
    assert container_script({"command": ["sh", "-c", "a"]}) == (("command", 2), "a")
    assert container_script({"args": ["-c", "a"]}) is None  # entrypoint unknown
    assert container_script({"command": "sh -c a"}) is None  # wrong type: ignored


def test_trap_basics() -> None:
    facts = analyse("set -e\ntrap 'python ckpt.py; exit 0' TERM INT\nrun & child=$!\nwait\n")
    (trap,) = facts.traps
    assert trap.loc == Loc(1, 0)
    assert trap.signals == ("TERM", "INT")
    assert trap.does_work and _exits_zero(trap)
    assert [c.name for c in trap.commands] == ["python", "exit"]
    assert trap.commands[0].loc == Loc(1, 6)  # inside the quoted action
    assert facts.execs == () and facts.foreground == ()


@pytest.mark.parametrize("signal", ["TERM", "SIGTERM", "15", "term", "sigterm"])
def test_term_spellings(signal: str) -> None:
    assert analyse(f"trap 'ckpt' EXIT {signal}\nrun & wait\n").traps


@pytest.mark.parametrize(
    "script",
    [
        "trap 'ckpt' EXIT\n",  # EXIT alone is not a TERM handler
        "trap 'ckpt' INT HUP\n",
        "trap - TERM\n",  # reset
        "trap '' TERM\n",  # ignore
        "trap -p TERM\n",  # print
        "echo \"trap 'ckpt' TERM\"\n",  # in a string
        "# trap 'ckpt' TERM\n",  # in a comment
        "cat <<'EOF'\ntrap 'ckpt' TERM\nEOF\n",  # in a here-doc
        "cat <<EOF > /tmp/x.sh\ntrap \"ckpt $x\" TERM\nexec python\nEOF\n",
        "never_called() { trap 'ckpt' TERM; }\n",  # in a function nobody calls
        "( trap 'ckpt' TERM; run )\n",  # in a subshell: not the main shell's trap
        "sh -c \"trap 'ckpt' TERM; run\"\n",  # another shell's script
    ],
)
def test_not_a_term_trap(script: str) -> None:
    assert analyse(script).traps == ()


def test_trap_set_in_a_called_function() -> None:
    facts = analyse("setup() {\n  trap 'ckpt /mnt/x' TERM\n}\nsetup\npython train.py\n")
    (trap,) = facts.traps
    assert trap.loc == Loc(1, 2)
    assert [c.name for c in facts.foreground] == ["python"]


def test_trap_action_through_a_function() -> None:
    script = (
        "on_term() {\n"
        "  echo bye\n"
        "  python /app/save.py --out=/ckpt\n"
        "  exit 0\n"
        "}\n"
        "trap on_term TERM\n"
        "run & child=$!; wait $child\n"
    )
    (trap,) = analyse(script).traps
    assert trap.does_work and _exits_zero(trap)
    assert trap.work[0].loc == Loc(2, 2)  # the function body's own line
    assert written_paths(trap.work[0]) == ("/ckpt",)


def test_command_substitution_computes_a_value_not_work() -> None:
    (trap,) = analyse("trap 'echo \"at step $(cat /tmp/step)\"; exit 143' TERM\n").traps
    assert [c.name for c in trap.commands] == ["cat", "echo", "exit"]  # execution order
    assert not trap.does_work
    assert analyse("trap 'ckpt' TERM\nn=$(cat /tmp/n)\n").foreground == ()


def test_forwarding_only_trap_does_no_work() -> None:
    (trap,) = analyse("trap 'kill -TERM $child; wait $child; exit 143' TERM\n").traps
    assert not trap.does_work and not _exits_zero(trap)


def test_reading_proc_in_a_loop_is_no_work() -> None:
    """A handler that finds its processes (read from /proc, continue, break) and signals
    them does no checkpoint work."""
    (trap,) = analyse(
        "on_term() {\n  for f in /proc/[0-9]*/stat; do\n    read -r line < \"$f\" || continue\n"
        "    case $line in *' Z '*) break ;; esac\n    kill -TERM \"${line%% *}\"\n  done\n"
        "  exit 143\n}\ntrap on_term TERM\nrun & wait $!\n").traps
    assert [c.name for c in trap.commands] == ["read", "continue", "break", "kill", "exit"]
    assert not trap.does_work


def test_recursive_function_does_not_loop() -> None:
    (trap,) = analyse("f() { f; g; }\ntrap f TERM\n").traps
    assert [c.name for c in trap.commands] == ["g"]


def test_exec_after_trap() -> None:
    facts = analyse("trap 'ckpt' TERM\nexec >/tmp/log 2>&1\necho hi && exec python train.py\n")
    assert [(c.exec_target, c.loc) for c in facts.execs] == [("python", Loc(2, 11))]


@pytest.mark.parametrize(
    "script",
    [
        "exec python train.py\ntrap 'ckpt' TERM\n",  # exec before the trap: never reached
        "trap 'ckpt' TERM\n( exec python train.py ) & child=$!\nwait $child\n",
        "trap 'ckpt' TERM\nlater() { exec python train.py; }\nrun & wait\n",
        "trap 'ckpt' TERM\nexec 3>&1\nrun & wait\n",
        "trap 'ckpt' TERM\ntrap - TERM\nexec python train.py\n",  # handler removed first
    ],
)
def test_exec_that_keeps_the_trap(script: str) -> None:
    assert analyse(script).execs == ()


def test_generated_supervisor_is_clean() -> None:
    text = SUPERVISOR.read_text(encoding="utf-8")
    facts = analyse(text)
    # 'exit 143' (before the main starts), then pm_on_term, which acts on the TERM from inside
    # the trap; trap '' TERM ignores, no handler
    rows = [i for i, line in enumerate(text.splitlines())
            if line.startswith(("trap 'exit 143' TERM", "trap 'pm_on_term \"$@\"' TERM"))]
    assert [t.loc.row for t in facts.traps] == rows and len(rows) == 2
    assert not any(_exits_zero(t) for t in facts.traps)
    # its only work: the checkpoint command of mode command, in a background subshell
    assert [(c.name, c.args, c.background) for t in facts.traps for c in t.work] == [
        ("exec", ("$@",), True)]
    assert facts.execs == () and facts.foreground == ()


def test_foreground_main_process() -> None:
    facts = analyse(
        "mkdir -p /ckpt\ntrap 'ckpt' TERM\ncd /app && python train.py | tee log\necho done\n"
    )
    assert [c.name for c in facts.foreground][:1] == ["python"]
    assert facts.foreground[0].loc == Loc(2, 11)


@pytest.mark.parametrize(
    "script",
    [
        "trap 'ckpt' TERM\npython train.py & child=$!\nwait \"$child\"\n",
        "trap 'ckpt' TERM\npython prep.py\npython train.py &\nwait\n",  # followed by wait
        "python train.py\ntrap 'ckpt' TERM\nrun & wait\n",  # before the trap
        "trap 'ckpt' TERM\nif true; then run & fi\nwait\n",
        "trap 'ckpt' TERM\nwhile true; do sleep 5; done\n",  # trap runs between sleeps
        "trap 'ckpt' TERM\ntrain & wait $!\naws s3 sync /out s3://b/\n",  # epilogue
    ],
)
def test_not_blocked(script: str) -> None:
    assert analyse(script).foreground == ()


def test_sleep_forever_and_foreground_subshell_block() -> None:
    assert analyse("trap 'ckpt' TERM\nrun &\nsleep infinity\n").foreground
    assert analyse("trap 'ckpt' TERM\n( exec python train.py )\n").foreground


def test_prestop_of() -> None:
    hook = prestop_of({"lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 5"]}}}})
    assert hook is not None and hook.script is not None
    assert hook.script[0] == ("lifecycle", "preStop", "exec", "command", 2)
    assert not hook.does_work and analyse(hook.script[1]).sleeps
    direct = prestop_of({"lifecycle": {"preStop": {"exec": {"command": ["/ckpt", "--now"]}}}})
    assert direct is not None and direct.does_work
    assert prestop_of({"lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}) is not None
    assert prestop_of({"lifecycle": {"preStop": None}}) is None
    assert prestop_of({"lifecycle": "x"}) is None
    broken = prestop_of({"lifecycle": {"preStop": {"exec": {"command": "ckpt"}}}})
    assert broken is not None and not broken.does_work


def test_sleep_zero_does_not_sleep() -> None:
    assert analyse("sleep 0\n").sleeps == ()
    assert analyse("sleep 0.5\n").sleeps


@pytest.mark.parametrize(
    ("name", "args", "paths"),
    [
        ("python", ("/app/ckpt.py", "--out", "/mnt/ckpt", "--config=/cfg/a.yaml"), ("/mnt/ckpt",)),
        ("/usr/bin/save", ("--dir=/scratch/c", "/dev/null", "/proc/1"), ("/scratch/c",)),
        ("cp", ("-r", "/workspace/state", "/mnt/shared/ckpt"), ("/mnt/shared/ckpt",)),
        ("tar", ("-czf", "/home/me/c.tgz", "/workspace"), ("/home/me/c.tgz",)),
        ("save", ("$CKPT_DIR/step", "relative/dir"), ("$CKPT_DIR/step",)),
    ],
)
def test_written_paths(name: str, args: tuple[str, ...], paths: tuple[str, ...]) -> None:
    assert written_paths(Command(name, args, Loc(0, 0))) == paths


def _doc(text: str) -> Document:
    (item,) = list(load_documents(text))
    assert isinstance(item, Loaded)
    return Document("f.yaml", 0, item.data, item.positions, tuple(text.split("\n")))


def test_positions_in_a_literal_block() -> None:
    doc = _doc("a:\n  - |\n    set -e\n      trap x TERM\n")
    assert script_pos(doc, ("a", 0), Loc(1, 2)) == Pos(4, 7)


def test_positions_in_one_line_scalars() -> None:
    doc = _doc(
        "a: [sh, -c, 'x; trap ''y'' TERM; exec z']\n"
        "b: \"q; \\\"w\\\"; exec z\"\n"
        "c: p; exec z\n"
    )
    value = doc.data["a"][2]
    assert script_pos(doc, ("a", 2), Loc(0, value.index("exec"))) == Pos(1, 34)
    assert script_pos(doc, ("b",), Loc(0, doc.data["b"].index("exec"))) == Pos(2, 15)
    assert script_pos(doc, ("c",), Loc(0, 3)) == Pos(3, 7)


def test_positions_fall_back_to_the_scalar_start() -> None:
    doc = _doc("a: >\n  trap x TERM\n  exec z\nb: \"one\n  two\"\n")
    assert script_pos(doc, ("a",), Loc(0, 5)) == Pos(1, 4)
    assert script_pos(doc, ("b",), Loc(0, 5)) == Pos(4, 4)


HOSTILE_PODS = [
    "spec: null",
    "spec: {containers: x}",
    "spec: {containers: [null, 5, x]}",
    "spec: {containers: [{name: 5, command: 5, args: {a: 1}}]}",
    "spec: {containers: [{command: [sh, -c, 5], lifecycle: []}]}",
    "spec: {containers: [{command: [sh, -c], args: [null]}]}",
    "spec: {containers: [{command: [sh, -c, \"trap 'x /a' TERM\"], env: x, volumeMounts: x}]}",
    "spec: {volumes: x, containers: [{command: [sh, -c, \"trap 'x /a' TERM\"],"
    " env: [null, {name: 1}, {name: CKPT_DIR, value: 3}], volumeMounts: [null, {mountPath: 1}]}]}",
    "spec: {terminationGracePeriodSeconds: true, nodeSelector: {together.ai/compute-class:"
    " preemptible}, containers: [{lifecycle: {preStop: {exec: {command: [1, 2]}}}}]}",
    "spec: {terminationGracePeriodSeconds: '300', containers: [{lifecycle: {preStop:"
    " {exec: null, sleep: 5}}}]}",
    "spec: {containers: [{lifecycle: {preStop: {sleep: {seconds: x}}}}]}",
    "spec: {containers: [{command: [sh, -c, \"trap\"], lifecycle: {preStop: x}}]}",
    "spec: {containers: [{command: [sh, -c, \"trap -- 'a' TERM; exec\"]}]}",
    "spec: {containers: [{command: [sh, -c, \"f() { f & }; trap f TERM; f\"]}]}",
]


@pytest.mark.parametrize("spec", HOSTILE_PODS)
def test_checkpoint_rules_never_raise_on_wrong_types(spec: str) -> None:
    from pmanifest.lint.engine import LintOptions, lint_bytes

    manifest = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\n{spec}\n"
    lint_bytes(manifest.encode(), "x.yaml", LintOptions())  # findings or none, never a crash


@pytest.mark.parametrize(
    "script",
    ["", "\x00", "trap '", "'''", "$(", "<<EOF", "trap \"$(trap 'x' TERM)\" TERM", "}{;;&&|",
     "trap 'trap \"exit 0\" TERM' TERM", "\n\n\ttrap\t'x'\tTERM\n", "trap 'é' TERM\n"],
)
def test_broken_scripts_never_raise(script: str) -> None:
    analyse(script)


TOKENS = ["trap", "'x'", '"y"', "TERM", "EXIT", "exec", "wait", "&", ";", "&&", "|", "\n",
          "(", ")", "{", "}", "f()", "<<EOF", "EOF", "$child", "sleep", "exit", "0", " ", "#"]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_token_soup_never_raises(tokens: list[str]) -> None:
    facts = analyse(" ".join(tokens))
    assert all("TERM" in trap.signals for trap in facts.traps)


def test_supervisor_mode() -> None:
    from pmanifest.shell import supervisor_mode

    assert supervisor_mode(["/bin/sh", "-c", "s", "pmanifest-supervisor", "none", "20", "0",
                            "run"]) == "none"
    assert supervisor_mode(["/bin/sh", "-c", "s", "pmanifest-supervisor"]) is None
    assert supervisor_mode(["/bin/sh", "-c", "s", "other", "none"]) is None
    assert supervisor_mode(["python", "-c", "s", "pmanifest-supervisor", "none"]) is None
