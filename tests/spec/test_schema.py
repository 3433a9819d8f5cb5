"""`pmanifest schema`: a valid draft 2020-12 schema that documents every field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from pmanifest.cli.main import main
from pmanifest.render.spec import SPEC_SCHEMA

ROOT = Path(__file__).parents[2]
# fields that are required, or whose absence means something no value expresses
NO_DEFAULT = {
    "workloads", "cluster.sharedVolume", "workloads[].checkpoint", "workloads[].command",
    "cluster.sharedVolume.claimName", "cluster.sharedVolume.mountPath",
    "workloads[].name", "workloads[].image", "defaults.image",
    "workloads[].namespace", "defaults.namespace",
    "workloads[].serviceAccountName", "defaults.serviceAccountName",
    "workloads[].checkpoint.command", "workloads[].checkpoint.trigger",
    "workloads[].checkpoint.dir", "workloads[].activeDeadlineSeconds",
    # the mode's default depends on whether a command is given; no expected duration: unchecked
    "workloads[].checkpoint.mode", "workloads[].checkpoint.expectedSeconds",
    *(f"{w}.tolerations[].{k}" for w in ("workloads[]", "defaults")
      for k in ("key", "effect", "tolerationSeconds")),
    # a volume's name, path and source are required or exclusive; omitting them means nothing
    *(f"{w}.volumes[].{k}" for w in ("workloads[]", "defaults")
      for k in ("name", "mountPath", "subPath", "claimName", "configMap", "secret", "emptyDir",
                "emptyDir.medium", "emptyDir.sizeLimit")),
    # distributed: output and nprocPerNode default by framework and gpus (documented), the rest
    # is required or optional with nothing in its place
    *(f"workloads[].distributed{k}" for k in (
        "", ".output", ".maxNodes", ".nprocPerNode", ".rayVersion", ".gcsFaultTolerance",
        ".gcsFaultTolerance.redisAddress", ".gcsFaultTolerance.redisPasswordSecret",
        ".gcsFaultTolerance.redisPasswordSecret.name",
        ".gcsFaultTolerance.redisPasswordSecret.key",
        ".gcsFaultTolerance.externalStorageNamespace")),
    # run-time fields: a source or a handler is exclusive, a name or port required, and an
    # omitted priority class or Job knob means the cluster's or Kubernetes' behaviour
    *(f"{w}.{k}" for w in ("workloads[]", "defaults")
      for k in ("priorityClassName", "envFrom[].secretRef", "envFrom[].secretRef.name",
                "envFrom[].configMapRef", "envFrom[].configMapRef.name",
                *(f"env.*.{source}{sub}" for source in ("secretKeyRef", "configMapKeyRef",
                                                          "fieldRef", "resourceFieldRef")
                  for sub in ("", ".name", ".key", ".fieldPath", ".resource")))),
    *(f"workloads[].{k}" for k in ("ttlSecondsAfterFinished", "backoffLimitPerIndex",
                                    "maxFailedIndexes")),
    *(f"workloads[].probes.{probe}{sub}" for probe in ("readiness", "liveness", "startup")
      for sub in ("", ".httpGet", ".httpGet.port", ".httpGet.httpHeaders[].name", ".tcpSocket",
                  ".tcpSocket.port", ".exec", ".exec.command", ".grpc", ".grpc.port")),
    # qos omitted: requests and limits as given; spread's default depends on the replicas
    "workloads[].qos", "workloads[].spread",
}


def _fields(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, sub in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        yield here, sub
        yield from _fields(sub, here)
        items = sub.get("items")
        if isinstance(items, dict):
            yield from _fields(items, here + "[]")
        values = sub.get("additionalProperties")
        if isinstance(values, dict) and "properties" in values:  # env values: name -> source
            yield from _fields(values, here + ".*")


def _schema_output() -> dict[str, Any]:
    result = CliRunner().invoke(main, ["schema"])
    assert (result.exit_code, result.stderr) == (0, "")
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_schema_command_prints_the_schema() -> None:
    data = _schema_output()
    assert data == SPEC_SCHEMA
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(data)


def test_every_field_has_a_description_and_a_valid_default() -> None:
    fields = dict(_fields(SPEC_SCHEMA))
    assert "workloads[].checkpoint.gracePeriodSeconds" in fields
    assert "defaults.volumes[].emptyDir.sizeLimit" in fields
    assert "workloads[].env.*.secretKeyRef.optional" in fields
    assert "workloads[].probes.startup.failureThreshold" in fields
    for path, sub in fields.items():
        assert sub.get("description"), path
        if path in NO_DEFAULT:
            assert "default" not in sub, path
            continue
        assert "default" in sub, path
        bare = {k: v for k, v in sub.items() if k not in ("description", "default")}
        assert Draft202012Validator(bare).is_valid(sub["default"]), path


def test_examples_validate_against_the_printed_schema() -> None:
    validator = Draft202012Validator(_schema_output())
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        validator.validate(yaml.safe_load(example.read_text()))


MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)\s*$", re.MULTILINE)


def test_examples_modelines_name_the_printed_schema() -> None:
    """The modeline of an example (docs/integrations.md, "Editor support") names a file next
    to it that is exactly what `pmanifest schema` prints (regenerate it with `pmanifest schema >
    examples/.pmanifest-spec.schema.json` when the spec changes), and the example validates
    against that file."""
    printed = CliRunner().invoke(main, ["schema"]).stdout
    with_modeline = []
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        text = example.read_text()
        names = MODELINE.findall(text)
        if not names:
            continue
        assert len(names) == 1, example.name
        schema_file = (example.parent / names[0]).resolve()
        assert schema_file.is_file(), f"{example.name}: {names[0]} does not exist"
        assert schema_file.read_text() == printed, (
            f"{schema_file.name} is not what `pmanifest schema` prints; regenerate it")
        Draft202012Validator(json.loads(schema_file.read_text())).validate(yaml.safe_load(text))
        with_modeline.append(example.name)
    assert "serving-vllm.yaml" in with_modeline
