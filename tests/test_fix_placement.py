"""Where a fix goes in the text (``pmanifest.lint.fixplace``, checked by ``lint.fixes``): each
shape of YAML a fix can meet, the exact text after it, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from pmanifest.kube.document import Finding, Fix, ObjectRef
from pmanifest.lint.fixes import apply_fix
from pmanifest.lint.fixplace import Unplaceable
from pmanifest.loader.documents import load_documents

RULE = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}


def fixed(text: str, path: tuple[str | int, ...], value: Any = None, line: int = 1,
          remove: bool = False) -> str:
    finding = Finding("PM401", "s", "warning", "f.yaml", line, 1, ObjectRef("Job", "j", None),
                      "", "m", Fix(path, value, remove))
    return apply_fix(text, finding)


def data(text: str) -> list[Any]:
    return [d.data for d in load_documents(text)]  # type: ignore[union-attr]


@pytest.mark.parametrize(("before", "after"), [
    # block list: a new first item at the dash's column (indented or not under its key)
    ("rules:\n  - action: FailJob\n", "rules:\n  - action: Ignore\n    onPodConditions:\n"
     "      - type: DisruptionTarget\n  - action: FailJob\n"),
    ("rules:\n- action: FailJob\n", "rules:\n- action: Ignore\n  onPodConditions:\n"
     "  - type: DisruptionTarget\n- action: FailJob\n"),
    # flow lists: first, empty
    ("rules: [{action: FailJob}]\n",
     "rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}, "
     "{action: FailJob}]\n"),
    ("rules: []  # none yet\n",
     "rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]  # none yet\n"),
    # a multi-line flow list keeps its lines
    ("rules: [\n  {action: FailJob},\n  {action: Count}\n]\n",
     "rules: [\n  {action: Ignore, onPodConditions: [{type: DisruptionTarget}]}, "
     "{action: FailJob},\n  {action: Count}\n]\n"),
])
def test_a_rule_put_first(before: str, after: str) -> None:
    old = data(before)[0]["rules"]
    assert fixed(before, ("rules",), [RULE, *old]) == after


@pytest.mark.parametrize(("before", "after"), [
    ("spec: {}\n", "spec: {restartPolicy: Never}\n"),
    ("spec: {a: 1}  # c\n", "spec: {a: 1, restartPolicy: Never}  # c\n"),
    ("spec:\n  a: 1\n", "spec:\n  a: 1\n  restartPolicy: Never\n"),
    ("spec:\n  a: 1", "spec:\n  a: 1\n  restartPolicy: Never"),  # no final newline
    ("spec:\n  a: |\n    text\n\n# after\n", "spec:\n  a: |\n    text\n\n  restartPolicy: "
     "Never\n# after\n"),  # after a block scalar and its blank line, before the comment
    ("spec:\n  a: 1\n\n\n# trailing comment\n",
     "spec:\n  a: 1\n  restartPolicy: Never\n\n\n# trailing comment\n"),
    ("- name: x\n  image: y\n", "- name: x\n  image: y\n  restartPolicy: Never\n"),
])
def test_a_key_added(before: str, after: str) -> None:
    path: tuple[str | int, ...] = (0,) if before.startswith("-") else ("spec",)
    finding = Finding("PM402", "s", "error", "f.yaml", 1, 1, ObjectRef("Job", "j", None), "",
                      "m", Fix((*path, "restartPolicy"), "Never"))
    assert apply_fix(before, finding) == after


@pytest.mark.parametrize(("before", "after"), [
    ("g: 900\n", "g: 300\n"),
    ("g: !!int 900   # long\n", "g: 300   # long\n"),
    ('r: "OnFailure"\n', 'r: "Never"\n'),
    ("r: 'OnFailure'\n", "r: 'Never'\n"),
])
def test_a_scalar_replaced(before: str, after: str) -> None:
    key = before[0]
    assert fixed(before, (key,), 300 if key == "g" else "Never") == after


def test_new_strings_take_the_documents_quotes() -> None:
    assert fixed("a: 'x'\nb: 1\n", ("c",), "True") == "a: 'x'\nb: 1\nc: 'True'\n"
    assert fixed('a: "x"\nb: 1\n', ("c",), "True") == 'a: "x"\nb: 1\nc: "True"\n'
    assert fixed("b: 1\n", ("c",), "yes") == 'b: 1\nc: "yes"\n'  # a string, not a boolean


@pytest.mark.parametrize("value", ["0E0", "0o17", "1_000", "0x1F", "+12", ".5", "y", "N"])
def test_new_strings_kubectl_would_misread_are_quoted(value: str) -> None:
    """PyYAML writes these plain (its YAML 1.1 resolver reads them as strings), kubectl would
    read numbers and booleans: the fix goes through the one writer, which quotes them."""
    text = fixed("b: 1\n", ("c",), value)
    assert text in (f'b: 1\nc: "{value}"\n', f"b: 1\nc: '{value}'\n")
    assert data(text)[0]["c"] == value


def test_the_documents_of_a_stream_stay_as_they_were() -> None:
    stream = "a: 1\n---\n# two\nb: 900\n---\nc: 3\n"
    assert fixed(stream, ("b",), 300, line=4) == "a: 1\n---\n# two\nb: 300\n---\nc: 3\n"


def test_a_key_removed() -> None:
    assert fixed("s:\n  a: 1  # x\n  b:\n    c: 2\n  d: 3\n", ("s", "b"), remove=True) == \
        "s:\n  a: 1  # x\n  d: 3\n"
    assert fixed("s: {a: 1, b: 2, c: 3}\n", ("s", "b"), remove=True) == "s: {a: 1, c: 3}\n"
    assert fixed("s: {a: 1, b: 2}\n", ("s", "b"), remove=True) == "s: {a: 1}\n"
    with pytest.raises(Unplaceable, match="without its own keys"):
        fixed("s:\n  b: 2\n", ("s", "b"), remove=True)


@pytest.mark.parametrize(("text", "path", "value", "reason"), [
    ("x: &g 900\ny: *g\n", ("y",), 300, "is an alias"),
    ("x: &g 900\ny: *g\n", ("x",), 300, r"inside &g, which an alias \(\*g\) repeats"),
    ("x: &g 900\n", ("x",), 300, r"has an anchor \(&g\)"),
    ("d: &d {g: 900}\ns:\n  <<: *d\n", ("s", "g"), 300, "comes from a merge key"),
    ("d: &d\n  g: 900\ns: *d\n", ("d", "g"), 300, r"inside &d, which an alias \(\*d\)"),
    ("g: |\n  900\n", ("g",), 300, "is a block scalar"),
    ("l:\n- - a\n  - b\n", ("l",), [["z", "a", "b"]], "does not start its line"),
    ("s: 1\n", ("s",), {"a": 1}, "would change from a scalar to a mapping"),
    ("l: [a, b]\n", ("l",), ["b"], "otherwise than by new items"),
    ("s: {a: 1}\n", ("s",), {"b": 1}, "would be removed"),
])
def test_what_cannot_be_placed_exactly_is_refused(text: str, path: tuple[str | int, ...],
                                                 value: Any, reason: str) -> None:
    with pytest.raises(Unplaceable, match=reason):
        fixed(text, path, value)


def test_a_document_only_pythons_parser_reads_is_refused_not_crashed() -> None:
    text = 'name: "\\ud83d\\ude00"\ng: 900\n'  # a JSON surrogate pair: libyaml refuses it
    assert data(text)[0]["name"] == "\U0001f600"
    with pytest.raises(Unplaceable, match="cannot be read for editing"):
        fixed(text, ("g",), 300, line=2)
