"""Score ``pmanifest lint`` on the realistic manifest repository in ``repo/``.

``expected.txt`` lists every planted finding as ``path:LINE:COL RULE-ID slug``. A finding
counts only when rule and position both match exactly. Recall is planted findings found /
planted; precision is findings that are planted / all findings.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from pmanifest.cli.main import main

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS / "repo"
EXPECTED = CORPUS / "expected.txt"


@dataclass(frozen=True)
class Score:
    expected: frozenset[str]
    found: frozenset[str]
    exit_code: int

    @property
    def missed(self) -> list[str]:
        return sorted(self.expected - self.found)

    @property
    def unexpected(self) -> list[str]:
        return sorted(self.found - self.expected)

    @property
    def recall(self) -> float:
        return len(self.expected & self.found) / len(self.expected) if self.expected else 1.0

    @property
    def precision(self) -> float:
        return len(self.expected & self.found) / len(self.found) if self.found else 1.0

    def summary(self) -> str:
        hits = len(self.expected & self.found)
        return (f"recall {self.recall:.3f} ({hits}/{len(self.expected)} planted found at the "
                f"exact position), precision {self.precision:.3f} ({hits}/{len(self.found)} "
                "findings planted)")

    def report(self) -> str:
        lines = [self.summary()]
        lines += [f"  missed:     {item}" for item in self.missed]
        lines += [f"  unexpected: {item}" for item in self.unexpected]
        return "\n".join(lines)


def load_expected(path: Path = EXPECTED) -> frozenset[str]:
    out = set()
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            out.add(" ".join(line.split()))
    return frozenset(out)


def planted_rules(path: Path = EXPECTED) -> list[str]:
    """The rules the repository's mistakes were planted for (it was built for them)."""
    return sorted({line.split()[1] for line in load_expected(path)})


def lint_repo(repo: Path = REPO, rules: list[str] | None = None
              ) -> tuple[list[dict[str, object]], int]:
    """Run the real CLI (`pmanifest lint --format json .`) from inside the repo, so file names
    come out relative to it and its `.pmanifest.yaml` is the config found; ``rules``: only
    these (a rule added later brings its own cases and does not change this score)."""
    select = [option for rule in rules or () for option in ("--select", rule)]
    with contextlib.chdir(repo):
        result = CliRunner().invoke(main, ["lint", "--format", "json", ".", *select])
    if result.exit_code not in (0, 1):
        raise AssertionError(f"pmanifest lint exited {result.exit_code}:\n{result.output}")
    findings = json.loads(result.stdout)["findings"]
    assert isinstance(findings, list)
    return findings, result.exit_code


def as_key(finding: dict[str, object]) -> str:
    file = str(finding["file"]).removeprefix("./")
    return f"{file}:{finding['line']}:{finding['column']} {finding['rule']} {finding['slug']}"


def score(repo: Path = REPO, expected_path: Path = EXPECTED) -> Score:
    findings, exit_code = lint_repo(repo, planted_rules(expected_path))
    return Score(load_expected(expected_path), frozenset(as_key(f) for f in findings), exit_code)
