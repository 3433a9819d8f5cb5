"""The termination supervisor as PID 1 under every shell, preempted the way a kubelet does it,
in containers taken from ``render_text`` output.

Grace period 3 s, margin 1 s: the supervisor's deadline is 2 s after SIGTERM (1 s after the
hook with a preStop trigger), the kubelet's SIGKILL 3 s after the preemption started.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .containers import rendered
from .kubelet import Outcome, Preemption, Shell, needs_root, run, shells
from .policy import verdict

pytestmark = needs_root

GRACE, MARGIN = 3, 1
DEADLINE = GRACE - MARGIN
PROMPT = 1.5  # "promptly": well before the deadline
PY = sys.executable
HOSTILE = [
    "it's", 'say "hi"', "$(touch PWNED)", "`touch PWNED`", "line1\nline2", "{{ 7 * 7 }}",
    "  two  spaces  ", "", "$HOME", "*", "-n", "\\", "; exit 0", "#hash", "ünïcödé ✓", "--",
    "%s", "'; kill -9 $$; '", "a\tb", "143",
]

_UP = "import json, os, pathlib, signal, sys, time\n"
_READY = "pathlib.Path(os.environ['READY']).touch()\n"
_SAVE = "open(os.environ['CKPT_LOG'], 'a').write('ckpt\\n')\n"
# a main that starts its trainer in a session of its own (as torchrun does) and forwards TERM to
# it itself: each handler logs its run, the trainer's takes 0.5 s to save
_TERM_LINE = "open(os.environ['CKPT_LOG'], 'a').write('term {}\\n')\n"
SESSION_CHILD = (_UP + "def on_term(*_):\n    " + _TERM_LINE.format("child").strip()
                 + "\n    time.sleep(0.5)\n    " + _SAVE.strip() + "\n    sys.exit(0)\n"
                 "signal.signal(signal.SIGTERM, on_term)\n" + _READY + "time.sleep(60)")
MAINS = {
    "sleeps": _UP + _READY + "time.sleep(60)",
    "ignores-term": _UP + "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + _READY
    + "time.sleep(60)",
    # a trainer that saves in its own TERM handler, then exits 0 (as the seed's example does)
    "saves-on-term-exits-0": _UP + "def on_term(*_):\n    " + _SAVE.strip()
    + "\n    sys.exit(0)\nsignal.signal(signal.SIGTERM, on_term)\n" + _READY + "time.sleep(60)",
    "exits-0": "import sys; sys.exit(0)",
    "exits-3": "import sys; sys.exit(3)",
    "dies-of-own-term": "import os, signal, time; os.kill(os.getpid(), signal.SIGTERM); "
    "time.sleep(10)",
    # its argv, and its SigIgn mask (which Python leaves alone for INT, QUIT and TERM)
    "dumps-argv": _UP + "json.dump(sys.argv[1:], open(os.environ['MAIN_OUT'], 'w'))\n"
    "status = open('/proc/self/status').read().split('SigIgn:')[1].split()[0]\n"
    "open(os.environ['MAIN_OUT'] + '.sigign', 'w').write(status)\n" + _READY
    + "time.sleep(60)",
    # a launcher that made a session of its own (setsid) and starts its trainer in it: the
    # trainer is in the main's process group, and forwarded nothing
    "own-session-launcher": _UP + "import subprocess\nos.setsid()\n"
    "sys.exit(subprocess.call([sys.executable, '-c', " + repr(SESSION_CHILD) + "]))\n",
    # forwards TERM to the trainer it started in a session of its own, and exits with it
    "forwards-to-own-session": _UP + "import subprocess\ndef on_term(*_):\n    "
    + _TERM_LINE.format("parent").strip() + "\n    child.send_signal(signal.SIGTERM)\n"
    "signal.signal(signal.SIGTERM, on_term)\n"
    "child = subprocess.Popen([sys.executable, '-c', " + repr(SESSION_CHILD)
    + "], start_new_session=True)\nsys.exit(child.wait())\n",
}
# a trainer whose TERM handler logs its run, saves for 0.5 s and exits 0
_HANDLER_CHILD = (_UP + "def on_term(*_):\n    " + _TERM_LINE.format("child").strip()
                  + "\n    time.sleep(0.5)\n    " + _SAVE.strip() + "\n    sys.exit(0)\n"
                  "signal.signal(signal.SIGTERM, on_term)\ntime.sleep(60)")
MAINS.update({
    # a launcher that forwards TERM to its two trainers in its own process group, as the
    # DeepSpeed launcher does: ready once both have their handler
    "forwarding-launcher": _UP + "import subprocess\nkids = []\ndef on_term(*_):\n"
    "    for k in kids:\n        k.send_signal(signal.SIGTERM)\n"
    "signal.signal(signal.SIGTERM, on_term)\n"
    "kids = [subprocess.Popen([sys.executable, '-c', " + repr(_HANDLER_CHILD) + "])"
    " for _ in range(2)]\n"
    "def handles(p):\n    s = open(f'/proc/{p.pid}/status').read().split('SigCgt:')[1]\n"
    "    return int(s.split()[0], 16) >> 14 & 1\n"
    "while not all(handles(k) for k in kids):\n    time.sleep(0.01)\n" + _READY
    + "sys.exit(max(k.wait() for k in kids))\n",
    # a launcher that signals its whole process group when done (os.killpg(0, SIGTERM)),
    # ignoring the TERM itself, and exits with its trainer's status (TRAINER_EXIT)
    "killpg-survives": _UP + "import subprocess\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "rc = subprocess.call([sys.executable, '-c', 'import os, sys; "
    "sys.exit(int(os.environ[\"TRAINER_EXIT\"]))'])\nos.killpg(0, signal.SIGTERM)\n"
    "time.sleep(0.3)\nsys.exit(rc)\n",
    # the same without ignoring it: the launcher dies of its own group's TERM
    "killpg-dies": _UP + "import subprocess\n"
    "rc = subprocess.call([sys.executable, '-c', 'import os, sys; "
    "sys.exit(int(os.environ[\"TRAINER_EXIT\"]))'])\nos.killpg(0, signal.SIGTERM)\n"
    "time.sleep(5)\nsys.exit(rc)\n",
    # dies at the instant of the TERM (its handler exits 0 at once)
    "exits-at-once-on-term": _UP + "signal.signal(signal.SIGTERM, lambda *_: os._exit(0))\n"
    + _READY + "time.sleep(60)\n",
    # exits 1 once the preStop hook has started checkpointing (its peers vanished)
    "exits-when-hook-starts": _UP + _READY + "while not os.path.exists(os.environ['MARKER']):\n"
    "    time.sleep(0.01)\nsys.exit(1)\n",
    # starts a helper in a session of its own that ignores TERM (a log shipper), then
    # exits at once on TERM
    "own-session-helper": _UP + "import subprocess\nsubprocess.Popen([sys.executable, '-c', "
    "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'],"
    " start_new_session=True)\nsignal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
    + _READY + "time.sleep(60)\n",
})
# the trainer a launcher starts: its handler takes 0.5 s to save, then leaves a marker
CHILD = (_UP + "def on_term(*_):\n    time.sleep(0.5)\n    " + _SAVE.strip()
         + "\n    pathlib.Path(os.environ['MARKER']).write_text('saved')\n    sys.exit(0)\n"
         "signal.signal(signal.SIGTERM, on_term)\n" + _READY + "time.sleep(60)")
CHECKPOINTS = {
    "quick": _UP + _SAVE,
    "half-second": _UP + _SAVE + "time.sleep(0.5)",
    "slow": _UP + _SAVE + "time.sleep(30)\nopen(os.environ['CKPT_LOG'], 'a').write('done\\n')",
    "fails": _UP + _SAVE + "sys.exit(5)",
    "dumps-argv": _UP + _SAVE + "json.dump(sys.argv[1:], open(os.environ['CKPT_OUT'], 'w'))",
    # starts, lets the main see it (MARKER), then saves for 1 s
    "marks-then-saves": _UP + "pathlib.Path(os.environ['MARKER']).touch()\ntime.sleep(1)\n"
    + _SAVE,
}
# a checkpoint that saves, then puts its upload (0.7 s) in the background and exits
UPLOADS = ["/bin/sh", "-c", 'echo ckpt >> "$CKPT_LOG"; '
           '(sleep 0.7; echo uploaded >> "$CKPT_LOG") & echo started upload']
LIVENESS = {"liveness": {"exec": {"command": ["true"]}, "periodSeconds": 10}}


@dataclass(frozen=True)
class Scenario:
    name: str
    mode: str
    main: str  # a key of MAINS, or "launcher"
    exit_code: int
    seconds: tuple[float, float]  # [low, high)
    checkpoints: int
    checkpoint: str | None = None  # a key of CHECKPOINTS
    preemption: Preemption | None = field(default_factory=Preemption)
    extra: Callable[[Path, Outcome], None] | None = None
    # what the rendered podFailurePolicy concludes without / with DisruptionTarget; None: by
    # the exit code (143 ignored either way, 0 succeeded, any other counted unless the pod
    # has DisruptionTarget)
    verdicts: tuple[str, str] | None = None
    probes: dict[str, Any] | None = None
    trainer_exit: int = 0  # TRAINER_EXIT of the killpg launchers
    repeat: int = 1  # runs per shell (races)

    def expected_verdicts(self) -> tuple[str, str]:
        if self.verdicts is not None:
            return self.verdicts
        if self.exit_code == 0:
            return "succeeded", "succeeded"
        return ("ignored" if self.exit_code == 143 else "counted"), "ignored"


def _launcher_ran_child_handler(work: Path, outcome: Outcome) -> None:
    assert (work / "marker").read_text() == "saved"


def _checkpoint_cut_at_deadline(work: Path, outcome: Outcome) -> None:
    assert "done" not in (work / "ckpt.log").read_text()
    assert "deadline reached" in outcome.stderr


def _failure_reported(work: Path, outcome: Outcome) -> None:
    assert "checkpoint command failed with status 5" in outcome.stderr


def _main_never_started(work: Path, outcome: Outcome) -> None:
    assert not (work / "ready").exists()


def _distinct_code_explained(work: Path, outcome: Outcome) -> None:
    assert "exited 143 (SIGTERM) without a termination" in outcome.stderr


def _each_handler_once(work: Path, outcome: Outcome) -> None:
    lines = (work / "ckpt.log").read_text().splitlines()
    assert sorted(line for line in lines if line.startswith("term ")) == [
        "term child", "term parent"], lines


def _trainer_handler_once(work: Path, outcome: Outcome) -> None:
    lines = (work / "ckpt.log").read_text().splitlines()
    assert lines == ["term child", "ckpt"], lines


def _each_trainer_handler_once(work: Path, outcome: Outcome) -> None:
    lines = (work / "ckpt.log").read_text().splitlines()
    assert sorted(lines) == ["ckpt", "ckpt", "term child", "term child"], lines


def _hook_finished(work: Path, outcome: Outcome) -> None:
    assert "waiting for the kubelet's SIGTERM" in outcome.stderr


def _hook_cut(work: Path, outcome: Outcome) -> None:
    assert "done" not in (work / "ckpt.log").read_text()


def _internal_term_explained(work: Path, outcome: Outcome) -> None:
    assert "SIGTERM without the preStop hook's mark" in outcome.stderr


def _upload_finished(work: Path, outcome: Outcome) -> None:
    assert (work / "ckpt.log").read_text().splitlines() == ["ckpt", "uploaded"], outcome.stderr


def _argv_and_signals(work: Path, outcome: Outcome) -> None:
    assert json.loads((work / "main.json").read_text()) == HOSTILE
    assert json.loads((work / "ckpt.json").read_text()) == HOSTILE
    assert not (work / "PWNED").exists()
    ignored = int((work / "main.json.sigign").read_text(), 16)
    mask = sum(1 << (s - 1) for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM))
    assert ignored & mask == mask - (1 << (signal.SIGTERM - 1))  # INT, QUIT: yes; TERM: no


SCENARIOS = [
    Scenario("ignores-term", "command", "ignores-term", 143, (DEADLINE, GRACE), 1, "quick"),
    Scenario("ignores-term-signal", "signal", "ignores-term", 143, (DEADLINE, GRACE), 0),
    # the hook's checkpoint, then the margin (1 s) for the main
    Scenario("ignores-term-prestop", "prestop", "ignores-term", 143, (MARGIN, GRACE), 1,
             "quick"),
    Scenario("handles-term-exits-0", "signal", "saves-on-term-exits-0", 143, (0, PROMPT), 1),
    Scenario("exits-0", "none", "exits-0", 0, (0, PROMPT), 0, preemption=None),
    Scenario("exits-3", "none", "exits-3", 3, (0, PROMPT), 0, preemption=None),
    Scenario("own-term", "none", "dies-of-own-term", 43, (0, PROMPT), 0, preemption=None,
             extra=_distinct_code_explained),
    Scenario("launcher", "signal", "launcher", 143, (0.5, DEADLINE), 1,
             extra=_launcher_ran_child_handler),
    Scenario("own-session-child", "signal", "forwards-to-own-session", 143, (0.5, DEADLINE), 1,
             extra=_each_handler_once),
    Scenario("own-session-main", "signal", "own-session-launcher", 143, (0.5, DEADLINE), 1,
             extra=_trainer_handler_once),
    Scenario("slow-checkpoint", "command", "sleeps", 143, (DEADLINE, GRACE), 1, "slow",
             extra=_checkpoint_cut_at_deadline),
    Scenario("failing-checkpoint", "command", "sleeps", 143, (0, PROMPT), 1, "fails",
             extra=_failure_reported),
    Scenario("term-twice", "command", "sleeps", 143, (0.5, PROMPT), 1, "half-second",
             preemption=Preemption(term_twice=True)),
    Scenario("term-before-main", "command", "sleeps", 143, (0, PROMPT), 0, "quick",
             preemption=Preemption(before_main=True), extra=_main_never_started),
    Scenario("term-after-fork", "command", "sleeps", 143, (0, PROMPT), 1, "quick",
             preemption=Preemption(after_fork=True), repeat=20),
    Scenario("prestop-exec-python", "prestop", "sleeps", 143, (0.5, PROMPT), 1, "half-second"),
    Scenario("argv-and-signals", "command", "dumps-argv", 143, (0, PROMPT), 1, "dumps-argv",
             extra=_argv_and_signals),
    # issue 23, item 2: a TERM from inside the container is no termination; a liveness kill
    # (preStop, then TERM, like a preemption) is one, and counts where the pod has no
    # DisruptionTarget because the policy has no exit-code fallback for a probed container
    Scenario("killpg-exit-0", "command", "killpg-survives", 0, (0, PROMPT), 0, "quick",
             preemption=None, extra=_internal_term_explained),
    Scenario("killpg-exit-3", "command", "killpg-survives", 3, (0, PROMPT), 0, "quick",
             preemption=None, trainer_exit=3),
    Scenario("killpg-dies", "signal", "killpg-dies", 43, (0, PROMPT), 0, preemption=None),
    Scenario("kill-0-launcher", "signal", "kill-0-launcher", 43, (0, PROMPT), 0,
             preemption=None, repeat=20),
    Scenario("liveness-kill", "command", "sleeps", 143, (0, PROMPT), 1, "quick",
             probes=LIVENESS, verdicts=("counted", "ignored")),
    # item 3: the main exits while the hook checkpoints: the hook ends, the outcome is 143
    Scenario("main-exits-during-hook", "prestop", "exits-when-hook-starts", 143, (1, 2), 1,
             "marks-then-saves", extra=_hook_finished, repeat=20),
    # item 4: a hook slower than the grace period is cut at gracePeriod - margin
    Scenario("hook-overruns", "prestop", "sleeps", 143, (DEADLINE, GRACE), 1, "slow",
             extra=_hook_cut),
    # item 5: a launcher that forwards TERM to its trainers in its own group
    Scenario("forwarding-launcher", "signal", "forwarding-launcher", 143, (0.5, DEADLINE), 2,
             extra=_each_trainer_handler_once, repeat=20),
    # item 7: the main dies at the instant of the TERM; a helper ignoring TERM in a session
    # of its own is not waited for
    Scenario("term-to-all", "signal", "exits-at-once-on-term", 143, (0, PROMPT), 0,
             preemption=Preemption(term_all=True), repeat=20),
    Scenario("own-session-helper", "signal", "own-session-helper", 143, (0, PROMPT), 0),
    # item 9: what the checkpoint command put in the background finishes
    Scenario("background-upload", "command", "sleeps", 143, (0.7, DEADLINE), 1, "uploads",
             extra=_upload_finished),
]


def _main_argv(scenario: Scenario, work: Path) -> list[str]:
    if scenario.main == "launcher":
        launcher = work / "train.sh"
        launcher.write_text("#!/bin/bash\n# a launcher: the trainer runs in the foreground\n"
                            f"{shlex.quote(PY)} -c {shlex.quote(CHILD)}\n"
                            'echo "launcher: trainer exited $?"\n')
        return ["bash", str(launcher)]
    if scenario.main == "kill-0-launcher":
        launcher = work / "train.sh"
        launcher.write_text("#!/bin/bash\n# cleans up its process group on the way out\n"
                            "trap 'kill 0' EXIT\n"
                            f"{shlex.quote(PY)} -c 'import pathlib, os; "
                            "pathlib.Path(os.environ[\"READY\"]).touch()'\n")
        return ["bash", str(launcher)]
    extra = HOSTILE if scenario.main == "dumps-argv" else []
    return [PY, "-c", MAINS[scenario.main], *extra]


def _container(scenario: Scenario, work: Path) -> tuple[dict[str, Any], int, dict[str, Any]]:
    checkpoint = None
    if scenario.checkpoint == "uploads":
        checkpoint = UPLOADS
    elif scenario.checkpoint is not None:
        extra = HOSTILE if scenario.checkpoint == "dumps-argv" else []
        checkpoint = [PY, "-c", CHECKPOINTS[scenario.checkpoint], *extra]
    env = {name: str(work / file) for name, file in [
        ("READY", "ready"), ("CKPT_LOG", "ckpt.log"), ("MARKER", "marker"),
        ("MAIN_OUT", "main.json"), ("CKPT_OUT", "ckpt.json")]}
    env["TRAINER_EXIT"] = str(scenario.trainer_exit)
    return rendered(_main_argv(scenario, work), mode=scenario.mode, grace=GRACE,
                    margin=MARGIN, checkpoint=checkpoint, env=env, probes=scenario.probes)


def run_scenario(scenario: Scenario, shell: Shell, work: Path
                 ) -> tuple[Outcome, dict[str, Any]]:
    """The outcome of one run, and the rendered Job (to judge its podFailurePolicy)."""
    preemption = scenario.preemption
    if preemption is not None and not (preemption.before_main or preemption.after_fork):
        preemption = dataclasses.replace(preemption, ready=work / "ready")
    container, grace, job = _container(scenario, work)
    assert grace == (GRACE if scenario.mode != "none" else 30)
    return run(container, shell, work, grace=grace, preemption=preemption,
               checkpoint_log=work / "ckpt.log"), job


def check(scenario: Scenario, work: Path, outcome: Outcome, job: dict[str, Any]) -> None:
    low, high = scenario.seconds
    assert (outcome.exit_code, outcome.checkpoints, outcome.survivors) == (
        scenario.exit_code, scenario.checkpoints, ()), outcome.stderr
    assert low <= outcome.seconds < high, outcome
    assert not outcome.kubelet_killed
    if scenario.extra is not None:
        scenario.extra(work, outcome)
    judged = tuple(verdict(job, "w", outcome.exit_code, disruption_target=target)
                   for target in (False, True))
    assert judged == scenario.expected_verdicts()


@pytest.mark.parametrize("shell", shells(), ids=str)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, shell: Shell, tmp_path: Path) -> None:
    outcome, job = run_scenario(scenario, shell, tmp_path)
    check(scenario, tmp_path, outcome, job)


RACES = [s for s in SCENARIOS if s.repeat > 1]


@pytest.mark.parametrize("shell", shells(), ids=str)
@pytest.mark.parametrize("scenario", RACES, ids=lambda s: s.name)
def test_race_holds_every_time(scenario: Scenario, shell: Shell, tmp_path: Path) -> None:
    """The races, run ``repeat`` times more (the scenario test is one run)."""
    for attempt in range(scenario.repeat):
        work = tmp_path / str(attempt)
        work.mkdir()
        outcome, job = run_scenario(scenario, shell, work)
        check(scenario, work, outcome, job)
