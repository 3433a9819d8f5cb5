"""``pmanifest lint``: config + flags -> options, sources -> findings -> reports, exit code.

Several reports come from one pass: ``--format`` and ``--output`` pair up in order (a format
without an output, or with ``-``, goes to stdout; at most one does). Files are written
atomically (temp file beside the target, then ``os.replace``), and only after every report
rendered, so an error never leaves a half-written report behind.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, TextIO

from pmanifest.cli.boundary import settled
from pmanifest.cli.outputs import Output, output_targets
from pmanifest.errors import InputError
from pmanifest.io.reading import Identity
from pmanifest.io.writing import STDOUT, Target, Text, identity, plan_outputs, write_targets
from pmanifest.lint.config import Config, config_from, resolve_profile, resolve_rule
from pmanifest.lint.engine import SEVERITY_RANK, LintOptions
from pmanifest.lint.gate import empty_run, foreign_note
from pmanifest.lint.kustomize import is_kustomization, mark_patches
from pmanifest.lint.once import once_per_run
from pmanifest.lint.parallel import Linted, default_jobs, lint_inputs
from pmanifest.lint.passover import TEMPLATE, passed_notes
from pmanifest.lint.platform import Chosen, informed
from pmanifest.lint.progress import Progress
from pmanifest.lint.sources import Exclude, FileRef, Problem, Source, check_paths, iter_inputs
from pmanifest.lint.stored import Stored
from pmanifest.lint.testharness import mark_assertions
from pmanifest.reporters import Summary, reporter
from pmanifest.reporters.text_format import summary_line
from pmanifest.rules import registry

if TYPE_CHECKING:  # a run without --cluster reads no cluster request and no GPU demand
    from pmanifest.cluster.demand import Demand
    from pmanifest.cluster.request import ClusterRequest
    from pmanifest.lint.baseline import Adoption


class LintRequest(NamedTuple):
    """A lint run as the command line asked for it."""

    paths: tuple[str, ...]
    outputs: tuple[Output, ...]
    fail_on: str | None
    kubernetes_version: str | None
    profile: str | None
    config_path: str | None
    disable: tuple[str, ...]
    no_schema: bool
    stdin_filename: str
    colour: bool
    jobs: int | None = None  # None: one per CPU (bounded)
    policies: tuple[str, ...] = ()  # user policy directories (--policies)
    select: tuple[str, ...] = ()  # --select: only these rules (ids or slugs)
    cluster: str | None = None  # --cluster FILE: whole-input capacity rules against it
    allow_empty: bool = False  # --allow-empty: finding no Kubernetes object is not an error
    force_exclude: bool = True  # the config's `exclude:` applies to named paths too
    exclude: tuple[str, ...] = ()  # --exclude GLOB: also skipped, relative to the cwd
    gitignore: bool = True  # directory walks skip what git ignores
    baseline: str | None = None  # --baseline FILE: report only what it does not hold
    fix: str | None = None  # "write" (--fix) or "diff" (--diff): see pmanifest.cli.fix
    write_baseline: str | None = None  # --write-baseline FILE: record the findings there
    no_baseline: bool = False  # --no-baseline: not the config's either
    progress: TextIO | None = None  # a terminal's stderr to draw a progress bar on


class LintResult(NamedTuple):
    """What a lint run prints and its exit code."""

    stdout: Text  # the report that goes to stdout, in pieces as it is made ("": none)
    warnings: list[str]  # stderr lines to print before the findings
    summary: str  # the one-line summary, printed on stderr after the findings
    exit_code: int
    notes: tuple[str, ...] = ()  # stderr lines after the summary (what a baseline held)


def options_for(request: LintRequest, config: Config) -> LintOptions:
    from pmanifest.kube.profile import DEFAULT_PROFILE
    from pmanifest.schema.kubernetes import DEFAULT_KUBERNETES_VERSION, resolve_version

    version = resolve_version(
        request.kubernetes_version or config.kubernetes_version or DEFAULT_KUBERNETES_VERSION
    )
    profile = request.profile or config.profile or DEFAULT_PROFILE
    resolved = resolve_profile(profile, config)  # refuse unknown profiles before linting
    severities = dict(config.rules)
    for name in request.disable:
        severities[resolve_rule(name)] = "off"
    if request.no_schema:
        severities["PM002"] = "off"
    select = frozenset(resolve_rule(name) for name in request.select) or None
    return LintOptions(version, profile, severities, select=select, roles=config.roles,
                       cluster=_cluster(request.cluster),
                       inline_suppressions=config.inline_suppressions, resolved=resolved)


def _cluster(path: str | None) -> ClusterRequest | None:
    """The cluster request of --cluster, read before any manifest (None without it)."""
    if path is None:
        return None
    from pmanifest.cluster.request import read_request

    return read_request(path)


def run_lint(request: LintRequest) -> LintResult:
    """Write the file reports; return what to print and the exit code.
    Raises PmanifestError for exit-2 problems."""
    settled()  # (what lint works with is loaded)
    config = config_from(request.config_path)
    with user_policies(config, request.policies):
        return lint_with(request, config)


@contextlib.contextmanager
def user_policies(config: Config, dirs: tuple[str, ...]) -> Iterator[None]:
    """User policies (config `policies:`, then --policies) join the registry for one run."""
    if not config.policies and not dirs:  # the policy modules load only when there are some
        yield
        return
    from pmanifest.policy import load_policy_dirs
    from pmanifest.rules import registered

    with registered(p.rule() for p in config.policies), \
            registered(p.rule() for p in load_policy_dirs(dirs)):
        yield


@dataclass
class _Run:
    """What one lint run collected from its inputs."""

    read: dict[Identity, str]  # every file read (no output may replace one)
    # what only some runs need, kept only then (a tree of 20,000 files costs megabytes):
    to_files: bool = False  # a report goes to a file: ``read`` collects every linted file
    with_cluster: bool = False  # --cluster: ``order`` places the whole-input findings
    findings: Stored = field(default_factory=Stored)
    messages: list[str] = field(default_factory=list)  # stderr lines
    files: int = 0
    objects: int = 0
    skipped: int = 0  # objects of kinds pmanifest cannot read
    fragments: int = 0
    foreign: int = 0  # YAML documents that are no Kubernetes object
    foreign_files: int = 0  # the files holding them
    passed: Counter[str] = field(default_factory=Counter)  # what was passed over, not linted
    rules: int = 0  # rules the run applied
    checked: list[tuple[str, str]] = field(default_factory=list)  # (file, object), for JUnit
    demands: list[Demand] = field(default_factory=list)  # GPU demand (with --cluster)
    order: dict[str, int] = field(default_factory=dict)  # file -> its place in the input
    kept: dict[str, bytes] = field(default_factory=dict)  # what stdin and FIFOs held (--cluster)
    profile: Chosen | None = None  # the run's profile and why

    def add(self, linted: Linted | Problem) -> None:
        if isinstance(linted, Problem):
            if linted.named:  # the user asked for this file: a gate must not pass without it
                raise InputError(linted.message, linted.name)
            self.messages.append(f"{linted.name}: warning: {linted.message}")
            return
        self.files += 1
        if self.with_cluster:
            self.order.setdefault(linted.name, len(self.order))
        if self.to_files and linted.identity is not None:
            self.read.setdefault(linted.identity, linted.name)
        self.findings.extend(linted.result.findings)
        self.demands.extend(linted.result.demands)
        self.objects += linted.result.objects
        self.skipped += linted.result.skipped
        self.fragments += linted.result.fragments
        if linted.result.foreign and not is_kustomization(linted.name):  # (read as one)
            self.foreign += linted.result.foreign
            self.foreign_files += 1
        self.passed.update(dict(linted.result.passed))
        self.checked.extend((linted.name, label) for label in linted.result.labels)

    def read_again(self, name: str) -> bytes | None:
        """A linted file's bytes once more, to locate late findings: a regular file is read
        again (through the one reader: never a FIFO, which would wait for a writer that is
        gone); what stdin or a FIFO held was kept when it was read."""
        if name in self.kept:
            return self.kept[name]
        from pmanifest.io.reading import Unreadable, read_limited

        try:
            return read_limited(name, regular_only=True, record=False)[0]
        except (OSError, Unreadable):
            return None

    @property
    def summary(self) -> Summary:
        return Summary.of(self.findings, self.files, self.objects, tuple(self.checked),
                          self.skipped, rules=self.rules, fragments=self.fragments,
                          profile=self.profile and (self.profile.name, self.profile.why))


class Collected(NamedTuple):
    """A lint run's findings before the baseline and the reports: what ``--fix`` reads."""

    run: _Run
    options: LintOptions
    exclude: Exclude
    adopted: Adoption | None  # the baseline read or written (None: no baseline)


def adoption(request: LintRequest, config: Config) -> Adoption | None:
    """The run's baseline (pmanifest.lint.baseline), read now; None when it has none."""
    configured = None if request.no_baseline else config.baseline
    if request.baseline is None and request.write_baseline is None and configured is None:
        return None  # (the baseline module is not even loaded)
    from pmanifest.lint.baseline import Adoption

    return Adoption.of(request.baseline, request.write_baseline, request.no_baseline,
                       config.baseline)


def collect(request: LintRequest, config: Config) -> Collected:
    """Lint every input of ``request`` (outputs planned, the baseline read first)."""
    options = options_for(request, config)
    if any(o.format == "junit" for o in request.outputs):
        options = options._replace(record_objects=True)
    check_paths(request.paths)
    run = _new_run(request, config)
    run.rules = sum(1 for rule_id in registry() if options.enabled(rule_id))
    adopted = adoption(request, config)  # read before any manifest
    plan_outputs([*output_targets(request.outputs),
                  *(adopted.targets() if adopted else [])], run.read)
    exclude = Exclude(config.exclude, config.base_dir, request.force_exclude, request.exclude)
    keep = options.cluster is not None or request.fix is not None  # stdin, to read it again
    found = _kept(iter_inputs(request.paths, request.stdin_filename, exclude, request.gitignore),
                  run, keep)
    inputs = mark_assertions(mark_patches(list(found)))
    given = "--profile" if request.profile else "the config's profile:" if config.profile \
        else None
    options, run.profile = informed(options, inputs, given, list(config.profiles.values()))
    _lint_inputs(inputs, options, request, run)
    run.findings = Stored.of(once_per_run(run.findings))
    if run.demands:
        run.findings = _with_input_findings(run, options)
    return Collected(run, options, exclude, adopted)


def lint_with(request: LintRequest, config: Config) -> LintResult:
    """The lint run ``request`` asks for, under ``config`` (user policies registered)."""
    run, _, exclude, adopted = collect(request, config)
    fail_on = request.fail_on or config.fail_on or "error"
    written: dict[Target, str] = {}
    notes: list[str] = []
    if adopted is not None:
        run.findings, written, notes = adopted.apply(run.findings)
    notes[:0] = passed_notes(run.passed)
    if run.foreign:
        notes.insert(0, foreign_note(run.foreign, run.foreign_files))
    threshold = SEVERITY_RANK[fail_on]
    failed = any(SEVERITY_RANK[f.severity] >= threshold for f in run.findings)
    if run.objects == 0 and not failed and not request.allow_empty:
        _nothing_checked(request, run, exclude)
    stdout = _reports(request, run, written)
    said = [f"profile {run.profile.name}, {run.profile.why}"] \
        if run.profile is not None and run.profile.inferred else []
    return LintResult(stdout, run.messages, summary_line(run.summary), 1 if failed else 0,
                      (*said, *notes))


def _new_run(request: LintRequest, config: Config) -> _Run:
    return _Run(_other_inputs(request, config),
                to_files=any(o.path != STDOUT for o in request.outputs)
                or request.write_baseline is not None,
                with_cluster=request.cluster is not None)


def _nothing_checked(request: LintRequest, run: _Run, exclude: Exclude) -> None:
    """A gate that checked no object must not pass: exit 2 naming what was read."""
    named = [request.stdin_filename if p == "-" else p for p in request.paths]
    by = " or ".join([*(["the config's exclude:"] if exclude.patterns else []),
                      *(["--exclude"] if exclude.given else [])])
    from pmanifest.lint.leftout import left_out  # what the directory walks left out, if any

    left = left_out(request.paths, exclude, request.gitignore).describe()
    raise InputError(empty_run(named, run.files, run.fragments,
                               len(exclude.named_excluded(request.paths)), by, left,
                               run.passed[TEMPLATE]))


def _lint_inputs(inputs: list[FileRef | Source | Problem], options: LintOptions,
                 request: LintRequest, run: _Run) -> None:
    """Lint every input into ``run``, with a progress bar on a terminal."""
    jobs = request.jobs if request.jobs is not None else default_jobs()
    progress = Progress(request.progress, len(inputs)) if request.progress else None
    try:
        for linted in lint_inputs(_drained(inputs), options, jobs):
            run.add(linted)
            if progress is not None:
                progress.advance()
    finally:
        if progress is not None:
            progress.close()


def _drained(items: list[FileRef | Source | Problem]) -> Iterator[FileRef | Source | Problem]:
    """The items in order, each let go of as it is taken: the inputs are listed whole before
    linting (kustomizations anywhere among them name patches), not kept whole while linting
    (a tree of 20,000 files holds about 2 MiB of them)."""
    items.reverse()
    while items:
        yield items.pop()


def _reports(request: LintRequest, run: _Run, written: Mapping[Target, str]) -> Text:
    """Write every report file of the run (with ``written``: the baseline); return the report
    that goes to stdout, made as it is written."""
    summary = run.summary
    stdout: Text = ""
    reports: dict[Target, Text] = dict(written)
    for output in request.outputs:
        colour = request.colour and output.path == STDOUT
        text = reporter(output.format)(run.findings, summary, colour)
        if output.path == STDOUT:
            stdout = text
        else:
            reports[Target("--output", output.path)] = text
    write_targets(reports, run.read, "report")
    return stdout


def _kept(items: Iterator[FileRef | Source | Problem], run: _Run,
          keep: bool) -> Iterator[FileRef | Source | Problem]:
    """The inputs, keeping what stdin and FIFOs held when they are read again (--cluster,
    --diff; a FIFO is read here, once, instead of in a worker)."""
    for item in items:
        if keep and isinstance(item, FileRef) and _is_fifo(item.path):
            item = item.read()
        if keep and isinstance(item, Source):
            run.kept[item.name] = item.raw
        yield item


def _is_fifo(path: str) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _with_input_findings(run: _Run, options: LintOptions) -> Stored:
    """The whole-input rules' findings, each in its file's place (files in input order; the
    findings of a run with --cluster are sorted whole)."""
    from pmanifest.lint.cluster import input_findings

    extra = input_findings(run.demands, options, run.read_again)
    if not extra:
        return run.findings
    order = run.order
    return Stored(sorted([*run.findings, *extra], key=lambda f: (order.get(f.file, len(order)),
                                                                 *f.sort_key()[1:])))


def _other_inputs(request: LintRequest, config: Config) -> dict[Identity, str]:
    """The files a lint run reads besides the manifests: named paths, the config file and the
    policy files (identity -> name as given)."""
    names = [p for p in request.paths if p != "-"]
    if request.cluster is not None and request.cluster != "-":
        names.append(request.cluster)
    if config.source is not None:
        names.append(config.source)
    names.extend(p.source for p in config.policies)
    if request.policies:
        from pmanifest.policy import policy_files

        for directory in request.policies:
            names.extend(str(f) for f in policy_files(directory))
    found: dict[Identity, str] = {}
    for name in names:
        key = identity(name)
        if key is not None:
            found.setdefault(key, name)
    return found
