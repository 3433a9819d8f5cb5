"""Time and peak memory of the large hostile lint inputs of issue 15 (items 6-8), one line each:

    python bench/hostile_lint.py            # the sizes of the issue
    python bench/hostile_lint.py --quick    # smaller, to show the script still works

Before the fixes: a 300 KB List of 650 Jobs with a shell finding each took 58 s (1.4 MB never
finished in 5 minutes); 10,000 nodeSelector keys in a 1 MB Pod took 23 s; a 100 KB comment
line took 72 s. The figures below should grow linearly with the size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile.lint_inputs import job_list, long_comment, selector_keys  # noqa: E402

_SCRIPT = Path(sys.executable).parent / "pmanifest"
PMANIFEST = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "pmanifest"]
TIME = "/usr/bin/time"  # GNU time (Debian's `time` package): peak RSS of the child alone


def measure(name: str, text: str, directory: Path) -> None:
    path = directory / "input.yaml"
    path.write_text(text)
    report = directory / "rss.txt"
    report.write_text("0")
    timed = [TIME, "-f", "%M", "-o", str(report)] if os.path.exists(TIME) else []
    start = time.perf_counter()
    proc = subprocess.run([*timed, *PMANIFEST, "lint", str(path)],
                          capture_output=True, check=False,
                          env={k: v for k, v in os.environ.items()
                               if k != "PYTHONDONTWRITEBYTECODE"})
    elapsed = time.perf_counter() - start
    peak_kb = int(report.read_text().split()[-1])
    findings = len(proc.stdout.splitlines())
    rss = f"{peak_kb / 1024:.0f} MB" if timed else "n/a (no /usr/bin/time)"
    print(f"{name}: {len(text) / 1e6:.2f} MB, {elapsed:.2f} s, peak RSS {rss}, "
          f"{findings} findings, exit {proc.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        measure("list of 650 Jobs", job_list(65 if quick else 650), directory)
        measure("10,000 selector keys", selector_keys(1_000 if quick else 10_000), directory)
        measure("100 KB comment line", long_comment(10_000 if quick else 100_000), directory)
        if not quick:
            measure("list of 2,100 Jobs (1.4 MB)", job_list(2_100), directory)


if __name__ == "__main__":
    main()
