"""Lint checked-out public repositories and print what pmanifest finds in them (issues 12, 13).

    python bench/sweep.py /tmp/sweep                    # every repository under the directory
    python bench/sweep.py /tmp/sweep --repo kuberay     # one repository (repeatable)
    python bench/sweep.py /tmp/sweep --all-profiles     # every profile on every repository
    python bench/sweep.py /tmp/sweep --findings f.jsonl # also keep every finding, for reading
    python bench/sweep.py /tmp/sweep --judgements j.jsonl --commits c.tsv  # precision table

Each subdirectory of DIR is one repository. Its *.yaml, *.yml and *.json files are linted with
`pmanifest lint --format json --allow-empty` under the profiles that fit it (`together` always;
`gke`, `karpenter` or `aks` when the repository's name says which provider it is written for;
with `--fitting` only that provider's profile then),
skipping hidden directories, `vendor/` and `node_modules/` (copies of other projects), and Helm
chart templates (a file under a `templates/` directory holding an unrendered `{{`). Kustomize
bases and overlays are linted as the plain files they are.

Per repository and profile it prints the files linted and skipped, the objects read and
skipped (kinds pmanifest cannot read), the findings per rule id and severity, the exit code
and the wall time; an internal error (exit 3) or an input error (exit 2) is printed loudly
with the end of stderr. It prints figures and never fails: its exit status is 0.

Every finding kept with `--findings` carries a stable `key`, ``repo|file|line|column|rule|
kind/name`` (no profile, no message: the same finding under two profiles, or after a rewording,
is one key), so judgements written once are reused on later code wherever a finding did not
move. `--judgements FILE` reads JSON lines ``{"key": ..., "verdict": "TP" | "FP" |
"FP-platform" | "debatable", "reason": "...", "class": "..."}`` and prints the results table
(Markdown): per repository its commit (`--commits FILE`: lines ``name ... commit``, else
`git rev-parse HEAD` in the checkout), files, objects, findings (distinct keys of errors and
warnings over the profiles run), how many of them have a judgement (read) and how many are TP,
FP, FP-platform and debatable; then strict precision TP / (TP + FP + FP-platform) and the
number of findings without a judgement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pmanifest.kube.profile import DEFAULT_PROFILE, profile_names

_SCRIPT = Path(sys.executable).parent / "pmanifest"  # the console script users run
PMANIFEST = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "pmanifest"]
SUFFIXES = (".yaml", ".yml", ".json")
SKIPPED_DIRS = ("vendor", "node_modules")
# every shipped profile, the default (what a user gets when nothing is said) first
ALL_PROFILES = tuple(sorted(profile_names(), key=lambda name: name != DEFAULT_PROFILE))
# A repository whose name holds one of these words is written for that provider.
PROVIDER_WORDS = (
    (("gke", "google", "gcp", "kubernetes-engine"), "gke"),
    (("eks", "karpenter", "aws"), "karpenter"),
    (("aks", "azure"), "aks"),
)
BATCH = 400  # files per pmanifest run: well below any command-line length limit
VERDICTS = ("TP", "FP", "FP-platform", "debatable")
COUNTED = ("error", "warning")  # the severities the table counts (info lines are advice)


@dataclass
class Files:
    linted: list[str] = field(default_factory=list)
    helm_templates: int = 0
    third_party: int = 0


@dataclass
class Run:
    repo: str
    profile: str
    files: int = 0
    objects: int = 0
    skipped: int = 0
    by_rule: Counter[tuple[str, str]] = field(default_factory=Counter)
    exits: list[int] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)  # errors and warnings, for the table


def finding_key(repo: str, finding: dict[str, object]) -> str:
    """The stable key of a finding: where it is, which rule, on which object."""
    obj = finding.get("object")
    kind, name = ("-", "-")
    if isinstance(obj, dict):
        kind, name = str(obj.get("kind") or "-"), str(obj.get("name") or "-")
    return "|".join((repo, str(finding["file"]), str(finding["line"]), str(finding["column"]),
                     str(finding["rule"]), f"{kind}/{name}"))


def profiles_for(repo: str, all_profiles: bool, fitting: bool = False) -> list[str]:
    """`together` and the provider the name says; with `fitting`, only that provider."""
    if all_profiles:
        return list(ALL_PROFILES)
    name = repo.lower()
    extra = [profile for words, profile in PROVIDER_WORDS if any(w in name for w in words)]
    return extra if fitting and extra else ["together", *extra]


def is_helm_template(relative: Path, path: Path) -> bool:
    if "templates" not in relative.parts[:-1]:
        return False
    try:
        return "{{" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def collect(root: Path) -> Files:
    files = Files()
    for dirpath, dirnames, filenames in os.walk(root):
        kept = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            if name in SKIPPED_DIRS:
                files.third_party += sum(
                    1 for _d, _s, names in os.walk(Path(dirpath, name))
                    for n in names if n.lower().endswith(SUFFIXES))
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.lower().endswith(SUFFIXES) or name.startswith("."):
                continue
            path = Path(dirpath, name)
            if path.is_symlink() or not path.is_file():
                continue
            if is_helm_template(path.relative_to(root), path):
                files.helm_templates += 1
                continue
            files.linted.append(str(path.relative_to(root)))
    return files


def batches(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]


def lint(root: Path, repo: str, profile: str, files: Sequence[str], jobs: int | None,
         keep: list[dict[str, object]] | None) -> Run:
    run = Run(repo, profile)
    for chunk in batches(files):
        cmd = [*PMANIFEST, "lint", "--format", "json", "--allow-empty", "--fail-on", "error",
               "--profile", profile, *(["-j", str(jobs)] if jobs else []), *chunk]
        start = time.perf_counter()
        result = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
        run.seconds += time.perf_counter() - start
        run.exits.append(result.returncode)
        if result.returncode not in (0, 1):
            tail = result.stderr.strip().splitlines()[-5:]
            run.problems.append(f"exit {result.returncode}: " + " | ".join(tail))
            continue
        add_report(run, result.stdout, keep)
    return run


def add_report(run: Run, stdout: str, keep: list[dict[str, object]] | None) -> None:
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError as exc:
        run.problems.append(f"stdout is not JSON ({exc})")
        return
    summary = report["summary"]
    run.files += summary["files"]
    run.objects += summary["objects"]
    run.skipped += summary.get("skipped", 0)
    for finding in report["findings"]:
        run.by_rule[(finding["rule"], finding["severity"])] += 1
        key = finding_key(run.repo, finding)
        if finding["severity"] in COUNTED:
            run.keys.add(key)
        if keep is not None:
            keep.append({"key": key, "repo": run.repo, "profile": run.profile, **finding})


def print_run(run: Run, files: Files) -> None:
    worst = max(run.exits, default=0)
    print(f"{run.repo} [{run.profile}]: {run.files} files linted "
          f"({files.helm_templates} Helm templates, {files.third_party} vendored skipped), "
          f"{run.objects} objects, {run.skipped} skipped objects, "
          f"{sum(run.by_rule.values())} findings, exit {worst}, {run.seconds:.1f} s")
    for (rule, severity), count in sorted(run.by_rule.items()):
        print(f"    {rule} {severity:<7} {count}")
    for problem in run.problems:
        marker = "!!! CRASH (exit 3)" if problem.startswith("exit 3") else "!!! PROBLEM"
        print(f"    {marker}: {problem}")


def print_totals(runs: Sequence[Run]) -> None:
    for profile in sorted({r.profile for r in runs}, key=ALL_PROFILES.index):
        mine = [r for r in runs if r.profile == profile]
        total: Counter[tuple[str, str]] = Counter()
        for r in mine:
            total.update(r.by_rule)
        crashes = sum(1 for r in mine for p in r.problems if p.startswith("exit 3"))
        print(f"TOTAL [{profile}]: {len(mine)} repositories, {sum(r.files for r in mine)} files, "
              f"{sum(r.objects for r in mine)} objects, {sum(r.skipped for r in mine)} skipped "
              f"objects, {sum(total.values())} findings, {crashes} crashes, "
              f"{sum(r.seconds for r in mine):.1f} s")
        counts = sorted(total.items())
        print("    " + ", ".join(f"{rule}/{sev[0]} {n}" for (rule, sev), n in counts))


def read_judgements(path: Path) -> dict[str, str]:
    """key -> verdict; a line that is not a judgement is named on stderr and left out."""
    verdicts: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key, verdict = entry["key"], entry["verdict"]
        except (json.JSONDecodeError, KeyError, TypeError):
            print(f"{path}:{number}: not a judgement (JSON with key and verdict)", file=sys.stderr)
            continue
        if verdict not in VERDICTS:
            print(f"{path}:{number}: verdict {verdict!r} is none of {', '.join(VERDICTS)}",
                  file=sys.stderr)
            continue
        verdicts[key] = verdict
    return verdicts


def read_commits(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    commits = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 2:
            commits[fields[0]] = fields[-1]
    return commits


def commit_of(root: Path, commits: dict[str, str]) -> str:
    if root.name in commits:
        return commits[root.name]
    result = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=False)
    return result.stdout.strip()[:12] if result.returncode == 0 else "?"


def precision(tp: int, wrong: int) -> str:
    return f"{100 * tp / (tp + wrong):.1f}%" if tp + wrong else "n/a"


def table(runs: Sequence[Run], commits: dict[str, str], verdicts: dict[str, str]) -> list[str]:
    """The results table (Markdown) and the strict precision under it."""
    header = ["repository", "commit", "files", "objects", "findings", "read", *VERDICTS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    totals: Counter[str] = Counter()
    for repo in dict.fromkeys(r.repo for r in runs):  # first-seen order
        mine = [r for r in runs if r.repo == repo]
        keys: set[str] = set().union(*(r.keys for r in mine))
        seen = Counter(verdicts[k] for k in keys if k in verdicts)
        row = Counter({"files": max(r.files for r in mine),
                       "objects": max(r.objects for r in mine), "findings": len(keys),
                       "read": sum(seen.values())})
        row.update(seen)
        totals.update(row)
        cells = [repo, commits.get(repo, "?"), *(str(row[c]) for c in header[2:])]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("| **total** | | " + " | ".join(str(totals[c]) for c in header[2:]) + " |")
    wrong = totals["FP"] + totals["FP-platform"]
    lines += ["", f"strict precision TP/(TP+FP+FP-platform) = {totals['TP']}/"
              f"{totals['TP'] + wrong} = {precision(totals['TP'], wrong)}; "
              f"findings without a judgement: {totals['findings'] - totals['read']}"]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dir", type=Path, help="a directory of checked-out repositories")
    parser.add_argument("--repo", action="append", default=[], help="only this repository")
    parser.add_argument("--all-profiles", action="store_true", help="every profile everywhere")
    parser.add_argument("--fitting", action="store_true",
                        help="a repository whose name says its provider: only that profile")
    parser.add_argument("--profile", action="append", default=[],
                        help="only these profiles (repeatable)")
    parser.add_argument("--findings", type=Path, help="write every finding here (JSON lines)")
    parser.add_argument("-j", "--jobs", type=int, help="passed to pmanifest lint -j")
    parser.add_argument("--judgements", type=Path,
                        help="JSON lines of key and verdict: print the results table")
    parser.add_argument("--commits", type=Path, help="lines 'name ... commit' for the table")
    args = parser.parse_args(argv)
    repos = sorted(p for p in args.dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    keep: list[dict[str, object]] | None = [] if args.findings else None
    runs = []
    commits = read_commits(args.commits)
    for root in repos:
        if args.repo and root.name not in args.repo:
            continue
        files = collect(root)
        if args.judgements:
            commits[root.name] = commit_of(root, commits)
        for profile in profiles_for(root.name, args.all_profiles, args.fitting):
            if args.profile and profile not in args.profile:
                continue
            run = lint(root, root.name, profile, files.linted, args.jobs, keep)
            print_run(run, files)
            runs.append(run)
            sys.stdout.flush()
    print_totals(runs)
    if args.findings and keep is not None:
        args.findings.write_text("".join(json.dumps(f) + "\n" for f in keep), encoding="utf-8")
    if args.judgements:
        print("\n".join(["", *table(runs, commits, read_judgements(args.judgements))]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
