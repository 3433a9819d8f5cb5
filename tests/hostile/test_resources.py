"""Time and peak memory of ``python -m pmanifest lint`` on the largest hostile inputs.

Each case runs in a real process under ``/usr/bin/time -v`` (or, without it, is measured with
``resource.getrusage(RUSAGE_CHILDREN)``). Bounds are deliberately generous (the machine is
shared); the figures are printed (``pytest -s``) for the closing note of issue 5.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.corpus import billion_laughs

TIME_BIN = "/usr/bin/time"
MB = 1_000_000


def _string_20mb() -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: "
            + "x" * (20 * MB) + "\n")


def _documents_20k() -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n"
        "  terminationGracePeriodSeconds: 900\n"
        "  nodeSelector: {together.ai/compute-class: preemptible}\n"
        "  containers: [{name: a, image: b}]\n" for i in range(20_000))


def _deep_and_wide() -> str:
    return "a: " + "[" * 198 + ",".join(["a"] * 1_000_000) + "]" * 198 + "\n"


def _flat_list_with_finding() -> str:
    # a million nodes in one document, and a finding in it: its position is located by a
    # second parse, not by tabling a million positions (that took ~500 MB)
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flat}\ndata: {k: ["
            + "a," * 1_000_000 + "a]}\n")


# name -> (generator, exit code, max seconds, max peak MB)
CASES: dict[str, tuple[Callable[[], str], int, float, float]] = {
    "string-20mb": (_string_20mb, 0, 30.0, 300.0),
    "documents-20k": (_documents_20k, 1, 60.0, 300.0),
    "billion-laughs": (billion_laughs, 1, 10.0, 100.0),
    "deep-and-wide-2mb": (_deep_and_wide, 1, 20.0, 300.0),
    "flat-list-2mb-with-finding": (_flat_list_with_finding, 1, 30.0, 150.0),
}


def measure(args: list[str], cwd: Path) -> tuple[int, float, float, bytes]:
    """(exit code, wall seconds, peak RSS in MB, stdout) of ``python -m pmanifest ARGS``."""
    command = [sys.executable, "-m", "pmanifest", *args]
    env = {**os.environ, "NO_COLOR": "1"}
    start = time.monotonic()
    if os.path.exists(TIME_BIN):
        proc = subprocess.run([TIME_BIN, "-v", *command], cwd=cwd, capture_output=True,
                              timeout=300, env=env, check=False)
        elapsed = time.monotonic() - start
        found = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        assert found, proc.stderr[-2000:]
        peak_mb = int(found.group(1)) / 1024
    else:  # pragma: no cover - depends on the machine
        proc = subprocess.run(command, cwd=cwd, capture_output=True, timeout=300, env=env,
                              check=False)
        elapsed = time.monotonic() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert b"Traceback" not in proc.stdout + proc.stderr
    return proc.returncode, elapsed, peak_mb, proc.stdout


@pytest.mark.parametrize("name", list(CASES))
def test_bounded_time_and_memory(tmp_path: Path, name: str) -> None:
    generate, code, max_seconds, max_mb = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(generate())
    size_mb = path.stat().st_size / MB
    returncode, elapsed, peak_mb, stdout = measure(["lint", path.name], tmp_path)
    print(f"\n[hostile-resources] {name}: {size_mb:.1f} MB input, {elapsed:.2f} s, "
          f"peak {peak_mb:.0f} MB  (python -m pmanifest lint {path.name})")
    assert returncode == code, stdout[-500:]
    assert elapsed < max_seconds
    assert peak_mb < max_mb
