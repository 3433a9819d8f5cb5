"""The lint engine: bytes of one file in, findings out.

Parsing goes through the loader; each Kubernetes object (``kind: List`` items each at their
own position) is schema-checked, viewed as a workload and handed to every enabled rule.
Suppressions (annotations, inline comments) are applied here so no rule knows about them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from pmanifest.document import Document, Finding, ObjectRef, Path, Pos, dotted
from pmanifest.loader import Broken, YamlProblem, decode, load_documents
from pmanifest.profile import DEFAULT_PROFILE, Profile, get_profile
from pmanifest.rules import Context, Hit, ObjectContext, Rule, lookup, registry
from pmanifest.schema import DEFAULT_KUBERNETES_VERSION
from pmanifest.workloads import workload_of

IGNORE_ANNOTATION = "pmanifest.io/ignore"
_INLINE_IGNORE = re.compile(r"#\s*pmanifest:\s*ignore=([A-Za-z0-9_,\- ]+?)(?:\s+reason=.*)?\s*$")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class LintOptions:
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    profile_name: str = DEFAULT_PROFILE
    severities: dict[str, str] = field(default_factory=dict)  # rule id -> severity or "off"
    record_objects: bool = False  # keep the label of every object (JUnit lists them all)

    @property
    def profile(self) -> Profile:
        return get_profile(self.profile_name)

    def severity_of(self, rule: Rule) -> str:
        return self.severities.get(rule.meta.id, rule.meta.severity)

    def enabled(self, rule_id: str) -> bool:
        return self.severities.get(rule_id) != "off"


@dataclass(frozen=True)
class FileResult:
    findings: list[Finding]
    objects: int  # Kubernetes objects seen
    labels: tuple[str, ...] = ()  # their labels, with LintOptions.record_objects


def lint_bytes(raw: bytes, file: str, options: LintOptions) -> list[Finding]:
    """All findings for one file, sorted by position."""
    return lint_file(raw, file, options).findings


def lint_file(raw: bytes, file: str, options: LintOptions) -> FileResult:
    try:
        text = decode(raw)
    except YamlProblem as problem:
        return FileResult(_syntax_findings(file, problem, options), 0)
    lines = tuple(text.split("\n"))
    findings: list[Finding] = []
    objects = 0
    labels: list[str] = []
    for item in load_documents(text):
        if isinstance(item, Broken):
            findings.extend(_syntax_findings(file, item.problem, options))
            continue
        doc = Document(file, item.index, item.data, item.positions, lines)
        checked = [(obj, _hits(obj, options)) for obj in _objects(doc)]
        objects += len(checked)
        if options.record_objects:
            labels.extend(ObjectRef(o.kind, o.name, o.namespace).label() for o, _ in checked)
        # where positions are looked up path by path (a very large document), every finding
        # of the document, List items included, is located in one pass
        doc.positions.prefetch(obj.positions.absolute(hit.path)
                               for obj, hits in checked for _, hit in hits if hit.pos is None)
        for obj, hits in checked:
            findings.extend(_findings(obj, hits, options))
    return FileResult(sorted(findings, key=Finding.sort_key), objects, tuple(labels))


def _syntax_findings(file: str, problem: YamlProblem, options: LintOptions) -> list[Finding]:
    rule = registry()["PM001"]
    if not options.enabled("PM001"):
        return []
    message = problem.message
    if problem.templated:
        message += " (an unrendered Helm template? lint `helm template` output)"
    return [Finding(rule.meta.id, rule.meta.slug, options.severity_of(rule), file, problem.line,
                    problem.column, ObjectRef(None, None, None), "", message)]


def _objects(doc: Document) -> Iterator[Document]:
    """The Kubernetes objects of a document: itself, or each item of a ``kind: List``."""
    if not doc.is_kubernetes:
        return
    items = doc.data.get("items")
    if doc.kind is not None and doc.kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            positions = doc.positions.child(("items",), i)
            sub = Document(doc.file, doc.index, item, positions, doc.source_lines)
            yield from _objects(sub)
        return
    yield doc


def _hits(doc: Document, options: LintOptions) -> list[tuple[Rule, Hit]]:
    """What every enabled rule reports about one object."""
    rules = registry()
    hits: list[tuple[Rule, Hit]] = []
    if options.enabled("PM002"):
        from pmanifest.schema import validate

        for problem in validate(doc.data, options.kubernetes_version):
            hits.append((rules["PM002"], Hit(problem.path, problem.message)))
    profile = options.profile
    workload = workload_of(doc, profile)
    context = Context(workload, profile) if workload is not None else None
    object_context = ObjectContext(doc, workload, profile)
    for rule in rules.values():
        if not options.enabled(rule.meta.id):
            continue
        if rule.object_check is not None:  # declarative policies: any object
            hits.extend((rule, hit) for hit in rule.object_check(object_context))
        elif rule.check is not None and context is not None:
            hits.extend((rule, hit) for hit in rule.check(context))
    return hits


def _findings(doc: Document, hits: list[tuple[Rule, Hit]], options: LintOptions) -> list[Finding]:
    """Hits, less the suppressed ones, as findings at their positions."""
    ignored = _annotation_ignores(doc)
    out = []
    for rule, hit in hits:
        if rule.meta.id in ignored:
            continue
        pos = hit.pos or doc.positions.at(hit.path)
        if rule.meta.id in _inline_ignores(doc, pos):
            continue
        out.append(_finding(doc, rule, hit, pos, options))
    return out


def _finding(doc: Document, rule: Rule, hit: Hit, pos: Pos, options: LintOptions) -> Finding:
    return Finding(
        rule=rule.meta.id,
        slug=rule.meta.slug,
        severity=options.severity_of(rule),
        file=doc.file,
        line=pos.line,
        column=pos.column,
        object=ObjectRef(doc.kind, doc.name, doc.namespace),
        path=dotted(hit.path),
        message=hit.message,
    )


def rule_ids(names: str) -> set[str]:
    """``"PM201, prestop-sleep"`` -> ``{"PM201", "PM203"}`` (unknown names are dropped)."""
    out = set()
    for name in names.split(","):
        found = lookup(name.strip())
        if found is not None:
            out.add(found.meta.id)
    return out


def _annotation_ignores(doc: Document) -> set[str]:
    paths: list[Path] = [("metadata", "annotations")]
    workload_kind_paths = {
        "Pod": None, "CronJob": ("spec", "jobTemplate", "spec", "template", "metadata"),
    }
    template_meta = workload_kind_paths.get(doc.kind or "", ("spec", "template", "metadata"))
    if template_meta is not None:
        paths.append((*template_meta, "annotations"))
    ignored: set[str] = set()
    for path in paths:
        node = doc.data
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        value = node.get(IGNORE_ANNOTATION) if isinstance(node, dict) else None
        if isinstance(value, str):
            ignored |= rule_ids(value)
    return ignored


def _inline_ignores(doc: Document, pos: Pos) -> set[str]:
    """Rules ignored by a ``# pmanifest: ignore=...`` comment on the line or the line above."""
    ignored: set[str] = set()
    for line_no in (pos.line, pos.line - 1):
        if 1 <= line_no <= len(doc.source_lines):
            match = _INLINE_IGNORE.search(doc.source_lines[line_no - 1])
            if match:
                ignored |= rule_ids(match.group(1))
    return ignored
