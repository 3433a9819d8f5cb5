"""The loader: positions of keys and values, safe construction, bounded hostile input."""

from __future__ import annotations

import pytest

from pmanifest.loader.documents import (
    Broken,
    Loaded,
    YamlProblem,
    decode,
    load_documents,
    load_single,
)


def docs(text: str) -> list[Loaded | Broken]:
    return list(load_documents(decode(text.encode())))


def test_positions_of_keys_values_and_list_items() -> None:
    (doc,) = docs("kind: Job\nspec:\n  items:\n    - a\n    - {b: 1}\n")
    assert isinstance(doc, Loaded)
    assert doc.data == {"kind": "Job", "spec": {"items": ["a", {"b": 1}]}}
    assert doc.positions.at(("spec", "items")) == (3, 3)
    assert doc.positions.at(("spec", "items", 1)) == (5, 7)
    assert doc.positions.at(("spec", "items", 1, "b")) == (5, 8)
    assert doc.positions.value_at(("kind",)) == (1, 7)
    assert doc.positions.at(("spec", "missing", 3)) == (2, 1)  # deepest existing ancestor


def test_second_document_positions_are_file_lines() -> None:
    _, second = docs("a: 1\n---\n# comment\nb:\n  c: 2\n")
    assert isinstance(second, Loaded)
    assert second.positions.at(("b", "c")) == (5, 3)


def test_block_scalar_style_is_recorded() -> None:
    (doc,) = docs("script: |\n  trap 'x' TERM\n  wait\n")
    assert isinstance(doc, Loaded)
    info = doc.positions.scalars[("script",)]
    assert (info.pos, info.style) == ((1, 9), "|")


def test_syntax_error_does_not_hide_later_documents() -> None:
    items = docs("a: [1, 2\n---\nb: 2\n")
    assert isinstance(items[0], Broken)
    assert isinstance(items[1], Loaded) and items[1].data == {"b": 2}


def test_yaml_11_scalars_and_merge_keys() -> None:
    (doc,) = docs("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\non: yes\nn: ~\nt: 2024-01-01\n")
    assert isinstance(doc, Loaded)
    assert doc.data["m"] == {"x": 1, "y": 3}
    assert doc.data["on"] is True and doc.data["n"] is None
    assert doc.data["t"] == "2024-01-01"  # timestamps stay strings, as JSON sees them


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: 1\na: 2\n", "duplicate key 'a'", 2),
        ("a: !!python/object/apply:os.system ['true']\n", "unsupported YAML tag", 1),
        ("a: !custom 1\n", "unsupported YAML tag", 1),
        ("a: &a [*a]\n", "unknown or recursive alias", 1),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than", 1),
        ("? [a]\n: 1\n", "mapping keys must be scalars", 1),
    ],
)
def test_refused_documents(text: str, message: str, line: int) -> None:
    (item,) = docs(text)
    assert isinstance(item, Broken)
    assert message in item.problem.message
    assert item.problem.line == line


def test_billion_laughs_fails_fast() -> None:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    (item,) = docs("\n".join(lines) + "\n")
    assert isinstance(item, Broken)
    assert "alias" in item.problem.message


def test_decode_bom_crlf_and_bad_bytes() -> None:
    assert decode(b"\xef\xbb\xbfa: 1\r\nb: 2\r\n") == "a: 1\nb: 2\n"
    with pytest.raises(YamlProblem) as excinfo:
        decode(b"a: 1\nb: \xff\n")
    assert (excinfo.value.line, excinfo.value.column) == (2, 4)
    with pytest.raises(YamlProblem):
        decode(b"a: \x00\n")


def test_load_single_refuses_several_documents_and_empty_files() -> None:
    with pytest.raises(YamlProblem, match="one YAML document"):
        load_single("a: 1\n---\nb: 2\n")
    with pytest.raises(YamlProblem, match="empty"):
        load_single("# nothing\n")


@pytest.mark.slow  # 3000 items for the time bound; the case files' Lists check positions fast
def test_list_items_get_their_own_positions_in_linear_time() -> None:
    import time

    from pmanifest.lint.engine import LintOptions, lint_bytes

    items = "".join(f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: "
                    f"{{containers: [{{name: c, image: i, bogus: {i}}}]}}}}\n"
                    for i in range(3000))
    text = ("apiVersion: v1\nkind: List\nitems:\n" + items).encode()
    start = time.perf_counter()
    findings = lint_bytes(text, "list.yaml", LintOptions())
    elapsed = time.perf_counter() - start
    bogus = [f for f in findings if f.rule == "PM002"]
    assert len(bogus) == 3000
    last_line = text.decode().splitlines()[3002]
    assert (bogus[-1].line, bogus[-1].column) == (3003, last_line.index("bogus") + 1)
    assert elapsed < 30  # quadratic rebasing took minutes here; linear takes about a second


LOOP_CASES = [
    "kind: Job\nspec: {a: 'x', b: \"y\", c: 1, d: [z, 2, null]}\n",
    "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  <<: [*b]\n",
    "k: &s plain\nl: *s\n*s : v\n? 1.5\n: f\nyes: t\n! q: !!str 3\n",
    "a: " + "[" * 150 + "]" * 150 + "\n",
    "a: &deep " + "[" * 120 + "]" * 120 + "\nb: [[[*deep]]]\nc: {<<: {d: *deep}}\n",
    "a: 1\na: 2\n",
    "a: x\nb: y\na: z\n",
    "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "a: &a [*a]\n",
    "m: {<<: plain}\n",
]


@pytest.mark.parametrize("text", LOOP_CASES)
def test_data_only_and_recording_parses_agree(text: str) -> None:
    """The first parse (data only, strings handled inline) and the one that records positions
    build the same data, or refuse the document with the same message at the same place."""
    from pmanifest.loader.builder import DocumentBuilder

    def parse(record: bool) -> object:
        try:
            built = DocumentBuilder(0, record=record).run(text)
        except YamlProblem as problem:
            return (problem.message, problem.line, problem.column)
        return built[0] if built is not None else None

    data_only = parse(False)
    assert data_only == parse(True)
    assert data_only is not None
