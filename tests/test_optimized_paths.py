"""The optimized paths produce byte-identical findings to the straightforward ones, on the
benchmark corpus: the compiled schema check vs jsonschema alone, and --jobs 2 vs --jobs 1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_corpus import generate


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    generate(root, 120)
    # a few invalid objects so the slow path has something to say
    broken = (root / "app-00003.yaml").read_text().replace("restartPolicy", "restartPolicyy", 1)
    (root / "app-00003.yaml").write_text(broken)
    return root


def lint(corpus: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["lint", "--format", "json", str(corpus), *args])
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def test_compiled_schema_check_matches_jsonschema(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = lint(corpus, "--jobs", "1")
    from pmanifest.schema import kubernetes as schema

    monkeypatch.setattr(schema, "_fast_check", lambda *args: None)
    slow = lint(corpus, "--jobs", "1")
    assert fast == slow
    assert "restartPolicyy" in fast


def test_parallel_output_is_identical(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pmanifest.lint import parallel

    monkeypatch.setattr(parallel, "MIN_FILES_PER_WORKER", 8)  # make sure workers really run
    assert lint(corpus, "--jobs", "2") == lint(corpus, "--jobs", "1")


def test_default_jobs_is_bounded() -> None:
    from pmanifest.lint.parallel import MAX_JOBS, default_jobs

    assert 1 <= default_jobs() <= MAX_JOBS


CORPUS_REPO = Path(__file__).resolve().parent / "corpus" / "repo"


@pytest.mark.parametrize("locate_above", [0, 10**9])
def test_positions_located_path_by_path_match_whole_tables(
    locate_above: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large documents locate only the paths of their findings (a second parse); small ones
    table every position. Forcing either mode on the realistic repository (Lists, Helm and
    Kustomize output, scripts in block scalars) gives the same findings at the same places."""
    monkeypatch.chdir(CORPUS_REPO)
    default = lint(Path("."), "--jobs", "1")
    from pmanifest.loader import documents as loader

    monkeypatch.setattr(loader, "LOCATE_ABOVE", locate_above)
    assert lint(Path("."), "--jobs", "1") == default
    assert '"line"' in default
