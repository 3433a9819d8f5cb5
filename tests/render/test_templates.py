"""--templates DIR overrides built-in templates by file name; broken templates are errors that
name the template file, with nothing on stdout."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.render.engine import quote, to_yaml

from .conftest import ROOT

SERVING = str(ROOT / "examples" / "serving.yaml")
BUILTIN = importlib.resources.files("pmanifest.templates")


def _render(templates: Path, spec: str = SERVING) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["render", "-f", spec, "--templates", str(templates)])
    return result.exit_code, result.stdout, result.stderr


def _override(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_templates_ship_in_the_package() -> None:
    names = {p.name for p in BUILTIN.iterdir()}
    assert {"job.yaml.j2", "deployment.yaml.j2", "service.yaml.j2", "pod.yaml.j2",
            "poddisruptionbudget.yaml.j2", "supervisor.sh"} <= names
    assert "sigterm-wrapper.sh" not in names  # replaced by the supervisor


def test_override_by_file_name(tmp_path: Path) -> None:
    text = BUILTIN.joinpath("service.yaml.j2").read_text().replace(
        "metadata: {{ workload.metadata }}\n",
        "metadata:\n  name: {{ workload.name }}\n  annotations: {team: {{ workload.name }}}\n",
        1)
    code, out, err = _render(_override(tmp_path, "service.yaml.j2", text))
    assert (code, err) == (0, "")
    service = next(o for o in yaml.safe_load_all(out) if o["kind"] == "Service")
    assert service["metadata"]["annotations"] == {"team": "llm-api"}


def test_override_of_an_included_template(tmp_path: Path) -> None:
    text = BUILTIN.joinpath("pod.yaml.j2").read_text().replace(
        "spec:\n", "spec:\n  priorityClassName: batch-low\n", 1)
    code, out, _ = _render(_override(tmp_path, "pod.yaml.j2", text))
    assert code == 0
    deployment = next(o for o in yaml.safe_load_all(out) if o["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "batch-low"


@pytest.mark.parametrize(("name", "text", "message"), [
    ("service.yaml.j2", "apiVersion: v1\nkind: Service\n{% if %}\n",
     ":3: template syntax error: Expected an expression, got 'end of statement block'; "
     "fix the template"),
    ("service.yaml.j2", "apiVersion: v1\nkind: Service\nmetadata: {{ nothing }}\n",
     ":3: template failed: 'nothing' is undefined; fix the template"),
    ("service.yaml.j2", "apiVersion: v1\nkind: Service\nx: {{ ''.__class__.__mro__ }}\n",
     ":3: template failed: access to attribute '__class__' of 'str' object is unsafe; "
     "fix the template"),
    ("service.yaml.j2", "apiVersion: v1\nkind: Service\nmetadata: [oops\n",
     ": rendered text is not valid YAML (line 4, column 1 of the output): did not find "
     "expected ',' or ']'; fix the template"),
    ("service.yaml.j2", "apiVersion: v1\nkind: Service\nmetadata: {{ workload.metadata }}\n"
     "spec: {bogus: 1}\n",
     ": rendered Service is not valid for Kubernetes 1.31: unknown key 'bogus' in spec; remove "
     "it; "
     "fix the template"),
    ("poddisruptionbudget.yaml.j2", "- a list\n",
     ": template must render one mapping with apiVersion and kind; fix the template"),
])
def test_broken_template_names_the_file(name: str, text: str, message: str,
                                        tmp_path: Path) -> None:
    code, out, err = _render(_override(tmp_path, name, text))
    assert (code, out) == (2, "")
    assert err == f"{tmp_path / name}{message}\n"


def test_templates_dir_must_exist(tmp_path: Path) -> None:
    code, out, err = _render(tmp_path / "missing")
    assert (code, out) == (2, "")
    assert "missing" in err and err.count("\n") == 1


def test_quote_is_a_double_quoted_scalar() -> None:
    for value in ["", "a\nb", "{{ x }}", "it's", '"', "\u2028", "- x", "null"]:
        text = quote(value)
        assert text.startswith('"') and text.endswith('"') and "\n" not in text
        assert yaml.safe_load(text) == value
    assert to_yaml({"k": ["a", 1, True, None]}) == '{"k": ["a", 1, true, null]}'


@pytest.mark.parametrize("include", ["../outside.j2", "/etc/hostname", "sub/../../outside.j2"])
def test_templates_cannot_include_files_outside_their_directory(
    include: str, tmp_path: Path
) -> None:
    (tmp_path / "outside.j2").write_text("secret: 1\n")
    templates = tmp_path / "templates"
    templates.mkdir()
    text = f'apiVersion: v1\nkind: Service\n{{% include "{include}" %}}\n'
    code, out, err = _render(_override(templates, "service.yaml.j2", text))
    assert (code, out) == (2, "")
    assert err == (f"{templates / 'service.yaml.j2'}: template {include!r} not found; add it "
                   "to --templates or reinstall pmanifest\n")


def test_a_symlink_out_of_the_templates_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside.yaml").write_text("metadata: {name: leaked}\n")
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "evil.j2").symlink_to(tmp_path / "outside.yaml")
    text = 'apiVersion: v1\nkind: Service\n{% include "evil.j2" %}\n'
    code, out, err = _render(_override(templates, "service.yaml.j2", text))
    assert (code, out) == (2, "")
    assert err == (f"{templates / 'evil.j2'}: template 'evil.j2' leads outside the --templates "
                   f"directory (to {tmp_path / 'outside.yaml'}); copy the file into the "
                   "directory instead\n")
