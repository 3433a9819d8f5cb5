"""Loader fixes found by the hostile suite (src/pmanifest/loader.py), tested at the loader."""

from __future__ import annotations

import pytest

from pmanifest.loader.documents import Broken, Loaded, decode, load_documents


def test_deep_and_wide_document_is_refused_before_it_eats_memory() -> None:
    # 198 levels deep, then 1,000,000 items: every position key is a 200-element path, so this
    # 2 MB file took 2 GB and 24 s before the path budget (sum of path lengths) existed.
    text = "a: " + "[" * 198 + ",".join(["a"] * 1_000_000) + "]" * 198 + "\n"
    (item,) = load_documents(text)
    assert isinstance(item, Broken)
    assert item.problem.message == ("document too large for its nesting depth (more than "
                                    "8,001,596 path entries; a YAML bomb?)")
    assert item.problem.line == 1


def test_deep_and_wide_mapping_through_the_fast_path_is_refused() -> None:
    text = "a: " + "{a: " * 198 + "{" + ",".join(f"k{i}: v" for i in range(100_000)) + "}" * 199
    (item,) = load_documents(text + "\n")
    assert isinstance(item, Broken)
    assert item.problem.message.startswith("document too large for its nesting depth")


@pytest.mark.slow  # 20,000 Pods, a large input as in hostile/test_resources.py
def test_a_big_shallow_list_document_stays_within_the_budget() -> None:
    pod = ("- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, labels: {app: x}}\n  spec:\n"
           "    containers:\n    - name: a\n      image: b\n      env: [{name: A, value: b}]\n")
    (item,) = load_documents("apiVersion: v1\nkind: List\nitems:\n" + pod * 20_000)
    assert isinstance(item, Loaded) and len(item.data["items"]) == 20_000


def test_directives_stay_with_their_document() -> None:
    # the split at `---` used to cut `%YAML`/`%TAG` off their document: a false syntax error
    text = ("%YAML 1.1\n%TAG !k! tag:yaml.org,2002:\n---\nkind: Pod\ngrace: !k!int 900\n"
            "---\nb: 2\n")
    first, second = load_documents(decode(text.encode()))
    assert isinstance(first, Loaded) and first.data == {"kind": "Pod", "grace": 900}
    assert first.positions.at(("grace",)) == (5, 1)
    assert isinstance(second, Loaded) and second.positions.at(("b",)) == (7, 1)


def test_a_tag_handle_cannot_smuggle_a_python_tag() -> None:
    text = "%TAG !p! tag:yaml.org,2002:python/object/apply:\n---\na: !p!os.system [true]\n"
    (item,) = load_documents(text)
    assert isinstance(item, Broken)
    assert item.problem.message == (
        "unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'")
