"""A lint run lists its inputs whole (kustomizations anywhere among them name patches) but lets
each go once it is taken for linting: a tree of 20,000 files does not hold them all to the
end."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmanifest.cli import lint as lint_command
from pmanifest.lint import parallel
from pmanifest.lint.engine import LintOptions
from pmanifest.lint.parallel import Linted
from pmanifest.lint.sources import FileRef, Problem, Source

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"


def test_each_input_is_let_go_of_once_taken(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    names = [str(tmp_path / f"pod-{i}.yaml") for i in range(5)]
    for name in names:
        Path(name).write_text(POD)
    inputs: list[FileRef | Source | Problem] = [FileRef(name) for name in names]
    seen: list[tuple[str, int]] = []  # (file being linted, inputs the run still holds)
    lint_one = parallel._lint_one

    def linted(item: FileRef | Source | Problem, options: LintOptions) -> Linted | Problem:
        assert isinstance(item, FileRef)
        seen.append((item.path, len(inputs)))
        return lint_one(item, options)

    monkeypatch.setattr(parallel, "_lint_one", linted)
    request = lint_command.LintRequest(
        paths=(str(tmp_path),), outputs=(), fail_on=None, kubernetes_version=None,
        profile=None, config_path=None, disable=(), no_schema=False, stdin_filename="-",
        colour=False, jobs=1)
    run = lint_command._Run({})
    lint_command._lint_inputs(inputs, LintOptions(), request, run)
    assert seen == [(name, 4 - i) for i, name in enumerate(names)]  # in order, let go of
    assert run.files == 5 and not inputs
