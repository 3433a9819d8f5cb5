"""Print recall and precision of `pmanifest lint` on the realistic manifest corpus.

Usage (from the source tree): ``python bench/corpus_score.py``. Always exits 0: a benchmark
prints figures, ``tests/corpus/test_realistic_repo.py`` is the gate.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.corpus.scoring import REPO, score  # noqa: E402


def main() -> None:
    result = score()
    print(f"corpus: {REPO.relative_to(ROOT)} ({len(result.expected)} planted findings)")
    print(result.report())


if __name__ == "__main__":
    main()
