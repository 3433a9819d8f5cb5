"""Prints the scenario table (shell x scenario -> exit code, seconds, checkpoints) of a real
run: ``python -m tests.preemption.table`` from the repository root, as root."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .kubelet import shells
from .test_scenarios import SCENARIOS, run_scenario


def main() -> None:
    columns = shells()
    print("| scenario | mode | " + " | ".join(s.name for s in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for scenario in SCENARIOS:
        cells = []
        for shell in columns:
            with tempfile.TemporaryDirectory() as work:
                out = run_scenario(scenario, shell, Path(work))
            mark = "" if not out.survivors else f" survivors {','.join(out.survivors)}"
            cells.append(f"{out.exit_code}, {out.seconds:.2f} s, {out.checkpoints}{mark}")
        print(f"| {scenario.name} | {scenario.mode} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
