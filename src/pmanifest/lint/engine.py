"""The lint engine: bytes of one file in, findings out.

Parsing goes through the loader; each Kubernetes object (``kind: List`` items each at their
own position) is handed to every enabled rule according to what the rule applies to: object
rules see the object, workload rules each of its pod templates (with its role and placement).
Rules name paths, never positions: positions of a document's findings are looked up in one
batch after its rules ran, so a document with many findings is parsed again once, not once per
finding. Suppressions (annotations, inline comments) are applied here so no rule knows them;
one that suppresses nothing is reported (PM005). Patch fragments are not linted (PM007), nor
YAML that is no object (no apiVersion and kind: another tool's, whatever tags it uses, or a
file that breaks YAML and names neither key, see :mod:`.broken`; counted).
Nor are unrendered templates and test assertions (:mod:`.passover`): counted, said once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from pmanifest.catalogue import lowered
from pmanifest.kube.document import Document, Finding, ObjectRef
from pmanifest.kube.kinds import Runtimes
from pmanifest.kube.kustomized import Built
from pmanifest.kube.profile import DEFAULT_PROFILE, Profile, get_profile
from pmanifest.kube.provider import document_profile
from pmanifest.kube.workloads import (
    Workload,
    annotation_paths,
    api_group,
    find,
    kind_matches,
    unread,
    workloads_of,
)
from pmanifest.lint.broken import KeyScan
from pmanifest.lint.collected import Collected, FileResult
from pmanifest.lint.fragments import fragment
from pmanifest.lint.passover import ASSERTION, PLACEHOLDER, TEMPLATE_FILE
from pmanifest.lint.suppress import (
    SUPPRESSION_MARK,
    Metas,
    annotation_ignores,
    annotation_problems,
    comment_findings,
    suppressing_line,
)
from pmanifest.lint.testharness import is_pattern, may_hold_pattern
from pmanifest.loader.documents import Broken, Loaded, YamlProblem, decode, load_documents
from pmanifest.loader.positions import Pos, dotted
from pmanifest.rules import Context, Hit, ObjectContext, Rule, registry
from pmanifest.schema.kubernetes import DEFAULT_KUBERNETES_VERSION
from pmanifest.schema.placeholders import holds, may_hold

if TYPE_CHECKING:
    from pmanifest.cluster.request import ClusterRequest

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
SUPPRESSION_RULE = "PM005"  # a suppression that suppresses nothing
FRAGMENT_RULE = "PM007"  # a patch fragment, not linted
# a file that does not parse is never silently passed, nor a patch fragment silently skipped
# (also with --select)
ALWAYS = ("PM001", FRAGMENT_RULE)


class LintOptions(NamedTuple):
    """How one lint run is set up: version, profile, rule selection, roles."""

    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    profile_name: str = DEFAULT_PROFILE
    severities: Mapping[str, str] = MappingProxyType({})  # rule id -> severity or "off"
    record_objects: bool = False  # keep the label of every object (JUnit lists them all)
    select: frozenset[str] | None = None  # run only these rule ids (None: every rule)
    roles: tuple[tuple[str, str], ...] = ()  # config `roles:`: (Kind or group/Kind, role)
    cluster: ClusterRequest | None = None  # --cluster: whole-input capacity rules run
    inline_suppressions: bool = True  # honour ignore comments and annotations (config)
    resolved: Profile | None = None  # the profile itself (a config's custom profile)
    built: Built | None = None  # (per file: see lint_file)
    others: tuple[Profile, ...] = ()  # inferred for a mixed input: the other providers'
    runtimes: Runtimes = MappingProxyType({})  # the serving runtimes the input defines

    @property
    def profile(self) -> Profile:
        return self.resolved if self.resolved is not None else get_profile(self.profile_name)

    def severity_of(self, rule: Rule) -> str:
        return self.severities.get(rule.meta.id, rule.meta.severity)

    def enabled(self, rule_id: str) -> bool:
        if self.severities.get(rule_id) == "off":
            return False
        return self.select is None or rule_id in self.select or rule_id in ALWAYS


def lint_bytes(raw: bytes, file: str, options: LintOptions) -> list[Finding]:
    """All findings for one file, sorted by position (whole-input rules included, the file
    being the whole input, its ComputeClasses included)."""
    if b"ComputeClass" in raw or b"ServingRuntime" in raw:  # (what the whole input tells)
        from pmanifest.lint.inputscan import scan
        facts = scan([raw], ())
        options = options._replace(resolved=options.profile.with_standard_classes(
            facts.standard_classes), runtimes=facts.runtimes)
    result = lint_file(raw, file, options)
    if not result.demands:
        return result.findings
    from pmanifest.lint.cluster import input_findings

    extra = input_findings(result.demands, options, lambda _: raw)
    return sorted(result.findings + extra, key=Finding.sort_key)


def lint_file(raw: bytes, file: str, options: LintOptions, patch_of: str | None = None,
              built: Built | None = None, assertion: bool = False) -> FileResult:
    """Findings and counts for one file; ``patch_of``: the kustomization naming it a patch (see
    :mod:`.fragments`); ``built``: a kustomize resource's build; ``assertion``: patterns."""
    try:
        text = decode(raw)
    except YamlProblem as problem:
        return FileResult(_syntax_findings(file, problem, options), 0)
    lines = tuple(text.split("\n"))
    options = options._replace(built=built) if built is not None else options
    rules = [r for r in registry().values() if r.check is not None
             and r.applies in ("workload", "object") and options.enabled(r.meta.id)]
    out, template = _documents(text, file, lines, rules, options, patch_of, built, assertion)
    if template:  # (its comments are not read: the documents that hid something may be gone)
        out.passed.update(dict(TEMPLATE_FILE))
        return out.result(counted_only=True)
    if SUPPRESSION_MARK in text and options.enabled(SUPPRESSION_RULE):
        out.findings.extend(comment_findings(
            file, lines, options.inline_suppressions,
            options.severity_of(registry()[SUPPRESSION_RULE]), _checked(rules, out), out.used,
            out.findings))
    return out.result()


def _documents(text: str, file: str, lines: tuple[str, ...], rules: list[Rule],
               options: LintOptions, patch_of: str | None, built: Built | None,
               assertion: bool) -> tuple[Collected, bool]:
    """What the documents of a file add up to, and whether it is an unrendered template.

    A file is an unrendered template once a document breaks where a {{ }} placeholder stands:
    then its other broken documents and those with a {{ in their own text are templates too
    (passed over: lint the rendered output), and those without are plain objects, linted (a
    GPU Deployment before a Secret whose value is {{HF_TOKEN}}). Until the file is known to
    be one, what the documents that may be templates gave waits in ``pending``."""
    out, pending, template = Collected(), Collected(), False
    patterns, dollar = may_hold_pattern(text), may_hold(text)  # (cheap tests first)
    scan = KeyScan(text)
    for item in load_documents(text, foreign_tags=True, kustomize=built is not None):
        if isinstance(item, Broken) and item.problem.templated:  # lint the rendered output
            template, pending = True, Collected()
        maybe = isinstance(item, Broken) or item.braces
        if template and maybe:
            continue
        into = pending if maybe else out
        if isinstance(item, Broken) and scan.not_a_manifest(item.problem):  # (lint.broken)
            into.broken, into.foreign = True, into.foreign + 1
            continue
        _lint_item(item, file, lines, rules, options, into, patch_of, assertion, patterns)
        into.passed[PLACEHOLDER] |= dollar and holds(item)
    if not template:
        out.add(pending)
    return out, template


def _lint_item(item: Loaded | Broken, file: str, lines: tuple[str, ...], rules: list[Rule],
               options: LintOptions, out: Collected, patch_of: str | None,
               assertion: bool, patterns: bool) -> None:
    """Lint a document, unless it is another tool's YAML or a test's pattern (counted)."""
    if isinstance(item, Broken):
        out.broken = True
        out.findings.extend(_syntax_findings(file, item.problem, options))
        return
    doc = Document(file, item.number, item.data, item.positions, lines)
    if not doc.is_kubernetes:  # CloudFormation, CI, configuration, whatever its tags:
        out.foreign += 1  # not linted (counted, and the run says so)
    elif item.tag_problem is not None:  # a Kubernetes object: kubectl refuses the tag
        out.broken = True
        out.findings.extend(_syntax_findings(file, item.tag_problem, options))
    elif assertion or (patterns and is_pattern(doc.data)):
        out.passed[ASSERTION] += 1
    else:
        _lint_document(doc, rules, options, out, patch_of, item.dollar)


def _lint_document(doc: Document, rules: list[Rule], options: LintOptions,
                   out: Collected, patch_of: str | None, dollar: bool = True) -> None:
    checked: list[tuple[Document, list[tuple[Rule, Hit]], Metas | None]] = []
    whole = []
    if options.others:  # a mixed input: a document that names another provider's label is its
        options = options._replace(resolved=document_profile(doc.data, options.profile,
                                                             options.others))
    profile = options.profile
    for obj in _objects(doc):
        found = fragment(obj, patch_of, dollar)
        if found is not None:  # a patch fragment: not linted, PM007 says so
            out.fragments += 1
            checked.append((obj, _fragment_hits(found, options), None))
            continue
        templates = tuple(find(obj.data))  # read once, for the workloads and suppressions
        workloads = workloads_of(obj, profile, options.roles, templates)
        metas = annotation_paths(obj, templates)
        out.skipped += unread(obj, workloads)
        checked.append((obj, _hits(obj, workloads, metas, rules, options), metas))
        whole.append(obj)
    out.objects += len(whole)
    if options.record_objects:
        out.labels.extend(ObjectRef(o.kind, o.name, o.namespace).label() for o, _, _ in checked)
    # every finding of the document (List items included) is located in one pass
    doc.positions.prefetch(obj.positions.absolute(path)
                           for obj, hits, _ in checked for _, hit in hits
                           for path in _paths(hit))
    seen: dict[int, set[str]] = {}  # each line's ignore comment, read once for the document
    for obj, hits, known in checked:
        out.findings.extend(_findings(obj, hits, options, known, out.used, seen))
    if options.cluster is not None:  # lint --cluster: the GPU demand of each workload
        _collect_demands(doc, whole, options, out)


def _collect_demands(doc: Document, objects: list[Document], options: LintOptions,
                     out: Collected) -> None:
    """The GPU demand of the document's whole objects (patch fragments have none)."""
    from pmanifest.lint.cluster import demands_of, object_prefixes, wants_demands

    if wants_demands(options):
        prefixes = object_prefixes(doc.data)
        for obj in objects:
            out.demands.extend(demands_of(obj, prefixes.get(id(obj.data), ()), options))


def _fragment_hits(found: tuple[tuple[str | int, ...], str],
                   options: LintOptions) -> list[tuple[Rule, Hit]]:
    if not options.enabled(FRAGMENT_RULE):
        return []
    path, message = found
    return [(registry()[FRAGMENT_RULE], Hit(path, message))]


def _checked(rules: list[Rule], out: Collected) -> frozenset[str]:
    """The rules whose every finding in the file was looked for, so that a comment naming one
    of them that suppressed nothing is on the wrong line: none when a document did not parse
    or held a patch fragment (neither is linted)."""
    if out.broken or out.fragments or out.passed[ASSERTION]:
        return frozenset()
    return frozenset({*(r.meta.id for r in rules), SUPPRESSION_RULE})


def _syntax_findings(file: str, problem: YamlProblem, options: LintOptions) -> list[Finding]:
    rule = registry()["PM001"]
    if not options.enabled("PM001"):
        return []
    return [Finding(rule.meta.id, rule.meta.slug, options.severity_of(rule), file, problem.line,
                    problem.column, ObjectRef(None, None, None), "", problem.message)]


def _objects(doc: Document) -> Iterator[Document]:
    """The Kubernetes objects of a document: itself, or each item of a ``kind: List``."""
    if not doc.is_kubernetes:
        return
    items = doc.data.get("items")
    if doc.kind is not None and doc.kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            positions = doc.positions.child(("items",), i)
            sub = Document(doc.file, doc.number, item, positions, doc.source_lines,
                           (*doc.prefix, "items", i))
            yield from _objects(sub)
        return
    yield doc


def _hits(doc: Document, workloads: tuple[Workload, ...], metas: Metas, rules: list[Rule],
          options: LintOptions) -> list[tuple[Rule, Hit]]:
    """What every enabled rule reports about one object. A rule with ``kinds`` sees only
    objects (object rules: the object, or an object embedded in it) or pod templates (workload
    rules) of those kinds; the kind of a template is that of the object holding it (an
    embedded object's own kind). A workload rule with ``roles`` sees only pod templates of
    those roles. Each rule sees the same context (one per object, one per pod template)."""
    profile = options.profile
    version = options.kubernetes_version
    # a pod that selects one of the profile's compute classes is governed by theirs
    contexts = [Context(w, profile.for_pod(w.pod), version, options.runtimes)
                for w in workloads]
    whole = ObjectContext(doc, workloads, profile, version, options.built)
    hits: list[tuple[Rule, Hit]] = []
    for rule in rules:
        assert rule.check is not None
        if rule.applies != "object":
            _workload_hits(rule, contexts, hits)
            continue
        kinds = rule.meta.kinds
        if kinds and not kind_matches(kinds, api_group(doc), doc.kind) and not any(
                kind_matches(kinds, w.group, w.kind) for w in workloads):
            continue
        hits.extend([(rule, hit) for hit in rule.check(whole)])
    if options.enabled(SUPPRESSION_RULE):  # suppressions on the object that suppress nothing
        rule = registry()[SUPPRESSION_RULE]
        hits.extend((rule, Hit(path, message, value=True)) for path, message
                    in annotation_problems(doc, options.inline_suppressions, metas))
    return hits


def _workload_hits(rule: Rule, contexts: list[Context], hits: list[tuple[Rule, Hit]]) -> None:
    """Add what a workload rule reports about the pod templates of its kinds and roles."""
    check = rule.check
    assert check is not None
    kinds, roles = rule.meta.kinds, rule.meta.roles
    for context in contexts:
        workload = context.workload
        if kinds and not kind_matches(kinds, workload.group, workload.kind):
            continue
        if roles and workload.role not in roles:
            continue
        hits.extend([(rule, hit) for hit in check(context)])


def _paths(hit: Hit) -> tuple[tuple[str | int, ...], ...]:
    """The paths whose positions a hit needs."""
    if hit.pos is not None:
        return ()
    return (hit.path,) if hit.mention is None else (hit.path, hit.mention.path)


def _findings(doc: Document, hits: list[tuple[Rule, Hit]], options: LintOptions,
              metas: Metas | None = None, used: set[tuple[int, str]] | None = None,
              seen: dict[int, set[str]] | None = None) -> list[Finding]:
    """Hits, less the suppressed ones, as findings at their positions; ``used`` collects the
    (line, rule) of every comment that suppressed one (``seen``: the ignore comments of the
    lines read so far, shared by the objects of a document)."""
    honoured = options.inline_suppressions
    ignored = annotation_ignores(doc, metas) if hits and honoured else set()
    out = []
    seen = {} if seen is None else seen
    for rule, hit in hits:
        if rule.meta.id in ignored:
            continue
        pos = position(doc, hit)
        line = suppressing_line(doc, pos, rule.meta.id, seen) if honoured else None
        if line is not None:
            if used is not None:
                used.add((line, rule.meta.id))
            continue
        out.append(_finding(doc, rule, hit, pos, options))
    return out


def position(doc: Document, hit: Hit) -> Pos:
    """Where a hit points: inside a script, at a value, or at a key."""
    if hit.pos is not None:
        return hit.pos
    if hit.inner is not None:
        from pmanifest.shell import script_pos

        return script_pos(doc, hit.path, hit.inner)
    return doc.positions.value_at(hit.path) if hit.value else doc.positions.at(hit.path)


def _finding(doc: Document, rule: Rule, hit: Hit, pos: Pos, options: LintOptions) -> Finding:
    message = hit.message
    if hit.mention is not None:
        line = position(doc, Hit(hit.mention.path, "", inner=hit.mention.inner)).line
        cut = hit.mention.at
        message = f"{message[:cut]} (line {line}){message[cut:]}"
    return Finding(
        rule=rule.meta.id,
        slug=rule.meta.slug,
        severity=lowered(options.severity_of(rule)) if hit.lower else
        options.severity_of(rule),
        file=doc.file,
        line=pos.line,
        column=pos.column,
        object=_object_ref(doc),
        path=dotted(hit.path),
        message=message,
        fix=hit.fix._replace(path=(*doc.prefix, *hit.fix.path)) if hit.fix else None,
    )


def _object_ref(doc: Document) -> ObjectRef:
    """What a finding is about, its kind and namespace one string for every finding (a tree
    of 20,000 files can hold thousands of findings until the report)."""
    kind, namespace, version = doc.kind, doc.namespace, doc.api_version
    return ObjectRef(None if kind is None else sys.intern(str(kind)), doc.name,
                     None if namespace is None else sys.intern(str(namespace)),
                     None if version is None else sys.intern(str(version)))
