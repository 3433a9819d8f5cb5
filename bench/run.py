"""Print the speed and memory figures of issue 6, one line per target, with raw medians.

    python bench/run.py            # full run (a few minutes)
    python bench/run.py --quick    # small corpus, few repeats: proves the script still works
    python bench/run.py --only 4   # one target (repeat --only for several)

Ratios are measured in one run on the same machine (medians of several runs), so they hold
up on shared, noisy machines better than absolute times. Nothing here fails a test run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from gen_corpus import generate

ROOT = Path(__file__).resolve().parent.parent
_SCRIPT = Path(sys.executable).parent / "pmanifest"  # the console script users run
PMANIFEST = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "pmanifest"]


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# Children may write bytecode caches (an installed wheel has them already; an editable
# checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module each time).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=CHILD_ENV)


def median_run(cmd: list[str], repeats: int) -> float:
    run(cmd)  # warm-up: bytecode caches and the page cache, as on any second run
    return median_time(lambda: run(cmd), repeats)


def peak_rss_kb(cmd: list[str]) -> int:
    """Peak RSS of one child process, read from /usr/bin/time -v (or getrusage)."""
    time_bin = shutil.which("time") or "/usr/bin/time"
    if os.path.exists(time_bin):
        result = subprocess.run([time_bin, "-v", *cmd], capture_output=True, text=True,
                                env=CHILD_ENV)
        for line in result.stderr.splitlines():
            if "Maximum resident set size" in line:
                return int(line.rsplit(":", 1)[1])
    import resource

    subprocess.run(cmd, capture_output=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def throughput(corpus: list[Path], repeats: int) -> str:
    from pmanifest.lint.engine import LintOptions, lint_file

    def parse_only() -> None:
        for path in corpus:
            list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))

    options = LintOptions()

    def lint_all() -> None:
        for path in corpus:
            lint_file(path.read_bytes(), str(path), options)

    lint_all()  # warm caches (schemas compiled once per process, as in a real run)
    base = median_time(parse_only, repeats)
    lint = median_time(lint_all, repeats)
    return (f"1 throughput: lint/parse = {lint / base:.2f}x (target <= 2.0x); "
            f"lint {lint * 1000:.0f} ms, CSafeLoader parse {base * 1000:.0f} ms, "
            f"{len(corpus)} files")


def startup(one_file: Path, repeats: int) -> str:
    base = median_run([sys.executable, "-c", "pass"], repeats)
    lint = median_run([*PMANIFEST, "lint", str(one_file)], repeats)
    version = median_run([*PMANIFEST, "--version"], repeats)
    return (f"2 start-up: lint one file / python -c pass = {lint / base:.2f}x (target <= 4x); "
            f"lint {lint * 1000:.0f} ms, --version {version * 1000:.0f} ms, "
            f"python -c pass {base * 1000:.0f} ms")


def render(spec: Path, repeats: int) -> str:
    base = median_run([sys.executable, "-c", "pass"], repeats)
    rendered = median_run([*PMANIFEST, "render", "-f", str(spec)], repeats)
    return (f"3 render: render -f 4-workload spec / python -c pass = {rendered / base:.2f}x "
            f"(target <= 6x); render {rendered * 1000:.0f} ms, python {base * 1000:.0f} ms")


def memory(one_dir: Path, many_dir: Path, files: int) -> str:
    one = peak_rss_kb([*PMANIFEST, "lint", "--jobs", "1", str(one_dir)])
    many = peak_rss_kb([*PMANIFEST, "lint", "--jobs", "1", str(many_dir)])
    return (f"4 memory: peak RSS {files} files / 1 file = {many / one:.2f}x (target <= 1.5x); "
            f"{many / 1024:.1f} MiB vs {one / 1024:.1f} MiB")


def scale_out(tree: Path, files: int, repeats: int) -> str:
    one = median_run([*PMANIFEST, "lint", "--jobs", "1", str(tree)], repeats)
    two = median_run([*PMANIFEST, "lint", "--jobs", "2", str(tree)], repeats)
    return (f"5 scale-out: --jobs 1 / --jobs 2 = {one / two:.2f}x faster (target >= 1.6x on "
            f"2 cores); {one:.2f} s vs {two:.2f} s, {files} files, {os.cpu_count()} CPUs")


def representative(corpus: list[Path]) -> Path:
    """A file that exercises every code path of the corpus (a Job over the grace cap and a
    Deployment on preemptible nodes, so findings and their messages are produced): the memory
    ratio should measure streaming, not which modules a clean file never imports."""
    for path in corpus:
        text = path.read_text()
        if "terminationGracePeriodSeconds: 600" in text and "      nodeSelector:" in text:
            return path
    return corpus[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny corpus, 1-2 repeats")
    parser.add_argument("--only", type=int, action="append", choices=range(1, 6),
                        metavar="N", help="run only target N (1-5; repeat for several)")
    args = parser.parse_args()
    wanted = set(args.only or range(1, 6))
    repeats = 2 if args.quick else 7
    sizes = (20, 50, 200) if args.quick else (400, 2000, 20000)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        corpus = generate(base / "corpus", sizes[0])
        one_dir = base / "one"
        one_dir.mkdir()
        shutil.copy(representative(corpus), one_dir / "one.yaml")
        spec = ROOT / "bench" / "four-workloads.yaml"
        if 1 in wanted:
            print(throughput(corpus, repeats), flush=True)
        small = base / "small.yaml"  # a small clean file: what a pre-commit run mostly sees
        shutil.copy(corpus[0], small)
        if 2 in wanted:
            print(startup(small, repeats), flush=True)
        if 3 in wanted:
            print(render(spec, repeats) if spec.is_file()
                  else f"3 render: skipped, {spec} not found", flush=True)
        if 5 in wanted:
            tree = base / "tree"
            generate(tree, sizes[1])
            print(scale_out(tree, sizes[1], max(1, repeats // 2)), flush=True)
        if 4 in wanted:
            many = base / "many"
            generate(many, sizes[2])
            print(memory(one_dir, many, sizes[2]), flush=True)

if __name__ == "__main__":
    main()
