"""``pmanifest lint --fix`` and ``--diff``: lint, write every safe fix into its file
(``pmanifest.lint.fixes``: the smallest edits, checked by parsing the file again), then lint
again and report what is left.

``--fix`` writes the fixed files through the one writer (atomically, all together, each
keeping its permissions; a symbolic link keeps pointing at its file). ``--diff`` writes
nothing: the unified diff of what ``--fix`` would write goes to stdout, and the exit code is 1
when there is one (0 when nothing would change), as ``ruff --diff`` does. Every fix that is
not applied is said on stderr with its reason, at its finding's place. Stdin can be shown
(``--diff``) but not written back (``--fix`` refuses it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from pmanifest.cli.lint import (
    LintRequest,
    LintResult,
    adoption,
    collect,
    lint_with,
    user_policies,
)
from pmanifest.cli.outputs import output_targets
from pmanifest.errors import ConfigError
from pmanifest.io.reading import Identity, Unreadable, read_limited
from pmanifest.io.writing import (
    Target,
    input_identities,
    plan_outputs,
    refuse_inputs,
    write_targets,
)
from pmanifest.kube.document import Finding
from pmanifest.lint.engine import lint_file
from pmanifest.lint.fixes import Fixed, fix_file

if TYPE_CHECKING:
    from pmanifest.lint.config import Config
    from pmanifest.lint.engine import LintOptions


def run_fixes(request: LintRequest) -> LintResult:
    """``lint --fix`` or ``--diff`` as the command line asked for it."""
    from pmanifest.lint.config import config_from

    config = config_from(request.config_path)
    with user_policies(config, request.policies):
        return run_fix(request, config)


def run_fix(request: LintRequest, config: Config) -> LintResult:
    """Fix (or show the diff), then what a lint of the result reports (--fix)."""
    if request.fix == "write" and "-" in request.paths:
        raise ConfigError("--fix writes the fixed files back; stdin has none: use --diff to "
                          "see the fixes")
    # what the report after the fixes will refuse is refused before any file is fixed
    adopted = adoption(request, config)
    plan_outputs([*output_targets(request.outputs),
                  *(adopted.targets() if adopted else [])], {})
    found = collect(request._replace(write_baseline=None, no_baseline=True, baseline=None),
                    config)
    # no report may go over a file the run read (collected since: --output makes it so)
    refuse_inputs([o.path for o in request.outputs], found.run.read, "--output")
    by_file: dict[str, list[Finding]] = {}
    for finding in found.run.findings:
        if finding.fix is not None:
            by_file.setdefault(finding.file, []).append(finding)
    fixed: dict[str, tuple[bytes, Fixed]] = {}
    for name, findings in by_file.items():
        raw = found.run.kept.get(name) if name in found.run.kept else _read(name)
        if raw is not None:
            fixed[name] = (raw, fix_file(raw, findings, _relint(name, found.options)))
    messages = _said(fixed, request.fix == "diff")
    if request.fix == "diff":
        diff = "".join(_diff(name, before, after.raw) for name, (before, after)
                       in fixed.items())
        return LintResult(diff, messages[:-1], messages[-1], 1 if diff else 0)
    _write({name: after.raw for name, (before, after) in fixed.items()
            if after.raw != before}, config, request)
    result = lint_with(request, config)
    return result._replace(warnings=[*messages, *result.warnings])


def _read(name: str) -> bytes | None:
    try:
        return read_limited(name)[0]
    except (Unreadable, OSError):  # gone since it was linted: nothing to fix there
        return None


def _relint(name: str, options: LintOptions) -> Callable[[bytes], list[Finding]]:
    def relint(raw: bytes) -> list[Finding]:
        return lint_file(raw, name, options).findings

    return relint


def _said(fixed: dict[str, tuple[bytes, Fixed]], preview: bool) -> list[str]:
    """stderr: what was not fixed and why, each at its finding; then one line of totals."""
    lines = []
    applied = files = 0
    for name, (_, outcome) in fixed.items():
        if outcome.applied:
            applied += len(outcome.applied)
            files += 1
        for finding, reason in outcome.skipped:
            lines.append(f"{name}:{finding.line}:{finding.column}: {finding.rule}"
                         f"[{finding.slug}] not fixed: {reason}")
    skipped = sum(len(outcome.skipped) for _, outcome in fixed.values())
    verb = "would fix" if preview else "fixed"
    total = (f"pmanifest: {verb} {applied} finding{'' if applied == 1 else 's'} in {files} "
             f"file{'' if files == 1 else 's'}")
    if skipped:
        total += f"; {skipped} not fixed (said above)"
    return [*lines, total]


def _diff(name: str, before: bytes, after: bytes) -> str:
    if before == after:
        return ""
    import difflib

    from pmanifest.io.terminal import file_lines, shown_diff

    old = file_lines(before.decode("utf-8"))
    new = file_lines(after.decode("utf-8"))
    return shown_diff(list(difflib.unified_diff(old, new, f"{name} (now)", f"{name} (fixed)")))


def _write(files: dict[str, bytes], config: Config, request: LintRequest) -> None:
    """Every fixed file, atomically, together: each replaces the file it was made from, and
    none may be the config, a policy or the cluster request (nor one file under two names)."""
    unique: dict[str, str] = {}
    for name in files:
        unique.setdefault(os.path.realpath(name), name)
    targets = {Target("--fix", name, update=True): files[name].decode("utf-8")
               for name in unique.values()}
    others: dict[Identity, str] = input_identities(
        [*([config.source] if config.source else []), *(p.source for p in config.policies),
         *([request.cluster] if request.cluster and request.cluster != "-" else [])])
    plan_outputs(list(targets), others)
    write_targets(targets, others, "the fixed files")
