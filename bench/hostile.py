"""Time and peak memory of ``pmanifest`` on the hostile inputs of issue 15 whose cost had no
bound (items 3, 4, 5, 9, 10, 11, 26, 28), and of issue 24 (lines ``24.*``: the events table,
config and policy files past the cap, shell inlining and parsing, findings on one line of
JSON, ``render --check`` of a reordered file, a ``--jobs`` worker killed and SIGTERM to
the parent of one), one line per input, showing the bound that now
holds and, in parentheses, what the same input cost before (commit 46ffbe4, on the shared
2-CPU development machine).

    python bench/hostile.py
    python bench/hostile.py --only 24     # the sections of one issue

Each input runs in a real process under ``/usr/bin/time -v`` (peak RSS from there, or from
``getrusage`` without it). Nothing here asserts a time: it prints figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PMANIFEST = [sys.executable, "-m", "pmanifest"]
TIME_BIN = "/usr/bin/time"
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: t}
spec:
  podFailurePolicy:
    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      terminationGracePeriodSeconds: 300
      containers:
        - name: main
          image: busybox
          command: [sh, -c, SCRIPT]
"""
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: "
       "[{name: a, image: b}]\n")


def measure(args: list[str], cwd: Path, **popen: object) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MB) of ``python -m pmanifest ARGS``."""
    command = [*PMANIFEST, *args]
    start = time.monotonic()
    if os.path.exists(TIME_BIN):
        proc = subprocess.run([TIME_BIN, "-v", *command], cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False, **popen)  # type: ignore[call-overload]
        elapsed = time.monotonic() - start
        found = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        peak = int(found.group(1)) / 1024 if found else float("nan")
        return proc.returncode, elapsed, peak
    proc = subprocess.run(command, cwd=cwd, capture_output=True, check=False,  # type: ignore[call-overload]
                          **popen)
    elapsed = time.monotonic() - start
    return proc.returncode, elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _job(script: str) -> str:
    return JOB.replace("SCRIPT", json.dumps(script))


def _doubling(levels: int) -> str:
    return ("".join(f"f{i}() {{ f{i + 1}; f{i + 1}; }}\n" for i in range(levels))
            + f"f{levels}() {{ echo hi; }}\ntrap 'f0; exit 143' TERM\nf0\n"
            "python t.py & wait $!\n")


def shell_inlining(work: Path) -> Iterator[str]:
    for levels in (10, 20, 40):
        path = work / f"doubling-{levels}.yaml"
        path.write_text(_job(_doubling(levels)))
        code, seconds, peak = measure(["lint", path.name], work)
        yield (f"5 shell inlining: f0..f{levels} each calling the next twice (2^{levels + 1} "
               f"calls), {path.stat().st_size} B Job: {seconds:.2f} s, peak {peak:.0f} MB, "
               f"exit {code} (issue 15: 44 s and 585 MB at 20 levels)")


def shell_nesting(work: Path) -> Iterator[str]:
    scripts = {
        "&& chain": " && ".join(["true"] * 1000),
        "subshells": "(" * 1000 + "true" + ")" * 1000,
        "$(...)": "echo " + "$(echo " * 1000 + "x" + ")" * 1000,
        "if": "if true; then " * 1000 + "true" + "; fi" * 1000,
    }
    for name, script in scripts.items():
        path = work / "nested.yaml"
        path.write_text(_job(script))
        code, seconds, peak = measure(["lint", path.name], work)
        yield (f"11 shell nesting: {name} 1,000 deep: {seconds:.2f} s, peak {peak:.0f} MB, "
               f"exit {code} (was RecursionError, exit 3)")


@contextlib.contextmanager
def _endless_fifo(path: Path) -> Iterator[None]:
    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_WRONLY)
            with contextlib.suppress(OSError), os.fdopen(fd, "wb") as handle:
                while not stop.is_set():
                    handle.write(b"\0" * 65536)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=10)


def endless_inputs(work: Path) -> Iterator[str]:
    device = work / "zero.yaml"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # like /dev/zero
        code, seconds, peak = measure(["lint", device.name], work)
        yield (f"9 endless input: a character device (1, 5) named to lint: {seconds:.2f} s, "
               f"peak {peak:.0f} MB, exit {code} (was 5 GB in 5 s, unbounded)")
    except PermissionError:
        yield "9 endless input: (mknod needs root: the device case is not measured here)"
    for args, what in ((["lint", "fifo.yaml"], "lint"),
                       (["render", "-f", "fifo.yaml"], "render -f")):
        with _endless_fifo(work / "fifo.yaml"):
            code, seconds, peak = measure(args, work)
        (work / "fifo.yaml").unlink()
        yield (f"9 endless input: a FIFO of zeros to {what}: {seconds:.2f} s, peak {peak:.0f} MB, "
               f"exit {code} (read up to the 64 MiB cap)")
    yield from cluster_inputs(work)


def cluster_inputs(work: Path) -> Iterator[str]:
    """Cluster requests and event files: read whole before (11-14 GB from /dev/zero)."""
    shutil.copy(ROOT / "examples" / "finetune-sigterm.yaml", work / "spec.yaml")
    (work / "pod.yaml").write_text(POD)
    commands = {"lint --cluster": ["lint", "pod.yaml", "--cluster", "c.json"],
                "render --cluster": ["render", "-f", "spec.yaml", "--cluster", "c.json"],
                "cluster check": ["cluster", "check", "c.json"],
                "cluster events": ["cluster", "events", "c.json"]}
    device = work / "c.json"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        code, seconds, peak = measure(commands["cluster events"], work)
        device.unlink()
        yield (f"9 endless input: a character device (1, 5) to cluster events: {seconds:.2f} s, "
               f"peak {peak:.0f} MB, exit {code} (refused unread; was 11-14 GB)")
    except PermissionError:
        yield "9 endless input: (mknod needs root: the cluster device case is not measured here)"
    for what, args in commands.items():
        with _endless_fifo(device):
            code, seconds, peak = measure(args, work)
        device.unlink()
        yield (f"9 endless input: a FIFO of zeros to {what}: {seconds:.2f} s, peak {peak:.0f} MB, "
               f"exit {code} (read up to the 64 MiB cap; was unbounded)")


def template_budgets(work: Path) -> Iterator[str]:
    shutil.copy(ROOT / "examples" / "finetune-sigterm.yaml", work / "spec.yaml")
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    cases = {
        "two nested loops of 100,000": "{% for i in range(100000) %}{% for j in range(100000) "
                                       "%}{% endfor %}{% endfor %}\n",
        "30,000 lines of output": "{% for i in range(30000) %}\n# " + "x" * 100
                                  + "\n{% endfor %}\n",
        "a string doubled 40 times": "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
                                     "{% set ns.s = ns.s ~ ns.s %}{% endfor %}\n",
        "constant ('x'|center(2999999999))|length (was exit 0 at 2.9 GB)":
            "data: {a: \"{{ ('x'|center(2999999999))|length }}\"}\n",
        "two constant center(1000000000)|wordcount (was 27 s)":
            "data: {a: \"{{ ('x'|center(1000000000))|wordcount }}"
            "{{ ('x'|center(1000000000))|wordcount }}\"}\n",
        "a million expressions to compile (was 57 s and 5 GB)":
            "{% if false %}" + "{{ 1 }}" * 1_000_000 + "{% endif %}\n",
    }
    for name, body in cases.items():
        templates = work / "templates"
        templates.mkdir(exist_ok=True)
        (templates / "job.yaml.j2").write_text(head + body)
        code, seconds, peak = measure(["render", "-f", "spec.yaml", "--templates",
                                       "templates"], work)
        yield (f"10 template budget: {name}: {seconds:.2f} s, peak {peak:.0f} MB, exit {code} "
               "(budgets: 5 s per object, 2 MiB per template, 256 MiB of memory)")


def _children(pid: int) -> int:
    """How many processes have ``pid`` as parent (from /proc)."""
    count = 0
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError, ValueError), \
                open(f"/proc/{entry}/stat") as handle:
            count += int(handle.read().rsplit(")", 1)[1].split()[1]) == pid
    return count


def jobs_cap(work: Path) -> Iterator[str]:
    tree = work / "tree"
    tree.mkdir()
    for i in range(2000):
        (tree / f"p{i:04}.yaml").write_text(POD)
    start = time.monotonic()
    proc = subprocess.Popen([*PMANIFEST, "lint", "--jobs", "100000", "tree"], cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = 0
    while proc.poll() is None:
        most = max(most, _children(proc.pid))
        time.sleep(0.02)
    seconds = time.monotonic() - start
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    yield (f"28 jobs cap: lint --jobs 100000 on 2,000 files: {seconds:.2f} s, exit "
           f"{proc.returncode}, {most} worker processes seen on {cpus} CPUs (at most twice the "
           "CPUs; was one per 32 files: 62)")


POLICY = """\
id: ACME001
slug: hostile
severity: error
summary: s
rationale: r
fix: f
target: object
"""


def policies(work: Path) -> Iterator[str]:
    """A catastrophic pattern runs on RE2; a huge message width is refused at load time."""
    (work / "pol").mkdir()
    for length in (40, 100_000):
        (work / "pol" / "p.yaml").write_text(
            POLICY + "schema:\n  properties:\n    metadata: {properties: {name: "
            "{pattern: '^(a+)+$'}}}\n")
        (work / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
                                      + "a" * length + "b}\n")
        code, seconds, peak = measure(["lint", "cm.yaml", "--policies", "pol", "--select",
                                       "ACME001"], work)
        yield (f"3 ReDoS: pattern '^(a+)+$' against a {length + 1:,}-character name: "
               f"{seconds:.2f} s, peak {peak:.0f} MB, exit {code} (RE2 is linear; Python's re "
               "never finished at 41)")
    (work / "pol" / "p.yaml").write_text(POLICY + "message: '{value:>200000000}'\n"
                                         "schema: {required: [spec]}\n")
    code, seconds, peak = measure(["lint", "cm.yaml", "--policies", "pol", "--select",
                                   "ACME001"], work)
    yield (f"4 message width: '{{value:>200000000}}' refused at load time: {seconds:.2f} s, "
           f"peak {peak:.0f} MB, exit {code} (was a 200 MB line)")


def surrogates(work: Path) -> Iterator[str]:
    """JSON with surrogate-pair escapes is read again by the Python parser: the cost."""
    smile, plain = "\\ud83d\\ude00", "\\u0041\\u0042"  # the same length, written
    head = ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, '
            '"data": {"a": "')
    for megabytes in (3, 6):
        value = smile * (megabytes * 1_000_000 // len(smile))
        (work / "with.json").write_text(head + value + '"}}\n')
        (work / "without.json").write_text(head + value.replace(smile, plain) + '"}}\n')
        code, seconds, peak = measure(["lint", "with.json"], work)
        _, plain_seconds, plain_peak = measure(["lint", "without.json"], work)
        yield (f"26 surrogate pairs: {megabytes} MB of JSON escapes: {seconds:.2f} s, peak "
               f"{peak:.0f} MB, exit {code}; the same file without surrogates: "
               f"{plain_seconds:.2f} s, peak {plain_peak:.0f} MB")


def _figure(code: int, seconds: float, peak: float) -> str:
    return f"{seconds:.2f} s, peak {peak:.0f} MB, exit {code}"


def events_table(work: Path) -> Iterator[str]:
    """Issue 24: every row of the table was padded to the longest node name."""
    events = [{"node_name": f"gpu-preemptible-dp-{i:05}", "reason": "TogetherNodeAdded",
               "timestamp": "2025-03-02T06:12:40Z"} for i in range(4_000)]
    events.append({"node_name": "gpu-preemptible-dp-" + "x" * 600_000,
                   "reason": "TogetherNodeAdded", "timestamp": "2025-03-02T06:12:40Z"})
    path = work / "read.json"
    path.write_text(json.dumps({"cluster_id": "c", "num_gpus": 8,
                                "node_lifecycle_events": events}))
    code, seconds, peak = measure(["cluster", "events", path.name], work)
    yield (f"24.events cluster events table, 4,000 nodes and one name of 600 KB "
           f"({path.stat().st_size / 1e6:.1f} MB): {_figure(code, seconds, peak)} (before: "
           "every row padded to the longest name: 35.6 s, peak 6,895 MB)")


def config_files(work: Path) -> Iterator[str]:
    """Issue 24: the config and policy files were read whole, past the 64 MiB cap."""
    (work / "pod.yaml").write_text(POD)
    with open(work / "pyproject.toml", "wb") as handle:
        handle.write(b"[tool.pmanifest]\n")
        handle.truncate(300 << 20)
    code, seconds, peak = measure(["lint", "pod.yaml"], work)
    yield (f"24.config a 300 MiB pyproject.toml: {_figure(code, seconds, peak)} (refused unread;"
           " before: read whole, 3.6 s, peak 618 MB)")
    (work / "pyproject.toml").unlink()
    (work / "pol").mkdir()
    with open(work / "pol" / "big.yaml", "wb") as handle:
        handle.truncate(300 << 20)
    code, seconds, peak = measure(["lint", "pod.yaml", "--policies", "pol"], work)
    yield (f"24.policy a 300 MiB policy file: {_figure(code, seconds, peak)} (refused unread; "
           "before: read whole, 2.8 s, peak 619 MB)")


def shell_bytes(work: Path) -> Iterator[str]:
    """Issue 24: inlining was bounded in statements, not bytes; tree-sitter had no bound."""
    body = "echo " + "A" * 100_000
    script = f"f() {{ {body}; }}\ntrap 'f; exit 143' TERM\n" + "f\n" * 125_000
    path = work / "inline.yaml"
    path.write_text(_job(script))
    code, seconds, peak = measure(["lint", path.name], work)
    yield (f"24.inlining a 100 KB function called 125,000 times ({len(script) / 1e3:.0f} KB "
           f"script): {_figure(code, seconds, peak)} (opaque, PM006; before: 0.1 MB a call, "
           "508 MB at 5,000 calls: about 12 GB here)")
    path = work / "broken.yaml"
    path.write_text(_job("a=(" * 20_000))
    code, seconds, peak = measure(["lint", path.name], work)
    yield (f"24.parser 60 KB of 'a=(' in a script: {_figure(code, seconds, peak)} (the parse "
           "stops at 1 s + 20 ms per KiB: opaque, PM006; before: 32.6 s)")


def one_line_json(work: Path) -> Iterator[str]:
    """Issue 24: each finding scanned its whole line for an ignore comment."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"nodeSelector": {"together.ai/compute_class": "preemptible"},
                    "containers": [{"name": "a", "image": "b"}]}}
    path = work / "all.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod] * 8_000}))
    code, seconds, peak = measure(["lint", path.name, "--select", "PM105"], work)
    yield (f"24.json 8,000 findings on one line of JSON ({path.stat().st_size / 1e6:.1f} MB): "
           f"{_figure(code, seconds, peak)} (before: 15.5 s, quadratic)")


def drift_check(work: Path) -> Iterator[str]:
    """Issue 24: render --check ran difflib over every line of a reordered file."""
    import random

    shutil.copy(ROOT / "examples" / "finetune-sigterm.yaml", work / "one.yaml")
    text = (work / "one.yaml").read_text()
    head, workload = text.split("workloads:\n")
    spec = head + "workloads:\n" + "".join(workload.replace("name: finetune", f"name: ft{i}")
                                           for i in range(400))
    (work / "spec.yaml").write_text(spec)
    rendered = subprocess.run([*PMANIFEST, "render", "-f", "spec.yaml"], cwd=work,
                              capture_output=True, text=True, check=False).stdout
    lines = rendered.splitlines(keepends=True)
    random.Random(24).shuffle(lines)
    (work / "committed.yaml").write_text("".join(lines))
    code, seconds, peak = measure(["render", "-f", "spec.yaml", "--check", "committed.yaml"],
                                  work)
    yield (f"24.check render --check of a reordered file of {len(lines):,} lines: "
           f"{_figure(code, seconds, peak)} (one hunk past 20,000 lines; before: 72.5 s)")


def _workers(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError, ValueError), \
                open(f"/proc/{entry}/stat") as handle:
            if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def worker_signals(work: Path) -> Iterator[str]:
    """Issue 24: a --jobs worker SIGKILLed (the out-of-memory killer) left the parent waiting
    for ever; SIGTERM to the parent left a traceback per worker."""
    import signal

    tree = work / "tree"
    tree.mkdir()
    items = "".join("  - " + POD.replace("\n", "\n    ").rstrip() + "\n" for _ in range(150))
    for i in range(256):
        (tree / f"f{i:04}.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + items)
    for what, to, signum in (("a worker SIGKILLed", "worker", signal.SIGKILL),
                             ("SIGTERM to the parent", "parent", signal.SIGTERM)):
        proc = subprocess.Popen([*PMANIFEST, "lint", "--jobs", "4", "tree"], cwd=work,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers = _workers(proc.pid)
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(min(workers) if to == "worker" else proc.pid, signum)
        start = time.monotonic()
        try:
            stderr = proc.communicate(timeout=60)[1]
        except subprocess.TimeoutExpired:
            proc.kill()
            stderr = proc.communicate()[1]
        seconds = time.monotonic() - start
        said = len(stderr.decode(errors="replace").splitlines())
        yield (f"24.{to} lint --jobs 4, {what}: the parent ended {seconds:.2f} s later, exit "
               f"{proc.returncode}, {said} line(s) on stderr (before: "
               + ("waited for ever)" if to == "worker" else "a traceback per worker)"))


SECTIONS: list[Callable[[Path], Iterator[str]]] = [
    shell_inlining, shell_nesting, endless_inputs, template_budgets, jobs_cap, policies,
    surrogates, events_table, config_files, shell_bytes, one_line_json, drift_check,
    worker_signals]


ISSUE_24 = [events_table, config_files, shell_bytes, one_line_json, drift_check,
            worker_signals]


def main() -> None:
    sections = ISSUE_24 if sys.argv[1:] == ["--only", "24"] else SECTIONS
    for section in sections:
        with tempfile.TemporaryDirectory() as tmp:
            for line in section(Path(tmp)):
                print(line, flush=True)


if __name__ == "__main__":
    main()
