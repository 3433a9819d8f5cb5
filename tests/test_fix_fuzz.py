"""``lint --fix`` never raises and never writes a file that says something else: random
mutations of manifests with fixable findings, written in random YAML styles (block or flow,
2 or 4 spaces, lists indented or not, several documents, anchors), are fixed into files that
parse, hold the fixed values, and are fixed no further by a second pass."""

from __future__ import annotations

import copy
import difflib
import re
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmanifest.kube.document import Finding
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.lint.fixes import fix_file
from tests.hypothesis_profiles import examples
from tests.treepaths import all_paths

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
    "spec": {"backoffLimit": 4, "template": {"spec": {
        "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 900,
        "nodeSelector": {"together.ai/compute-class": "preemptible"},
        "containers": [{"name": "main", "image": "trainer",
                        "command": ["sh", "-c", "trap 'exit 143' TERM; run & wait"]}]}}},
}
SERVING: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
    "spec": {"selector": {"matchLabels": {"app": "api"}}, "template": {
        "metadata": {"labels": {"app": "api"}},
        "spec": {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In",
                                  "values": ["n1"]}]}]}}},
                 "containers": [{"name": "api", "image": "api:1"}]}}},
}
SHARED = 10**12 + 900  # a grace period written once, with an anchor, and repeated by an alias
OPTIONS = LintOptions(select=frozenset({"PM102", "PM103", "PM201", "PM401", "PM402"}))
PATHS = [(0, p) for p in all_paths(JOB) if p] + [(1, p) for p in all_paths(SERVING) if p]


def _relint(raw: bytes) -> list[Finding]:
    return lint_bytes(raw, "f.yaml", OPTIONS)


def _dropped(data: Any, path: tuple[Any, ...]) -> None:
    node = data
    for key in path[:-1]:
        if not isinstance(node, dict | list) or key not in (node if isinstance(node, dict)
                                                            else range(len(node))):
            return  # an earlier drop took it
        node = node[key]
    if isinstance(node, dict):
        node.pop(path[-1], None)
    elif isinstance(node, list) and len(node) > 1 and path[-1] < len(node):
        node.pop(path[-1])


def _written(docs: list[Any], flow: bool | None, indent: int, anchors: bool) -> str:
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:  # anchors for what is shared on purpose
            return not anchors or (not isinstance(data, dict | list) and data != SHARED)

        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False if indent == 4 else indentless)

    if anchors:  # one value shared: written once with an anchor, then as an alias
        try:
            pod, other = docs[0]["spec"]["template"]["spec"], docs[1]["spec"]["template"]["spec"]
            other["initContainers"] = [pod["containers"][0]]
            pod["terminationGracePeriodSeconds"] = SHARED
            other["terminationGracePeriodSeconds"] = SHARED
        except (KeyError, IndexError, TypeError):
            pass  # a drop took it: no alias this time
        docs = [{"apiVersion": "v1", "kind": "List", "items": docs}]
    return yaml.dump_all(docs, Dumper=Dumper, default_flow_style=flow, indent=indent,
                         sort_keys=False, explicit_start=True)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drops=st.lists(st.sampled_from(PATHS), max_size=3),
       flow=st.sampled_from([False, True, None]), indent=st.sampled_from([2, 4]),
       anchors=st.booleans())
def test_fix_never_raises_and_holds_what_it_says(drops: list[tuple[int, tuple[Any, ...]]],
                                                 flow: bool | None, indent: int,
                                                 anchors: bool) -> None:
    docs = [copy.deepcopy(JOB), copy.deepcopy(SERVING)]
    for index, path in drops:
        _dropped(docs[index], path)
    raw = _written(docs, flow, indent, anchors).encode()
    found = _relint(raw)
    fixed = fix_file(raw, found, _relint)
    if b"terminationGracePeriodSeconds: *id" in raw and any(f.rule == "PM201" for f in found):
        # the grace period is written once with an anchor and repeated: never edited there
        assert any(f.rule == "PM201" and "which an alias" in reason
                   for f, reason in fixed.skipped)
    after = list(yaml.safe_load_all(fixed.raw))  # parses
    assert len(after) == len(list(yaml.safe_load_all(raw)))
    left = {(f.rule, f.path) for f in _relint(fixed.raw) if f.fix is not None}
    assert left <= {(f.rule, f.path) for f, _ in fixed.skipped}
    assert fix_file(fixed.raw, _relint(fixed.raw), _relint).raw == fixed.raw
    # every byte outside the edits is the same: what was taken out is at most a value
    before, after_tokens = _tokens(raw.decode()), _tokens(fixed.raw.decode())
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after_tokens,
                                                     autojunk=False).get_opcodes():
        assert tag in ("equal", "insert") or not any(
            c in "".join(before[i1:i2]) for c in "#\n:{}[],&*"), before[i1:i2]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[\w./-]+|[ \t]+|.|\n", text)
