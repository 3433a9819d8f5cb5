"""Python rule plugins, loaded from the entry-point group ``pmanifest.rules`` through the real
importlib.metadata machinery: a fake installed distribution (a ``*.dist-info`` directory with
``entry_points.txt``) and its module on sys.path, no mocks."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.rules import _LOADED_PLUGINS, _RUNTIME, registry, unregister

MODULE = '''\
from pmanifest.rules import Hit, Rule, RuleMeta, register

META = RuleMeta("ACMEPY001", "no-latest-tag", "warning", "Images are pinned.",
                "A :latest image changes under a running Job.", "Pin a tag or digest.",
                "", "")


def check(ctx):
    for c in ctx.workload.containers():
        if str(c.data.get("image", "")).endswith(":latest"):
            yield Hit((*c.path, "image"), f"container {c.name!r} uses a :latest image")


register(Rule(META, check, source="acme-rules"))
'''

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - {name: main, image: "busybox:latest"}
"""


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Install a fake distribution ``name`` with entry point ``target`` and module files."""
    modules: list[str] = []

    def _install(name: str, target: str, files: dict[str, str]) -> None:
        dist = tmp_path / f"{name}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[pmanifest.rules]\n{name} = {target}\n")
        for file, text in files.items():
            (tmp_path / file).write_text(textwrap.dedent(text))
            modules.append(file.removesuffix(".py"))
        monkeypatch.syspath_prepend(str(tmp_path))
        registry.cache_clear()

    yield _install
    monkeypatch.undo()  # off sys.path before the registry is rebuilt
    for rule_id in [r for r in _RUNTIME if r.startswith("ACMEPY")]:
        unregister(rule_id)
    for module in modules:
        sys.modules.pop(module, None)
    _LOADED_PLUGINS.clear()
    registry.cache_clear()


def test_a_module_plugin_registers_rules_like_the_builtins(install: Callable[..., None]) -> None:
    install("acme-rules", "acme_rules", {"acme_rules.py": MODULE})
    assert registry()["ACMEPY001"].source == "acme-rules"
    # (the plugin's rule alone: a new built-in rule changes nothing here)
    result = CliRunner().invoke(main, ["lint", "--select", "ACMEPY001", "-"], input=POD)
    assert result.stdout == ("<stdin>:6:20: warning ACMEPY001[no-latest-tag] container 'main' "
                             "uses a :latest image\n")
    listed = CliRunner().invoke(main, ["rules"])
    assert "ACMEPY001  no-latest-tag" in listed.stdout
    # what it applies to is the Rule's, in the catalogue too
    explained = CliRunner().invoke(main, ["explain", "no-latest-tag"])
    assert explained.exit_code == 0
    assert explained.stdout.startswith(
        "ACMEPY001 no-latest-tag (warning)\n\nImages are pinned.\n\nApplies to:\n  every pod ")
    assert " ".join(explained.stdout.split()).startswith(  # (wrapped to the width)
        "ACMEPY001 no-latest-tag (warning) Images are pinned. Applies to: every pod "
        "template: of the core workload kinds (Pod, Job, CronJob, Deployment, StatefulSet, "
        "ReplicaSet, ReplicationController, DaemonSet, PodTemplate), ")


def test_an_object_plugin_is_explained_as_one(install: Callable[..., None]) -> None:
    install("acme-objects", "acme_objects", {"acme_objects.py": MODULE.replace(
        "ctx.workload.containers()", "ctx.workloads[0].containers()").replace(
        'source="acme-rules"', 'applies="object", source="acme-objects"')})
    assert registry()["ACMEPY001"].applies == "object"
    explained = CliRunner().invoke(main, ["explain", "ACMEPY001"])
    assert "\n\nApplies to:\n  every Kubernetes object\n\n" in explained.stdout
    result = CliRunner().invoke(main, ["lint", "--select", "ACMEPY001", "-"], input=POD)
    assert result.stdout == ("<stdin>:6:20: warning ACMEPY001[no-latest-tag] container 'main' "
                             "uses a :latest image\n")


def test_a_callable_plugin(install: Callable[..., None]) -> None:
    install("acme-call", "acme_call:setup",
            {"acme_call.py": MODULE.replace("\nregister(", "\ndef setup():\n    register(")})
    assert "ACMEPY001" in registry()


@pytest.mark.parametrize(("files", "error"), [
    ({"acme_broken.py": "import not_a_module_anywhere\n"},
     "ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
    ({"acme_broken.py": MODULE.replace('"ACMEPY001"', '"acme-1"')},
     "RegistryError: acme-rules: malformed id or slug: acme-1 no-latest-tag"),
    ({"acme_broken.py": MODULE.replace('"no-latest-tag"', '"prestop-sleep"')},
     "RegistryError: acme-rules: duplicate rule ACMEPY001 / prestop-sleep"),
])
def test_a_broken_plugin_is_named_and_exits_2(install: Callable[..., None],
                                              files: dict[str, str], error: str) -> None:
    install("acme-broken", "acme_broken", files)
    result = CliRunner().invoke(main, ["lint", "--no-schema", "-"], input=POD)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("pmanifest: rule plugin 'acme-broken' = acme_broken (from "
                                    f"acme-broken) is broken: {error}")
    assert not [r for r in _RUNTIME if r.startswith("ACMEPY")]  # nothing half-registered
