"""The fuzzer in the suite (issue 24): every entry point, every kind of input pmanifest reads,
hostile bytes planted into real files, and the promises checked on each run:

- the exit code is 0, 1 or 2 (never 3, an internal error; never a crash);
- no traceback, on either stream;
- exit 2 says why in one line on stderr naming the file it is about, and writes nothing on
  stdout (no half report, no half manifest);
- nothing from input reaches a terminal raw (an escape sequence, a carriage return, a
  bidirectional override), on either stream, in any format;
- time is bounded (``TIME_LIMIT_S`` a run), and so is memory: in real processes under an
  address-space cap (``MEMORY_CAP``, set with setrlimit in the child).

Inputs are the project's own examples (specs, manifests and the realistic repository's, JSON,
configs, saved command lines, cluster requests and reads, events, policies), each changed by
up to three mutations: a hostile piece inserted, a value replaced by one, the text cut short.
Runs are in-process (click's CliRunner) but for the memory and signal promises.
Deterministic (``derandomize``) and time-boxed (``max_examples``): CI runs every example of
every test each time, well within a minute of CPU; ``-m "not slow"`` a quarter of them.
Inputs that once broke a promise are kept as ``@example``s.
``PMANIFEST_FUZZ_EXAMPLES=N`` runs N examples a test instead of 40, for a deeper run by hand.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pmanifest.cli.main import main
from tests.hostile.conftest import TIME_LIMIT_S
from tests.hostile.corpus import BASE, PREEMPTIBLE_POD
from tests.hypothesis_profiles import examples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MEMORY_CAP = 2 << 30  # bytes of address space a real run may take (RLIMIT_AS)

# -- inputs ------------------------------------------------------------------------------------

_JOB_JSON = json.dumps({
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
    "spec": {"template": {"spec": {
        "restartPolicy": "Never", "terminationGracePeriodSeconds": 900,
        "nodeSelector": {"together.ai/compute-class": "preemptible"},
        "containers": [{"name": "main", "image": "busybox",
                        "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}}, indent=1)


def _example(*parts: str) -> bytes:
    return (EXAMPLES.joinpath(*parts)).read_bytes()


SEEDS: dict[str, list[bytes]] = {
    "manifest": [BASE.encode(), PREEMPTIBLE_POD.encode(), _JOB_JSON.encode(),
                 _example("lint", "llama-8b.yaml"),  # and the realistic repository's files
                 *(p.read_bytes() for p in sorted((ROOT / "tests" / "corpus" / "repo").rglob(
                     "*.yaml")))],
    "spec": [_example("finetune-sigterm.yaml"), _example("serving.yaml")],
    "config": [b"profile: gke\nkubernetesVersion: '1.31'\nfailOn: warning\n"
               b"rules: {PM302: off, grace-period-over-limit: warning}\n"
               b"roles: {example.com/Trainer: worker}\ninlineSuppressions: true\n"],
    "request": [_example("cluster", name) for name in (
        "create-command.sh", "create-request.json", "cluster-read.json", "update-request.json")],
    "events": [_example("cluster", name) for name in ("kubectl-events.json", "aks-events.json")],
    "policy": [_example("policies", name) for name in ("gpu-jobs.yaml", "serving-images.yaml")],
}

HOSTILE: list[bytes] = [
    b"0x" + b"f" * 4400, b"0o" + b"7" * 4400, b"1" * 5000, b"1:" * 2200 + b"1",  # huge integers
    b"18446744073709551616", b"99999999999999999999Gi", b"1e304", b"1e999", b".nan", b"-.inf",
    b"nan", b"-1", b"0", b"\x1b[31m", b"\r", b"\xe2\x80\xa8", b"\x0b", b"\x0c", b"\xc2\x85",
    b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\xe2\x80\xae", b"&a [*a, *a, *a]", b"*a",
    b"<<: *a", b"[" * 260, b"{a: " * 120, b"- " * 150, b"!!python/object/apply:os.system [x]",
    b"!Ref x", b"{{ .Values.x }}", b"{% for i in range(9) %}", b"---\n", b"...\n",
    b"%YAML 1.1\n", b"\t", b"'", b'"', b"\\", b"\n", b": ", b"#", b"# pmanifest: ignore=PM201",
    b"$(echo x)", b"`x`", b"a=(", b"trap 'exit 0' TERM; ", b"\"\\ud800\"", b"~", b"null",
    b"true", b"[]", b"{}", b"''",
]
_PIECE = st.sampled_from(HOSTILE)
_AT = st.integers(0, 10_000)  # where, in ten-thousandths of the text
_OPS = st.lists(st.one_of(
    st.tuples(st.just("insert"), _AT, _PIECE),
    st.tuples(st.just("value"), _AT, _PIECE),
    st.tuples(st.just("cut"), _AT, st.just(b"")),
), max_size=3)


def mutate(raw: bytes, ops: Sequence[tuple[str, int, bytes]]) -> bytes:
    """``raw`` with each mutation applied in turn: a piece inserted at a place, the value of
    a ``key: value`` line (or a JSON member) replaced by the piece, the text cut at a place."""
    for op, at, piece in ops:
        where = len(raw) * at // 10_000
        if op == "insert":
            raw = raw[:where] + piece + raw[where:]
        elif op == "cut":
            raw = raw[:where]
        else:
            lines = raw.split(b"\n")
            keyed = [i for i, line in enumerate(lines) if b": " in line]
            if keyed:
                i = keyed[at * len(keyed) // 10_001]
                key = lines[i].split(b": ", 1)[0]
                lines[i] = key + b": " + piece + (b"," if lines[i].rstrip().endswith(b",")
                                                   else b"")
                raw = b"\n".join(lines)
    return raw


def inputs(kind: str) -> st.SearchStrategy[bytes]:
    """A seed of ``kind`` with up to three mutations."""
    return st.builds(mutate, st.sampled_from(SEEDS[kind]), _OPS)


# -- the promises ------------------------------------------------------------------------------

def check(args: list[str], files: dict[str, bytes], stdin: bytes | None = None,
          names: Sequence[str] = ()) -> int:
    """Write ``files`` into a new directory, run ``pmanifest ARGS`` there in-process, check
    every promise; the exit code. ``names``: what an error may name (default: the files)."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        try:
            for name, raw in files.items():
                Path(name).parent.mkdir(parents=True, exist_ok=True)
                Path(name).write_bytes(raw)
            start = time.monotonic()
            result = CliRunner().invoke(main, args, input=stdin)
            elapsed = time.monotonic() - start
        finally:
            os.chdir(here)
    _promised(result.exit_code, result.stdout_bytes, result.stderr_bytes, list(names or files))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert elapsed < TIME_LIMIT_S, f"took {elapsed:.1f} s"
    return result.exit_code


def _promised(code: int, stdout: bytes, stderr: bytes, names: list[str]) -> None:
    err = stderr.decode("utf-8", "replace")
    assert code in (0, 1, 2), f"exit {code}: {err[-2000:]}"
    assert b"Traceback" not in stdout + stderr, err[-2000:]
    for raw in (b"\x1b", b"\r", "\x9b".encode(), "\u202e".encode()):  # what a terminal acts
        assert raw not in stderr, err[-2000:]  # on, from input: escaped in every report and
        assert raw not in stdout, stdout[-2000:]  # message (JSON and YAML escape it too)
    if code == 2:
        last = err.rstrip("\n").rsplit("\n", 1)[-1]
        assert last, "exit 2 without a word"
        assert any(name in last for name in names), f"the error names no input: {last!r}"
        assert not stdout, f"exit 2 with something on stdout: {stdout[:300]!r}"


# -- every entry point ---------------------------------------------------------------------------

# PMANIFEST_FUZZ_EXAMPLES=1000 for a deeper run by hand (still derandomized: the same inputs);
# the fast subset runs a quarter (tests/hypothesis_profiles.py)
EXAMPLES_PER_TEST = int(os.environ.get("PMANIFEST_FUZZ_EXAMPLES", str(examples(40))))
FUZZ = settings(max_examples=EXAMPLES_PER_TEST, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(inputs("manifest"), st.sampled_from(["m.yaml", "m.json", "-"]),
       st.sampled_from(["text", "json", "sarif", "junit", "github"]))
@example(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 0x" + b"f" * 5000
         + b"}\n", "m.yaml", "text")  # issue 24: exit 3 on a hex integer past 4,300 digits
@example(b'[{"kind": "Pod"' + b', "x": 1' * 4000 + b"}]" * 1, "m.json", "json")
def test_lint(raw: bytes, name: str, fmt: str) -> None:
    path = ["-"] if name == "-" else [name]
    check(["lint", "--allow-empty", "--format", fmt, *path],
          {} if name == "-" else {name: raw}, stdin=raw if name == "-" else None,
          names=["<stdin>"] if name == "-" else [name])


@FUZZ
@given(inputs("manifest"), st.sampled_from(["--fix", "--diff"]))
def test_lint_fix_and_diff(raw: bytes, how: str) -> None:
    check(["lint", "--allow-empty", how, "m.yaml"], {"m.yaml": raw})


@FUZZ
@given(inputs("spec"))
@example(_example("finetune-sigterm.yaml").replace(b"gpus: 8", b"gpus: 0x" + b"f" * 4400))
@example(_example("serving.yaml") + b"\n  memory: 99999999999999999999Gi\n")
def test_render(raw: bytes) -> None:
    check(["render", "-f", "spec.yaml"], {"spec.yaml": raw})
    check(["render", "-f", "-", "-O", "out.json"], {}, stdin=raw, names=["<stdin>", "stdin"])


@functools.cache
def _rendered(spec: str) -> bytes:
    result = CliRunner().invoke(main, ["render", "-f", str(EXAMPLES / spec)])
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


@FUZZ
@given(st.sampled_from(["finetune-sigterm.yaml", "serving.yaml"]), _OPS)
@example("serving.yaml", [("insert", 0, b"\x1b[31m")])  # found here: the diff showed it raw
@example("serving.yaml", [("insert", 5000, b"\r")])  # and split the line at a bare CR
def test_render_check(spec: str, ops: list[tuple[str, int, bytes]]) -> None:
    rendered = _rendered(spec)
    code = check(["render", "-f", "spec.yaml", "--check", "rendered.yaml"],
                 {"spec.yaml": _example(spec), "rendered.yaml": mutate(rendered, ops)})
    if not ops:
        assert code == 0


@FUZZ
@given(inputs("request"), st.sampled_from(["text", "json"]))
@example(b"# saved\rtg beta clusters create --num-gpus 8\n", "text")  # issue 24: IndexError
@example(b"tg beta clusters create --num-gpus " + b"9" * 5000 + b"\n", "text")  # exit 3
@example(b"# saved\xe2\x80\xa8tg beta clusters create --num-gpus 8\n", "text")
@example(b'{"allocated_preemptible_gpus": 1e304, "num_gpus": 8}', "json")  # OverflowError
def test_cluster_check(raw: bytes, fmt: str) -> None:
    check(["cluster", "check", "--format", fmt, "request"], {"request": raw})


@FUZZ
@given(inputs("request"), inputs("manifest"))
def test_lint_with_a_cluster(request: bytes, manifest: bytes) -> None:
    check(["lint", "--allow-empty", "--cluster", "request", "m.yaml"],
          {"request": request, "m.yaml": manifest})


@FUZZ
@given(inputs("events"), st.sampled_from(["text", "json"]), st.booleans())
@example(_example("cluster", "kubectl-events.json").replace(  # issue 24: raw on the terminal
    b'"gpu-preemptible-dp-p5z2k"', b'"\\u001b[2J\\r\\ngpu-\\u202e' + b"x" * 100_000 + b'"'),
    "text", True)  # (and a row padded to a 100,000-character name: the events table)
def test_cluster_events(raw: bytes, fmt: str, plot: bool) -> None:
    check(["cluster", "events", "--format", fmt, "--checkpoint-seconds", "90", "events.json",
           *(["--plot", "timeline.svg"] if plot else [])], {"events.json": raw})


@FUZZ
@given(inputs("policy"))
@example(b"id: ACME001\nslug: deep\nseverity: error\nsummary: s\nrationale: r\nfix: f\n"
         b"target: object\nschema: " + b"{not: " * 150 + b"{required: [x]}" + b"}" * 150
         + b"\n")  # issue 24: RecursionError, a schema 95-190 levels deep
def test_policy_test_and_explain(raw: bytes) -> None:
    files = {"pol/p.yaml": raw}
    check(["policy", "test", "pol"], files, names=["pol"])
    check(["explain", "PM201", "--policies", "pol"], files, names=["pol"])
    check(["lint", "--allow-empty", "--policies", "pol", "m.yaml"],
          {**files, "m.yaml": BASE.encode()}, names=["pol", "m.yaml"])


@FUZZ
@given(inputs("config"), st.sampled_from([".pmanifest.yaml", "pyproject.toml"]))
@example(b"[tool.pmanifest]\nprofile = 0x" + b"f" * 5000 + b"\n", "pyproject.toml")
def test_config_of_every_command(raw: bytes, name: str) -> None:
    if name == "pyproject.toml" and not raw.startswith(b"[tool"):  # a TOML table of its keys
        raw = b"[tool.pmanifest]\n" + raw.replace(b": ", b" = ")
    files = {name: raw, "m.yaml": BASE.encode(), "spec.yaml": _example("serving.yaml")}
    check(["lint", "--allow-empty", "m.yaml"], files, names=[name, "m.yaml"])
    check(["render", "-f", "spec.yaml"], files, names=[name, "spec.yaml"])
    check(["export", "admission"], files, names=[name])
    check(["explain", "PM201"], files, names=[name])


# -- real processes: memory under a cap, time, signals -------------------------------------------

def _capped() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


def _real(args: list[str], cwd: Path, stdin: bytes | None = None,
          during: Callable[[subprocess.Popen[bytes]], None] | None = None) -> tuple[int, bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "pmanifest", *args], cwd=cwd,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_capped,
                            env={**os.environ, "NO_COLOR": "1"})
    if during is not None:
        during(proc)
    _, stderr = proc.communicate(stdin, timeout=120)
    return proc.returncode, stderr


REAL = settings(max_examples=6, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.mark.slow
@REAL
@given(kind=st.sampled_from(["manifest", "spec", "events"]), data=st.data())
def test_real_runs_under_a_memory_cap(tmp_path: Path, kind: str, data: Any) -> None:
    raw = data.draw(inputs(kind))
    (tmp_path / "in").write_bytes(raw)
    args = {"manifest": ["lint", "--allow-empty", "in"], "spec": ["render", "-f", "in"],
            "events": ["cluster", "events", "in"]}[kind]
    code, stderr = _real(args, tmp_path)
    _promised(code, b"", stderr, ["in"])


@pytest.mark.slow
@REAL
@given(delay=st.integers(0, 300), data=st.data())
def test_sigterm_at_any_moment_ends_quietly(tmp_path: Path, delay: int, data: Any) -> None:
    """Whenever SIGTERM comes (start-up, reading, linting, writing), the run ends with the
    code a shell reports for it or the one it had finished with, and says nothing more."""
    raw = data.draw(inputs("manifest"))
    (tmp_path / "m.yaml").write_bytes(raw)

    def terminate(proc: subprocess.Popen[bytes]) -> None:
        time.sleep(delay / 1000)
        proc.send_signal(signal.SIGTERM)

    code, stderr = _real(["lint", "--allow-empty", "m.yaml"], tmp_path, during=terminate)
    if code in (143, -signal.SIGTERM):
        assert b"Traceback" not in stderr
    else:
        _promised(code, b"", stderr, ["m.yaml"])
