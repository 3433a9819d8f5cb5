"""Hostile YAML, round two (issue 15, items 12, 14, 19, 26, 27): aliases past the nesting
bound, aliased and anchored keys, control characters at their real position, JSON surrogate
pairs, and the Helm hint only where a template is. Every case runs the real CLI (in-process)
and compares exit code, stdout and stderr exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, run_real, summary

DEEP = "document is nested more than 200 levels deep through alias *d"
SUMMARY_1 = summary("1 error, 0 warnings, 0 info in 1 file (0 objects)")
CLEAN_1 = summary("0 errors, 0 warnings, 0 info in 1 file (1 object)")
NOTHING = ("pmanifest: no Kubernetes object found in {file} (1 file read, no object with "
           "apiVersion and kind in it): nothing was checked; name the manifests to lint, or "
           "pass --allow-empty where none is expected\n")
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
POD_HEAD = "apiVersion: v1\nkind: Pod\n"
CONTAINERS = "containers: [{name: a, image: b}]"


def _crd(depth: int) -> str:
    """A CustomResourceDefinition whose schema nests an anchored schema inside another: each
    half is within the bound, the whole (through the alias) is not. The schema walk of PM002
    recursed through it until RecursionError (exit 3)."""
    inner = "{properties: {a: " * depth + "{type: 5}" + "}}" * depth
    outer = "{properties: {a: " * depth + "*d" + "}}" * depth
    return (f"x: &d {inner}\napiVersion: apiextensions.k8s.io/v1\n"
            "kind: CustomResourceDefinition\nmetadata: {name: a.b.c}\nspec:\n  group: b.c\n"
            "  names: {kind: A, plural: a}\n  scope: Namespaced\n  versions:\n  - name: v1\n"
            "    served: true\n    storage: true\n    schema:\n"
            f"      openAPIV3Schema: {outer}\n")


# name -> (file content, exit code, stdout after "NAME.yaml:", stderr)
LINT: dict[str, tuple[str, int, str, str]] = {
    # 12: the nesting bound holds for the data, aliases included, at the alias
    "alias-past-the-bound": (
        "a: &d " + "[" * 150 + "]" * 150 + "\nb: " + "[" * 100 + "*d" + "]" * 100 + "\n",
        1, f"2:104: error PM001[yaml-syntax-error] {DEEP}\n", SUMMARY_1),
    "alias-past-the-bound-in-a-crd": (
        _crd(90), 1, f"14:1554: error PM001[yaml-syntax-error] {DEEP}\n", SUMMARY_1),
    "alias-at-the-bound": (  # the root, 99 lists, 100 through the alias: 200 levels
        "a: &d " + "[" * 100 + "]" * 100 + "\nb: " + "[" * 99 + "*d" + "]" * 99 + "\n",
        2, "", NOTHING),
    "merge-at-the-bound": (  # a merge adds the alias's children one level below, not two
        "a: &d {x: " + "[" * 100 + "]" * 100 + "}\nb: " + "[" * 98 + "{<<: *d}" + "]" * 98
        + "\n", 2, "", NOTHING),
    "merge-past-the-bound": (
        "a: &d {x: " + "[" * 100 + "]" * 100 + "}\nb: " + "[" * 99 + "{<<: *d}" + "]" * 99
        + "\n", 1, f"2:108: error PM001[yaml-syntax-error] {DEEP}\n", SUMMARY_1),
    # 14: aliased non-string keys become the key text, like the literal key would
    "aliased-float-key": (
        POD_HEAD + "metadata: {name: p, labels: {a: &k 1.5}}\n"
        f"spec: {{*k : x, {CONTAINERS}}}\n",
        1, "3:30: error PM002[schema-invalid] metadata.labels.a must be a string, got number; "
           "quote it to make it a string\n"
           "4:8: error PM002[schema-invalid] unknown key '1.5' in spec; remove it\n",
        summary("2 errors, 0 warnings, 0 info in 1 file (1 object)")),
    "aliased-null-and-bool-keys": (
        POD_HEAD + "metadata: {name: p, labels: {a: &k null, b: &t yes}}\n"
        f"spec: {{*k : x, *t : y, {CONTAINERS}}}\n",
        1, "3:42: error PM002[schema-invalid] metadata.labels.b must be a string, got boolean; "
           "quote it to make it a string\n"
           "4:8: error PM002[schema-invalid] unknown key 'null' in spec; remove it\n"
           "4:16: error PM002[schema-invalid] unknown key 'yes' in spec; remove it\n",
        summary("3 errors, 0 warnings, 0 info in 1 file (1 object)")),
    "aliased-int-key": (
        POD_HEAD + f"metadata: {{name: p, labels: {{a: &k 7}}}}\nspec: {{*k : x, {CONTAINERS}}}\n",
        1, "3:30: error PM002[schema-invalid] metadata.labels.a must be a string, got integer; "
           "quote it to make it a string\n"
           "4:8: error PM002[schema-invalid] unknown key '7' in spec; remove it\n",
        summary("2 errors, 0 warnings, 0 info in 1 file (1 object)")),
    # 14: an anchor on a key is recorded: this is valid YAML
    "anchored-key": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    &k app: x\n"
        "  annotations:\n    *k : y\ndata: {from-key: *k}\n", 0, "", CLEAN_1),
    "anchored-key-duplicated-by-its-alias": (
        CONFIGMAP + "data: {&k a: x, *k : y}\n",
        1, "4:17: error PM001[yaml-syntax-error] duplicate key 'a'\n", SUMMARY_1),
    # 19: a control character is reported where it is (line 26, after a 2-byte character)
    "control-character": (
        POD_HEAD + "".join(f"# c{i}\n" for i in range(23)) + 'metadata: {name: "é\x1bb"}\n',
        1, "26:20: error PM001[yaml-syntax-error] unacceptable character #x001b: control "
           "characters are not allowed\n", SUMMARY_1),
    "control-character-in-a-later-document": (
        CONFIGMAP + "---\n" + CONFIGMAP + "data: {a: \"ü\x07\"}\n",
        1, "8:13: error PM001[yaml-syntax-error] unacceptable character #x0007: control "
           "characters are not allowed\n",
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)")),
    # 26: JSON's surrogate pairs are the characters they encode
    "json-surrogate-pair": (
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},\n'
        ' "data": {"\\ud83d\\ude00": "\\uD83D\\uDE00 \\u00e9", "b": "\\ud83d\\ude00"}}\n',
        0, "", CLEAN_1),
    "json-lone-surrogate": (
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},\n'
        ' "data": {"a": "x\\ud83dy"}}\n',
        1, "2:16: error PM001[yaml-syntax-error] unpaired UTF-16 surrogate escape \\ud83d in "
           "a double-quoted string (JSON writes a character above U+FFFF as a pair)\n",
        SUMMARY_1),
    "surrogate-escape-then-another-error": (  # (in the words of PyYAML's own parser)
        CONFIGMAP + 'data: {a: "\\ud83d\\ude00", b: [}\n',
        1, "4:31: error PM001[yaml-syntax-error] expected the node content, but found '}'\n",
        SUMMARY_1),
    "surrogate-pair-and-an-escape-above-unicode": (  # at its digits, as libyaml says it
        CONFIGMAP + 'data: {a: "\\ud83d\\ude00", b: "\\U00110000"}\n',
        1, "4:33: error PM001[yaml-syntax-error] found invalid Unicode character escape code\n",
        SUMMARY_1),
    "surrogate-text-outside-double-quotes": (  # only double-quoted escapes are escapes
        CONFIGMAP + "data: {a: '\\ud83d', b: \\ude00, c: \"\\ud83d\\ude00\"}\n", 0, "",
        CLEAN_1),
    # 27, 22: a file is an unrendered template only where plain YAML holds a `{{` by the error
    "quoted-template-then-unrelated-error": (
        POD_HEAD + 'metadata:\n  name: "{{ .Values.name }}"\n  labels: {a: \'{{ x }}\'}\n'
        "spec: [\n",
        1, "7:1: error PM001[yaml-syntax-error] did not find expected node content\n",
        SUMMARY_1),
    "template-in-a-comment": (
        POD_HEAD + "metadata: {name: p}  # {{ .Values.name }}\nspec: [\n",
        1, "5:1: error PM001[yaml-syntax-error] did not find expected node content\n",
        SUMMARY_1),
    "plain-template-far-from-the-error": (  # `p{{ x }}` is a plain scalar: valid YAML
        POD_HEAD + "metadata:\n  name: p{{ .Values.suffix }}\nspec: [1,\n\n\nx: y\n",
        1, "9:1: error PM001[yaml-syntax-error] did not find expected ',' or ']'\n", SUMMARY_1),
    "template-after-a-quoted-string-on-the-error-line": (
        POD_HEAD + 'metadata: {name: "a", labels: {{ x }}}\n',
        2, "", "pmanifest: no Kubernetes object found in {file} (1 file read, an unrendered "
               "template: lint the rendered output): nothing was checked; name the manifests "
               "to lint, or pass --allow-empty where none is expected\n"),
}


@pytest.mark.parametrize("name", list(LINT))
def test_hostile_yaml(runner: CliRunner, tmp_path: Path, name: str) -> None:
    content, code, stdout, stderr = LINT[name]
    (tmp_path / f"{name}.yaml").write_bytes(content.encode("utf-8"))
    result = invoke(runner, ["lint", f"{name}.yaml"])
    expected = "".join(f"{name}.yaml:{line}\n" for line in stdout.splitlines())
    assert (result.exit_code, result.stdout, result.stderr) == (
        code, expected, stderr.replace("{file}", f"{name}.yaml"))


def test_alias_past_the_bound_in_a_real_process(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(_crd(90))
    proc = run_real(["lint", "crd.yaml"], tmp_path)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (
        1, f"crd.yaml:14:1554: error PM001[yaml-syntax-error] {DEEP}\n", SUMMARY_1)


SPEC = "apiVersion: pmanifest/v1\nworkloads:\n  - name: a\n    image: ghcr.io/acme/t:1\n"


def test_render_reports_a_control_character_where_it_is(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_bytes((SPEC + '    env: {A: "\u00e9\u00e9\x1b"}\n').encode())
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "spec.yaml:5:17: unacceptable character #x001b: control characters are not allowed; "
        "fix the YAML\n"))


def test_render_reads_json_surrogate_pairs_as_their_character(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    (tmp_path / "escaped.json").write_text(
        '{"apiVersion": "pmanifest/v1", "workloads": [{"name": "a", "image": "x:1",\n'
        ' "command": ["echo", "\\ud83d\\ude00"], "env": {"SMILE": "\\ud83d\\ude00"}}]}\n')
    (tmp_path / "literal.json").write_text(
        '{"apiVersion": "pmanifest/v1", "workloads": [{"name": "a", "image": "x:1",\n'
        ' "command": ["echo", "\U0001F600"], "env": {"SMILE": "\U0001F600"}}]}\n')
    escaped = invoke(runner, ["render", "-f", "escaped.json"])
    literal = invoke(runner, ["render", "-f", "literal.json"])
    assert (escaped.exit_code, literal.exit_code) == (0, 0)
    assert escaped.stdout == literal.stdout
    assert escaped.stderr == literal.stderr.replace("literal.json", "escaped.json")
    assert '          value: "\\U0001F600"\n' in escaped.stdout  # PyYAML escapes it


def test_render_names_a_lone_surrogate(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(
        '{"apiVersion": "pmanifest/v1", "workloads": [{"name": "a", "image": "\\udc00"}]}\n')
    result = invoke(runner, ["render", "-f", "spec.json"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "spec.json:1:69: unpaired UTF-16 surrogate escape \\udc00 in a double-quoted string "
        "(JSON writes a character above U+FFFF as a pair); fix the YAML\n"))


def test_render_hint_only_for_a_template_in_plain_yaml(runner: CliRunner,
                                                      tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC + '    env: {A: "{{ x }}"}\n    args: [\n')
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "spec.yaml:7:1: did not find expected node content; fix the YAML\n"))
