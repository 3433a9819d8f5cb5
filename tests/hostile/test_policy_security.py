"""Policies are untrusted input (a linted repository's own config names them): nothing they say
may fetch a URL, read a file, loop, backtrack catastrophically or build huge messages.
Every case runs the real CLI and compares exit code, stdout and stderr exactly."""

from __future__ import annotations

import http.server
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, summary

HEADER = """\
id: ACME001
slug: hostile
severity: error
summary: s
rationale: r
fix: f
target: object
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:  # the name http.server calls
        type(self).hits.append(self.path)
        body = b'{"type": "string", "description": "SECRET-FROM-THE-NETWORK"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on loopback that records every request it gets."""
    _Counter.hits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    # shutdown() is seen at the loop's next poll: every 0.05 s, not the default 0.5 s
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", _Counter.hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def _lint_with(tmp_path: Path, runner: CliRunner, schema: str, *, message: str = "",
               name: str = "x") -> tuple[int, str, str]:
    (tmp_path / "pol").mkdir(exist_ok=True)
    body = HEADER + (f"message: {message!r}\n" if message else "") + "schema:\n" + \
        textwrap.indent(textwrap.dedent(schema), "  ")
    (tmp_path / "pol" / "p.yaml").write_text(body)
    (tmp_path / "cm.yaml").write_text(CONFIGMAP % name)
    result = invoke(runner, ["lint", "cm.yaml", "--policies", "pol", "--select", "ACME001"])
    return result.exit_code, result.stdout, result.stderr


def test_a_remote_ref_is_refused_at_load_and_nothing_is_fetched(
        tmp_path: Path, runner: CliRunner, server: tuple[str, list[str]]) -> None:
    url, hits = server
    schema = f"properties:\n  metadata: {{$ref: \"{url}/s.json\"}}\n"
    assert _lint_with(tmp_path, runner, schema) == (2, "", (
        f"pol/p.yaml:10:22: $ref '{url}/s.json' leads outside the policy; only references "
        "to the policy's own schema (#/$defs/name) are allowed\n"))
    assert hits == []


def test_the_validator_itself_never_retrieves(server: tuple[str, list[str]]) -> None:
    """Even a schema that skipped the load-time check cannot make a request."""
    from referencing.exceptions import Unresolvable

    from pmanifest.policy.safety import validator

    url, hits = server
    checker = validator({"$ref": f"{url}/s.json"})
    with pytest.raises(Unresolvable):
        list(checker.iter_errors("anything"))
    assert hits == []


def test_a_file_ref_is_refused_and_the_file_never_read(tmp_path: Path,
                                                        runner: CliRunner) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"enum": ["SECRET-TOKEN"]}')
    schema = f"properties:\n  kind: {{$ref: \"file://{secret}\"}}\n"
    code, out, err = _lint_with(tmp_path, runner, schema)
    assert (code, out) == (2, "")
    assert err == (f"pol/p.yaml:10:18: $ref 'file://{secret}' leads outside the policy; only "
                   "references to the policy's own schema (#/$defs/name) are allowed\n")
    assert "SECRET-TOKEN" not in err


@pytest.mark.parametrize(("schema", "expected"), [
    ("$ref: other.json\n", "pol/p.yaml:9:9: $ref 'other.json' leads outside the policy; only "
     "references to the policy's own schema (#/$defs/name) are allowed"),
    ("$ref: '#/$defs/missing'\n", "pol/p.yaml:9:9: $ref '#/$defs/missing' does not point at "
     "a subschema of this policy's schema"),
    ("$dynamicRef: '#meta'\n", "pol/p.yaml:9:16: $dynamicRef is not allowed in a policy "
     "schema: dynamic references are not supported in policies"),
    ("$id: http://evil.example/s.json\n", "pol/p.yaml:9:8: $id is not allowed in a policy "
     "schema: $id changes where references resolve"),
    ("$schema: http://json-schema.org/draft-04/schema#\n", "pol/p.yaml:9:12: policies are "
     "JSON Schema draft 2020-12: $schema can only be "
     "'https://json-schema.org/draft/2020-12/schema', at the top"),
    ("unevaluatedProperties: false\n", "pol/p.yaml:9:26: unevaluatedProperties is not "
     "allowed in a policy schema: use additionalProperties instead"),
])
def test_references_that_leave_the_policy_are_refused(tmp_path: Path, runner: CliRunner,
                                                      schema: str, expected: str) -> None:
    assert _lint_with(tmp_path, runner, schema) == (2, "", expected + "\n")


CYCLE = "pol/p.yaml:%s: $ref makes a reference cycle (the schema refers back to itself); " \
        "policies cannot be recursive\n"


@pytest.mark.parametrize(("schema", "where"), [
    ("$ref: '#'\n", "9:9"),
    ("allOf: [{$ref: '#'}]\n", "9:18"),
    ("""\
     $defs:
       a: {$ref: '#/$defs/b'}
       b: {$ref: '#/$defs/a'}
     $ref: '#/$defs/a'
     """, "11:15"),
    ("""\
     $defs:
       node: {properties: {child: {$ref: '#/$defs/node'}}}
     $ref: '#/$defs/node'
     """, "10:39"),
])
def test_reference_cycles_are_refused_at_load_time(tmp_path: Path, runner: CliRunner,
                                                   schema: str, where: str) -> None:
    assert _lint_with(tmp_path, runner, schema) == (2, "", CYCLE % where)


def test_a_doubling_tree_of_references_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    """d0 -> d1 twice -> d2 twice ...: 2^20 visits per value without a cycle."""
    defs = "".join(f"  d{i}: {{allOf: [{{$ref: '#/$defs/d{i + 1}'}}, "
                   f"{{$ref: '#/$defs/d{i + 1}'}}]}}\n" for i in range(20))
    schema = "$defs:\n" + defs + "  d20: {type: object}\n$ref: '#/$defs/d0'\n"
    assert _lint_with(tmp_path, runner, schema) == (2, "", (
        "pol/p.yaml:15:9: schema expands to more than 100,000 subschemas through its $refs; "
        "simplify it\n"))


def test_an_internal_ref_still_works(tmp_path: Path, runner: CliRunner) -> None:
    schema = """\
    $defs:
      lower: {type: string, pattern: '^[a-z]+$'}
    properties:
      metadata: {properties: {name: {$ref: '#/$defs/lower'}}}
    """
    assert _lint_with(tmp_path, runner, schema, name="Upper") == (1, (
        "cm.yaml:3:12: error ACME001[hostile] metadata.name: 'Upper' does not match "
        "'^[a-z]+$'\n"), summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


def test_a_catastrophic_pattern_runs_in_linear_time(tmp_path: Path, runner: CliRunner) -> None:
    """``^(a+)+$`` against 40 a's and a b never finished with Python's re; RE2 is linear."""
    schema = "properties:\n  metadata: {properties: {name: {pattern: '^(a+)+$'}}}\n"
    assert _lint_with(tmp_path, runner, schema, name="a" * 40 + "b") == (1, (
        f"cm.yaml:3:12: error ACME001[hostile] metadata.name: '{'a' * 40}b' does not match "
        "'^(a+)+$'\n"), summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


def test_catastrophic_pattern_properties_run_in_linear_time(tmp_path: Path,
                                                            runner: CliRunner) -> None:
    schema = """\
    properties:
      metadata:
        patternProperties: {'^(a+)+$': true}
        additionalProperties: false
    """
    assert _lint_with(tmp_path, runner, schema) == (1, (
        "cm.yaml:3:12: error ACME001[hostile] metadata.name: Additional properties are not "
        "allowed ('name' was unexpected)\n"),
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


def test_a_pattern_re2_cannot_run_is_refused_with_its_line(tmp_path: Path,
                                                           runner: CliRunner) -> None:
    schema = "properties:\n  kind: {pattern: '^(a)\\1$'}\n"
    assert _lint_with(tmp_path, runner, schema) == (2, "", (
        "pol/p.yaml:10:21: pattern '^(a)\\\\1$' is not supported (invalid escape sequence: "
        "\\1): patterns run on RE2, which has no backreferences or lookaround; rewrite it\n"))


@pytest.mark.parametrize(("message", "expected"), [
    ("{value:d}", "format spec 'd' is not supported: values are formatted as text, so use "
     "[[fill]align][width][.precision], e.g. {value:>10} or {value:.40}"),
    ("{value:x}", "format spec 'x' is not supported: values are formatted as text, so use "
     "[[fill]align][width][.precision], e.g. {value:>10} or {value:.40}"),
    ("{value:>200000000}", "format spec '>200000000': the width can be at most 200"),
])
def test_format_specs_are_checked_at_load_time(tmp_path: Path, runner: CliRunner,
                                               message: str, expected: str) -> None:
    code, out, err = _lint_with(tmp_path, runner, "required: [spec]\n", message=message)
    assert (code, out) == (2, "")
    assert err == f"pol/p.yaml:8:10: message template {message!r}: {expected}\n"


def test_text_format_specs_work_on_any_value(tmp_path: Path, runner: CliRunner) -> None:
    """``{limit:s}`` on a list, ``{value:>6}`` on None (a missing key): formatted as text."""
    assert _lint_with(tmp_path, runner, "required: [spec]\n",
                      message="[{value:>6}] {limit:s} {field:.2}") == (
        1, "cm.yaml:1:1: error ACME001[hostile] [  None] ['spec'] sp\n",
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


def test_huge_values_are_cut_in_messages(tmp_path: Path, runner: CliRunner) -> None:
    """``{value!r}`` of a mapping holding a 100,000-character name: cut at 1,000 characters."""
    value = repr({"name": "n" * 100_000})
    assert _lint_with(tmp_path, runner, "properties:\n  metadata: {maxProperties: 0}\n",
                      message="{value!r}", name="n" * 100_000) == (
        1, f"cm.yaml:3:1: error ACME001[hostile] {value[:997]}...\n",
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


REF_PLACEHOLDER = """\
$defs:
  together: {type: object}
$ref: '#/$defs/{profile.name}'
"""
SELF_UNDER_GKE = """\
$defs:
  together: {type: object}
  gke: {$ref: '#/$defs/{profile.name}'}
$ref: '#/$defs/gke'
"""


@pytest.mark.parametrize(("schema", "where"), [(REF_PLACEHOLDER, "11:9"),
                                               (SELF_UNDER_GKE, "11:17")])
@pytest.mark.parametrize("how", ["--profile", "config"])
def test_a_placeholder_in_a_ref_is_refused_whatever_the_profile(
        tmp_path: Path, runner: CliRunner, schema: str, where: str, how: str) -> None:
    """Under gke these pointed nowhere (exit 3 PointerToNowhere) or at themselves (exit 3
    RecursionError): the load-time check only saw the default profile's values."""
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "p.yaml").write_text(
        HEADER + "schema:\n" + textwrap.indent(schema, "  "))
    (tmp_path / "cm.yaml").write_text(CONFIGMAP % "x")
    args = ["lint", "cm.yaml", "--policies", "pol", "--select", "ACME001"]
    if how == "config":
        (tmp_path / ".pmanifest.yaml").write_text("profile: gke\n")
    else:
        args += ["--profile", "gke"]
    result = invoke(runner, args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"pol/p.yaml:{where}: $ref '#/$defs/{{profile.name}}': a reference cannot hold a "
        "profile placeholder (what it points at must not depend on the profile); put the "
        "placeholder in the subschema instead\n"))


def test_the_schema_is_checked_with_every_profiles_values(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    """Valid with the default profile's label value, not with gke's ("true")."""
    schema = "required: ['{profile.labelValue}', 'true']\n"
    assert _lint_with(tmp_path, runner, schema) == (2, "", (
        "pol/p.yaml:9:13: schema is not a valid JSON Schema (draft 2020-12) (with profile gke): "
        "['true', 'true'] has non-unique elements\n"))


@pytest.mark.parametrize(("additional", "expected"), [
    ("false", ["cm.yaml:4:12: error ACME001[hostile] metadata.labels[1]: Additional properties "
               "are not allowed (1 was unexpected)"]),
    ("{type: integer}", ["cm.yaml:4:12: error ACME001[hostile] metadata.labels[1]: 'x' is not "
                         "of type 'integer'"]),
])
def test_pattern_properties_meet_a_number_key(tmp_path: Path, runner: CliRunner,
                                              additional: str, expected: list[str]) -> None:
    """``labels: {1: x}`` keeps the integer key: RE2 was handed an int (exit 3 TypeError)."""
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "p.yaml").write_text(HEADER + textwrap.dedent(f"""\
        schema:
          properties:
            metadata:
              properties:
                labels:
                  patternProperties: {{'^[a-z]+$': {{type: string}}}}
                  additionalProperties: {additional}
        """))
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                      "  labels: {1: x, ok: y}\n  name: n\n")
    result = invoke(runner, ["lint", "cm.yaml", "--policies", "pol", "--select", "ACME001"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "".join(line + "\n" for line in expected),
        summary("1 error, 0 warnings, 0 info in 1 file (1 object)", 3))


@pytest.mark.parametrize("ref", ["#/allOf/0", "#/anyOf/1/not", "#/$defs/named/allOf/0"])
def test_an_internal_ref_into_a_list_resolves(tmp_path: Path, runner: CliRunner,
                                              ref: str) -> None:
    """Issue 24: ``#/allOf/0`` was refused as "does not point at a subschema" (the walk keyed
    list items by number, the pointer by text); references that resolve work, wherever."""
    schema = f"""\
    $defs:
      named: {{allOf: [{{properties: {{metadata: {{required: [labels]}}}}}}]}}
    allOf:
      - {{properties: {{metadata: {{required: [labels]}}}}}}
    anyOf:
      - {{required: [kind]}}
      - {{not: {{properties: {{metadata: {{required: [labels]}}}}}}}}
    $ref: '{ref}'
    """
    code, out, err = _lint_with(tmp_path, runner, schema)
    assert code == 1 and "metadata: 'labels' is a required property" in out, err
    assert "errors, 0 warnings, 0 info in 1 file (1 object, 3 rules)" in err


@pytest.mark.parametrize("ref", ["#/allOf/1", "#/allOf/01", "#/allOf", "#/allOf/x",
                                 "#/properties"])
def test_an_internal_ref_that_names_no_subschema_is_refused(tmp_path: Path, runner: CliRunner,
                                                            ref: str) -> None:
    schema = f"allOf: [{{required: [metadata]}}]\nproperties: {{}}\n$ref: '{ref}'\n"
    assert _lint_with(tmp_path, runner, schema) == (2, "", (
        f"pol/p.yaml:11:9: $ref {ref!r} does not point at a subschema of this policy's "
        "schema\n"))


@pytest.mark.parametrize("depth", [95, 150, 190])
@pytest.mark.parametrize("how", ["not", "allOf", "$ref"])
def test_a_deep_schema_is_refused_at_load_time(tmp_path: Path, runner: CliRunner, depth: int,
                                               how: str) -> None:
    """Issue 24: a schema 95-190 levels deep overflowed Python's stack (RecursionError, exit
    3) when jsonschema checked or ran it; through a chain of $refs too."""
    if how == "$ref":
        schema = "$defs:\n" + "".join(f"  d{i}: {{not: {{$ref: '#/$defs/d{i + 1}'}}}}\n"
                                      for i in range(depth)) + \
            f"  d{depth}: {{required: [x]}}\n$ref: '#/$defs/d0'\n"
    else:
        opening = "{not: " if how == "not" else "{allOf: ["
        closing = "}" if how == "not" else "]}"
        schema = opening * depth + "{required: [x]}" + closing * depth + "\n"
    code, out, err = _lint_with(tmp_path, runner, schema)
    assert (code, out) == (2, "")
    deep = err.endswith(": schema is nested more than 64 subschemas deep (through its $refs "
                        "too); flatten it\n")
    assert err.startswith("pol/p.yaml:") and (deep or "nested more than 200 levels" in err)


@pytest.mark.parametrize(("nots", "code"), [(62, 1), (63, 0)])
def test_a_schema_64_levels_deep_still_runs(tmp_path: Path, runner: CliRunner, nots: int,
                                            code: int) -> None:
    """``required: [x]`` fails on the ConfigMap (it has no x): under an even number of nots
    the policy fails, under an odd one it passes; 63 nots and it are 64 levels."""
    schema = "{not: " * nots + "{required: [x]}" + "}" * nots + "\n"
    assert _lint_with(tmp_path, runner, schema)[0] == code
