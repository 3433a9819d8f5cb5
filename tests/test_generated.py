"""One command regenerates every generated file (``python -m pmanifest.generate``), and this
test says which is stale: the snapshots of policies/, the precompiled templates and the spec's
JSON Schema in examples/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pmanifest.generate import SPEC_SCHEMA_FILE, Generated, generators, main, stale
from pmanifest.io.reading import source_checkout
from pmanifest.render.spec import schema_json

ROOT = Path(__file__).resolve().parent.parent


def test_no_generated_file_is_stale() -> None:
    found = stale()
    assert not found, f"stale: {found}; run python -m pmanifest.generate"
    folders = {Path(g.folder).name for g in generators()}
    assert {"snapshots", "compiled"} <= folders
    if source_checkout() is not None:  # an editable install writes examples/ beside src/
        assert "examples" in folders


def test_the_spec_schema_in_examples_is_current_however_pmanifest_is_installed() -> None:
    # CI installs a wheel, where generate cannot know the checkout: compare with it directly
    shipped = ROOT / "examples" / SPEC_SCHEMA_FILE
    assert shipped.read_text(encoding="utf-8") == schema_json(), \
        f"{shipped} is stale; run python -m pmanifest.generate from an editable install"


def test_check_names_what_is_stale_and_the_command_brings_it_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = {"a.json": '{"a": 1}\n', "b.json": '{"b": 2}\n'}
    found = [Generated(str(tmp_path), lambda: dict(made), ".json")]
    (tmp_path / "a.json").write_text("edited\n")
    (tmp_path / "gone.json").write_text("{}\n")
    (tmp_path / "notes.txt").write_text("kept\n")
    assert main(["--check"], found) == 1
    out = capsys.readouterr().out.splitlines()
    assert sorted(out) == sorted(f"stale: {tmp_path / name} (run python -m pmanifest.generate)"
                                 for name in ("a.json", "b.json", "gone.json"))
    assert main([], found) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == sorted([
        f"removed {tmp_path / 'gone.json'}", f"wrote {tmp_path / 'a.json'}",
        f"wrote {tmp_path / 'b.json'}"])
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {**made,
                                                                   "notes.txt": "kept\n"}
    assert main(["--check"], found) == 0
    assert main([], found) == 0 and capsys.readouterr().out == ""  # twice changes nothing


def test_the_module_runs_as_documented() -> None:
    proc = subprocess.run([sys.executable, "-m", "pmanifest.generate", "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc = subprocess.run([sys.executable, "-m", "pmanifest.generate", "--nonsense"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stderr) == (2, "usage: python -m pmanifest.generate "
                                                 "[--check]\n")
