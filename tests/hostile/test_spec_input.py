"""``pmanifest render -f`` on hostile spec files: always exit 2, one line on stderr naming the
file (and line:col where known), nothing on stdout, never a traceback, never code execution."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile.conftest import invoke, run_real
from tests.hostile.spec_cases import SPECS

# name -> the stderr line after "NAME.yaml:" (exit 2 and empty stdout for every case)
EXPECTED: dict[str, str] = {
    'empty': (
        '1:1: file is empty; write a spec (see `pmanifest schema` and '
        'examples/)'
    ),
    'comment-only': (
        '1:1: file is empty; write a spec (see `pmanifest schema` and '
        'examples/)'
    ),
    'syntax-error': '3:1: did not find expected node content; fix the YAML',
    'duplicate-key': "3:1: duplicate key 'workloads'; fix the YAML",
    'alias-bomb': '6:10: too many alias expansions (a YAML bomb?); fix the YAML',
    'recursive-alias': '1:8: unknown or recursive alias *a; fix the YAML',
    'deep-nesting': '1:203: document is nested more than 200 levels deep; fix the YAML',
    'binary': (
        '1:1: file contains NUL bytes (binary data?); save the spec as UTF-8 '
        'text'
    ),
    'invalid-utf8': '2:13: file is not valid UTF-8 text; save the spec as UTF-8 text',
    'bom-wrong-type': '2:12: workloads must be a list, got integer; give a list',
    'python-tag': (
        '2:12: unsupported YAML tag '
        "'tag:yaml.org,2002:python/object/apply:os.system'; fix the YAML"
    ),
    'custom-tag': "2:12: unsupported YAML tag '!Ref'; fix the YAML",
    'bare-scalar': (
        '1:1: the spec must be a mapping (apiVersion: pmanifest/v1, workloads: '
        '[...]); see `pmanifest schema`'
    ),
    'top-level-list': (
        '1:1: the spec must be a mapping (apiVersion: pmanifest/v1, workloads: '
        '[...]); see `pmanifest schema`'
    ),
    'two-documents': '5:1: expected one YAML document, found several; fix the YAML',
    'api-version-int': (
        "1:13: apiVersion must be 'pmanifest/v1', got 1; set apiVersion: "
        'pmanifest/v1'
    ),
    'workloads-map': '2:12: workloads must be a list, got mapping; give a list',
    'workload-scalar': '2:13: workloads[0] must be a mapping, got string; give a mapping',
    'cluster-list': '1:10: cluster must be a mapping, got list; give a mapping',
    'defaults-string': '1:11: defaults must be a mapping, got string; give a mapping',
    'gpus-string': (
        '5:11: workloads[0].gpus must be an integer, got string; give an '
        'integer'
    ),
    'env-list': '5:10: workloads[0].env must be a mapping, got list; give a mapping',
    'env-value-map': (
        "5:15: unknown key 'b' in workloads[0].env.A; remove it (allowed: configMapKeyRef, "
        'fieldRef, resourceFieldRef, secretKeyRef)'
    ),
    'command-map': (
        '5:14: workloads[0].command must be a list, got mapping; give a '
        'list'
    ),
    'ports-string': '5:12: workloads[0].ports must be a list, got string; give a list',
    'checkpoint-string': (
        '5:17: workloads[0].checkpoint must be a mapping, got string; give a '
        'mapping'
    ),
    'checkpoint-grace-string': (
        '5:52: workloads[0].checkpoint.gracePeriodSeconds must be an integer, '
        'got string; give an integer'
    ),
    'checkpoint-grace-huge': (
        '5:52: workloads[0].checkpoint.gracePeriodSeconds must be at most '
        '9223372036854775807, got 999999999999999999999999999999; change the value'
    ),
    'checkpoint-command-int': (
        '5:27: workloads[0].checkpoint.command must be a list or string, got '
        'integer; quote it to make it a string'
    ),
    'role-unknown': (
        "5:11: workloads[0].role is 'boss', which is not one of worker, "
        'coordinator, serving; use one of: worker, coordinator, serving'
    ),
    'name-hostile': (
        "3:12: workloads[0].name 'a; rm -rf /' is not a DNS-1123 label; use at "
        "most 63 lowercase letters, digits and '-', starting and ending with a "
        'letter or digit'
    ),
    'helm-template': (
        '3:12: mapping keys must be scalars; a spec is plain YAML, not a template: write '
        'the values themselves'
    ),
    'nul-byte': (
        '2:1: file contains NUL bytes (binary data?); save the spec as UTF-8 '
        'text'
    ),
    'labels-int-key': (
        '5:14: workloads[0].labels key 1 must be a string, got integer; quote it: "1"'),
    'env-int-key': '5:17: workloads[0].env key 1 must be a string, got integer; quote it: "1"',
    'node-selector-int-key-in-defaults': (
        '1:27: defaults.nodeSelector key 8 must be a string, got integer; quote it: "8"'),
    'requests-int-key': (
        '5:36: workloads[0].resources.requests key 2 must be a string, got integer; quote it: '
        '"2"'),
    'aliased-int-key': '6:11: workloads[0].env key 1 must be a string, got integer; quote it: "1"',
    'int-key-in-a-toleration-list': (
        "5:30: unknown key '7' in workloads[0].tolerations[1]; remove it (allowed: effect, "
        "key, operator, tolerationSeconds, value)"),
    'hex-int-key': (  # the hint quotes the key as written: "16" would be another label
        '6:7: workloads[0].labels key 0x10 must be a string, got integer; quote it: "0x10"'),
}


def test_every_spec_case_has_an_expectation() -> None:
    assert set(SPECS) == set(EXPECTED)


@pytest.mark.parametrize("name", list(SPECS))
def test_hostile_spec(runner: CliRunner, tmp_path: Path, name: str) -> None:
    content = SPECS[name]
    raw = content if isinstance(content, bytes) else content.encode("utf-8")
    (tmp_path / f"{name}.yaml").write_bytes(raw)
    result = invoke(runner, ["render", "-f", f"{name}.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"{name}.yaml:{EXPECTED[name]}\n"
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "MARKER").exists()


def test_directory_and_missing_spec(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    result = invoke(runner, ["render", "-f", "specs"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "specs: cannot read the spec: Is a directory; check the path\n"
    result = invoke(runner, ["render", "-f", "missing.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("missing.yaml: cannot read the spec: No such file or directory; "
                             "check the path\n")


@pytest.mark.parametrize(("stdin", "stderr"), [
    (b"\x00\x01\x02garbage", "<stdin>:1:1: file contains NUL bytes (binary data?); save the spec "
                             "as UTF-8 text\n"),
    (b"\xff\xfe", "<stdin>:1:1: file is not valid UTF-8 text; save the spec as UTF-8 text\n"),
    (b"a: [", "<stdin>:2:1: did not find expected node content; fix the YAML\n"),
    (b"", "<stdin>:1:1: file is empty; write a spec (see `pmanifest schema` and examples/)\n"),
])
def test_stdin_garbage(runner: CliRunner, stdin: bytes, stderr: str) -> None:
    result = invoke(runner, ["render", "-f", "-"], stdin=stdin)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", stderr)


@pytest.mark.parametrize("name", ["alias-bomb", "python-tag", "binary"])
def test_hostile_spec_in_a_real_process(tmp_path: Path, name: str) -> None:
    content = SPECS[name]
    raw = content if isinstance(content, bytes) else content.encode("utf-8")
    (tmp_path / f"{name}.yaml").write_bytes(raw)
    proc = run_real(["render", "-f", f"{name}.yaml"], tmp_path)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode() == f"{name}.yaml:{EXPECTED[name]}\n"
    assert not (tmp_path / "MARKER").exists()


INTEGRAL = ("apiVersion: pmanifest/v1\ncluster: {{sharedVolume: {{claimName: s, mountPath: /s}}}}\n"
                     "workloads:\n  - name: a\n    image: ghcr.io/acme/t:1\n"
                     "    command: [python, t.py, {n}]\n    env: {{A: {f}, B: {n}}}\n"
                     "    gpus: {g}\n    parallelism: {p}\n    completions: {p}\n"
                     "    backoffLimit: {p}\n    ports: [{port}]\n"
                     "    resources: {{requests: {{cpu: {g}}}}}\n"
                     "    tolerations: [{{key: k, operator: Exists, effect: NoExecute, "
                     "tolerationSeconds: {g}}}]\n"
                     "    checkpoint: {{command: [c], trigger: sigterm, "
                     "gracePeriodSeconds: {grace}, dir: /s/c}}\n"
                     "  - {{name: b, role: serving, image: x, replicas: {p}}}\n")


def test_integral_floats_are_integers(runner: CliRunner, tmp_path: Path) -> None:
    """`gpus: 8.0` is the integer 8 (JSON Schema's own reading of "integer", which the
    published schema states); it failed as "fix the template" naming a built-in template.
    Values passed on as text (command, args, env) keep the text they had."""
    floats = INTEGRAL.format(n="1.0", f='"2.0"', g="8.0", p="2.0", port="8000.0", grace="300.0")
    ints = INTEGRAL.format(n='"1.0"', f='"2.0"', g="8", p="2", port="8000", grace="300")
    (tmp_path / "floats.yaml").write_text(floats)
    (tmp_path / "ints.yaml").write_text(ints)
    with_floats = invoke(runner, ["render", "-f", "floats.yaml"])
    with_ints = invoke(runner, ["render", "-f", "ints.yaml"])
    assert (with_ints.exit_code, with_ints.stderr) == (0, "")
    assert (with_floats.exit_code, with_floats.stdout, with_floats.stderr) == (
        0, with_ints.stdout, "")
    assert "        nvidia.com/gpu: 8\n" in with_ints.stdout


@pytest.mark.parametrize(("field", "message"), [
    ("gpus: 8.5", "5:11: workloads[0].gpus must be an integer, got number; give an integer"),
    ("replicas: 1.0e+400", "5:15: workloads[0].replicas must be an integer, got number; give an "
                           "integer"),
])
def test_fractional_and_infinite_floats_are_refused_at_the_spec(
        runner: CliRunner, tmp_path: Path, field: str, message: str) -> None:
    (tmp_path / "spec.yaml").write_text(
        "apiVersion: pmanifest/v1\nworkloads:\n  - name: a\n    role: serving\n"
        f"    {field}\n    image: x\n")
    result = invoke(runner, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"spec.yaml:{message}\n")


SCALAR_KEYS = ("apiVersion: pmanifest/v1\nworkloads:\n  - name: a\n    role: serving\n"
               "    image: x\n    labels: {%s: a, %s: b, %s: c, %s: d}\n")


def test_float_boolean_and_null_keys_are_the_text_written(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    """``labels: {true: x}``: the loader keeps a float, boolean or null key as the text it was
    written as (what kubectl makes of it), so the label is exactly what the spec says; only an
    integer, whose text can differ from its value (0x10), must be quoted."""
    (tmp_path / "plain.yaml").write_text(SCALAR_KEYS % ("true", "1.5", "null", "yes"))
    (tmp_path / "quoted.yaml").write_text(SCALAR_KEYS % ('"true"', '"1.5"', '"null"', '"yes"'))
    plain = invoke(runner, ["render", "-f", "plain.yaml"])
    quoted = invoke(runner, ["render", "-f", "quoted.yaml"])
    assert (quoted.exit_code, quoted.stderr) == (0, "")
    assert "    'true': a\n    '1.5': b\n    'null': c\n    'yes': d\n" in quoted.stdout
    assert (plain.exit_code, plain.stdout, plain.stderr) == (0, quoted.stdout, "")


VLLM = Path(__file__).resolve().parents[2] / "examples" / "serving-vllm.yaml"
STARTUP = "periodSeconds: 10, failureThreshold: 180"


@pytest.mark.parametrize(("startup", "rendered"), [
    ("periodSeconds: 10, failureThreshold: 2147483647",
     "periodSeconds: 10\n          failureThreshold: 2147483647"),
    ("periodSeconds: 2147483647, failureThreshold: 180",
     "periodSeconds: 2147483647\n          failureThreshold: 180"),
    ("initialDelaySeconds: 2147483647, periodSeconds: 2147483647, failureThreshold: 2147483647",
     "initialDelaySeconds: 2147483647\n          periodSeconds: 2147483647\n"
     "          failureThreshold: 2147483647"),
])
def test_a_startup_probe_at_the_int32_limit_caps_the_progress_deadline(
        runner: CliRunner, tmp_path: Path, startup: str, rendered: str) -> None:
    """The deadline derived from the probes (period x threshold + 300 s) overflowed int32 and
    failed as "fix the template" naming the built-in deployment.yaml.j2; it is capped at the
    field's limit (68 years: the probes allow as much)."""
    text = VLLM.read_text()
    assert STARTUP in text
    (tmp_path / "vllm.yaml").write_text(text)
    (tmp_path / "slow.yaml").write_text(text.replace(STARTUP, startup))
    normal = invoke(runner, ["render", "-f", "vllm.yaml"])
    slow = invoke(runner, ["render", "-f", "slow.yaml"])
    expected = normal.stdout.replace(
        "progressDeadlineSeconds: 2105", "progressDeadlineSeconds: 2147483647").replace(
        "periodSeconds: 10\n          failureThreshold: 180", rendered)
    assert expected != normal.stdout
    assert (slow.exit_code, slow.stdout, slow.stderr) == (0, expected, "")
