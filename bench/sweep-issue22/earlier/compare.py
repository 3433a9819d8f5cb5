"""Compare the findings of two or three bench/sweep.py runs (--findings JSON lines) of the same
repositories: BEFORE, AFTER and optionally FIXED.

    python3 compare.py MODE     # reads {before,after,fixed}_MODE.jsonl and .txt, commits.tsv

Writes gone_MODE.tsv and new_MODE.tsv (keys in one run only: key, severity, profiles),
severity_changed_MODE.tsv (key, profile, before->after), after_vs_fixed_MODE.tsv, and prints
the per-repository table (findings: distinct keys of errors and warnings over the profiles)
and, for every key whose severity went down, whether the text of its document names an
accelerator (those were each read in source)."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

COUNTED = ("error", "warning")
RANK = {"info": 0, "warning": 1, "error": 2}
ACCELERATOR_WORDS = re.compile(r"nvidia\.com/|amd\.com/gpu|google\.com/tpu|neuron|habana\.ai/|"
                               r"gpu|tpu|resourceClaims|accelerat|cuda", re.IGNORECASE)
Run = dict[str, dict[str, dict[str, object]]]  # key -> profile -> finding


def load(path: str) -> Run:
    run: Run = defaultdict(dict)
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            finding = json.loads(line)
            run[finding["key"]][finding["profile"]] = finding
    return run


def worst(run: Run, key: str) -> str:
    return max((str(f["severity"]) for f in run[key].values()), key=RANK.__getitem__)


def counted(run: Run, repo: str) -> set[str]:
    return {k for k in run if k.startswith(repo + "|") and worst(run, k) in COUNTED}


def changes(a: Run, b: Run) -> list[str]:
    out = []
    for key in sorted(set(a) & set(b)):
        for profile in sorted(set(a[key]) | set(b[key])):
            fa, fb = a[key].get(profile), b[key].get(profile)
            sa, sb = fa and fa["severity"], fb and fb["severity"]
            if sa != sb:
                out.append(f"{key}\t{profile}\t{sa}->{sb}")
    return out


def listing(run: Run, keys: set[str]) -> list[str]:
    return [f"{k}\t{worst(run, k)}\t{','.join(sorted(run[k]))}" for k in sorted(keys)]


def summary(path: str) -> tuple[dict[str, int], Counter[str]]:
    files: dict[str, int] = {}
    objects: Counter[str] = Counter()
    pattern = re.compile(r"(\S+) \[(\S+)\]: (\d+) files linted .*?, (\d+) objects")
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if (m := pattern.match(line)) is not None:
            files[m[1]] = int(m[3])
            objects[m[1]] = max(objects[m[1]], int(m[4]))
    return files, objects


def document_at(path: Path, line: int) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    start = max([i for i in range(line) if lines[i].startswith("---")] + [-1]) + 1
    end = min([i for i in range(line, len(lines)) if lines[i].startswith("---")] + [len(lines)])
    return "\n".join(lines[start:end])


def main(mode: str) -> None:
    before, after = load(f"before_{mode}.jsonl"), load(f"after_{mode}.jsonl")
    fixed = load(f"fixed_{mode}.jsonl") if Path(f"fixed_{mode}.jsonl").exists() else None
    Path(f"gone_{mode}.tsv").write_text("\n".join(listing(before, set(before) - set(after))))
    Path(f"new_{mode}.tsv").write_text("\n".join(listing(after, set(after) - set(before))))
    Path(f"severity_changed_{mode}.tsv").write_text("\n".join(changes(before, after)))
    if fixed is not None:
        both = changes(after, fixed) + [f"{k}\tany\tgone" for k in set(after) - set(fixed)] + \
            [f"{k}\tany\tnew {worst(fixed, k)}" for k in set(fixed) - set(after)]
        Path(f"after_vs_fixed_{mode}.tsv").write_text("\n".join(sorted(both)))
    commits = dict(line.split()[::2] for line in Path("commits.tsv").read_text().splitlines())
    files, objects_before = summary(f"before_{mode}.txt")
    _, objects_after = summary(f"after_{mode}.txt")
    print("| repository | commit | files | objects before / after | findings before | after | "
          "disappeared | appeared | fixed branch: findings (+/- vs after) |")
    print("|" + "---|" * 9)
    for repo in sorted(commits, key=str.lower):
        b, a = counted(before, repo), counted(after, repo)
        x = counted(fixed, repo) if fixed is not None else a
        print(f"| {repo} | {commits[repo][:7]} | {files[repo]} | {objects_before[repo]} / "
              f"{objects_after[repo]} | {len(b)} | {len(a)} | {len(b - a)} | {len(a - b)} | "
              f"{len(x)} (+{len(x - a)}/-{len(a - x)}) |")
    lowered: Counter[tuple[str, str, str, bool]] = Counter()
    for key in set(before) & set(after):
        sb, sa = worst(before, key), worst(after, key)
        if RANK[sa] < RANK[sb]:
            repo, file, line, _col, rule, _obj = key.split("|")
            named = ACCELERATOR_WORDS.search(document_at(Path("repos", repo, file), int(line)))
            lowered[(rule, sb, sa, named is not None)] += 1
    for (rule, sb, sa, named), n in sorted(lowered.items()):
        print(f"lowered {rule} {sb}->{sa} document names an accelerator word: {named}: {n}")


if __name__ == "__main__":
    main(sys.argv[1])
