"""Prints the scenario table (shell x scenario -> exit code, seconds, checkpoint runs, what the
rendered podFailurePolicy concludes without / with DisruptionTarget) of a real run:
``python -m tests.preemption.table`` from the repository root, as root."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .kubelet import shells
from .policy import verdict
from .test_scenarios import SCENARIOS, run_scenario


def main() -> None:
    columns = shells()
    print("| scenario | mode | " + " | ".join(s.name for s in columns) + " | policy |")
    print("|---|---|" + "---|" * len(columns) + "---|")
    for scenario in SCENARIOS:
        cells, verdicts = [], set()
        for shell in columns:
            with tempfile.TemporaryDirectory() as work:
                out, job = run_scenario(scenario, shell, Path(work))
            mark = "" if not out.survivors else f" survivors {','.join(out.survivors)}"
            mark += " KILLED by the kubelet" if out.kubelet_killed else ""
            cells.append(f"{out.exit_code}, {out.seconds:.2f} s, {out.checkpoints}{mark}")
            verdicts.add((verdict(job, "w", out.exit_code, disruption_target=False),
                          verdict(job, "w", out.exit_code, disruption_target=True)))
        policy = "; ".join(f"{a} / {b}" for a, b in sorted(verdicts))
        print(f"| {scenario.name} | {scenario.mode} | " + " | ".join(cells)
              + f" | {policy} |", flush=True)


if __name__ == "__main__":
    main()
