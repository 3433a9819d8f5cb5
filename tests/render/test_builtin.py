"""The built-in templates run precompiled (templates/compiled, written by
``python -m pmanifest.generate``): the committed modules are what the generator makes
now, they render exactly what compiling the templates from source renders, and a module made
from another source or by another jinja2 is not used."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2 import ChoiceLoader, FunctionLoader, Template, UndefinedError

from pmanifest.render.builtin import BUILTIN_PREFIX, builtin_loader, builtin_source, module_name
from pmanifest.render.engine import _target_version, render_owned
from pmanifest.render.precompile import builtin_templates, generated
from pmanifest.render.sandbox import _template_frames
from pmanifest.render.spec import load_spec
from pmanifest.render.templates import template_environment

from .conftest import EXAMPLES, ROOT

COMPILED = ROOT / "templates" / "compiled"
SPECS = [*EXAMPLES, ROOT / "bench" / "four-workloads.yaml"]
TEMPLATES = builtin_templates()


def _recorded_version(name: str) -> str:
    text = (COMPILED / f"{module_name(name)}.py").read_text(encoding="utf-8")
    found = re.search(r"^JINJA2_VERSION = '(.*)'$", text, re.MULTILINE)
    assert found, f"{name}: its module records no jinja2 version"
    return found.group(1)


FOR_THIS_JINJA2 = all(_recorded_version(name) == jinja2.__version__ for name in TEMPLATES)
needs_this_jinja2 = pytest.mark.skipif(
    not FOR_THIS_JINJA2, reason=f"templates/compiled is not for jinja2 {jinja2.__version__}: "
    "run python -m pmanifest.generate (test_committed_modules_... checks the fallback)")


def _from_module(template: Template) -> bool:
    """Whether the template's code is that of its precompiled module (compiled from source,
    its code carries the template's own file name)."""
    code_file = template.root_render_func.__code__.co_filename
    if code_file == BUILTIN_PREFIX + template.name:
        return False
    assert code_file.endswith(os.path.join("compiled", f"{module_name(template.name)}.py"))
    return True


def _from_source() -> Any:
    """render's environment with the built-in templates compiled from source, as before they
    were precompiled."""
    env = template_environment(None)
    env.loader = ChoiceLoader([FunctionLoader(builtin_source)])
    return env


def test_the_built_in_templates_are_found() -> None:
    assert {"job.yaml.j2", "pod.yaml.j2", "distributed-jobspec.yaml.j2"} <= set(TEMPLATES)
    assert "supervisor.sh" not in TEMPLATES  # text, read with get_source


@pytest.fixture(scope="module")
def made() -> dict[str, str]:
    """What the generator writes now (made once for every template's test)."""
    return generated()


@pytest.mark.parametrize("name", TEMPLATES)
def test_committed_modules_are_what_the_generator_writes(name: str, made: dict[str, str]
                                                         ) -> None:
    assert sorted(p.name for p in COMPILED.glob("*.py")) == sorted(made), \
        "run python -m pmanifest.generate"
    assert (COMPILED / "__init__.py").read_text(encoding="utf-8") == made["__init__.py"]
    template = template_environment(None).get_template(name)
    if _recorded_version(name) == jinja2.__version__:
        file = f"{module_name(name)}.py"
        assert (COMPILED / file).read_text(encoding="utf-8") == made[file], \
            f"templates/compiled/{file} is stale: run python -m pmanifest.generate"
        assert _from_module(template)
    else:  # made by another jinja2: compiled from source instead
        assert not _from_module(template)


@needs_this_jinja2
@pytest.mark.parametrize("name", TEMPLATES)
def test_a_built_in_template_runs_its_precompiled_code(name: str) -> None:
    env = template_environment(None)
    template = env.get_template(name)
    assert _from_module(template)
    assert (template.name, template.filename) == (name, BUILTIN_PREFIX + name)
    assert template.root_render_func.__globals__["environment"] is env


def test_each_environment_runs_its_own_copy_of_the_code() -> None:
    """The compiled code reads ``environment`` (and includes through it) as a global: two
    environments of one process, with their own ``--templates``, must not share it."""
    first, second = template_environment(None), template_environment(None)
    one, two = first.get_template("job.yaml.j2"), second.get_template("job.yaml.j2")
    assert one.root_render_func.__globals__["environment"] is first
    assert two.root_render_func.__globals__["environment"] is second


class _Recorded(Template):
    """A template that keeps the text of each render in its environment's ``texts``."""

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        text = "".join(super().generate(*args, **kwargs))
        self.environment.texts.append((self.name, text))  # type: ignore[attr-defined]
        yield text


def _render(env: Any, path: Path) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """The text of each template render for the spec, and the objects."""
    env.template_class = _Recorded
    env.texts = []
    spec = load_spec(path.read_text(encoding="utf-8"), str(path), None)
    owned = render_owned(spec, _target_version(spec, None), env, spec.profile)
    return env.texts, [obj for _, obj in owned]


@needs_this_jinja2
@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_precompiled_templates_render_what_the_source_does(path: Path) -> None:
    precompiled, from_source = template_environment(None), _from_source()
    texts, objects = _render(precompiled, path)
    assert texts and (texts, objects) == _render(from_source, path)
    loaded = list(precompiled.cache.values())
    assert loaded and all(_from_module(t) for t in loaded)
    assert sorted(t.name for t in loaded) == sorted(t.name for t in from_source.cache.values())
    assert not any(_from_module(t) for t in from_source.cache.values())


def _line(name: str, text: str) -> int:
    found = builtin_source(name)
    assert found is not None
    return next(n for n, line in enumerate(found[0].splitlines(), 1) if text in line)


@needs_this_jinja2
def test_errors_in_a_precompiled_template_keep_its_name_and_lines() -> None:
    """An error in pod.yaml.j2, included by deployment.yaml.j2: each frame names its template
    and its line, as when both are compiled from source."""
    workload = {"metadata": {}, "replicas": 1, "selector": {}}  # no labels, which pod wants
    runtime = {"progress_deadline_seconds": None, "strategy": {}}
    failures = []
    for env in (template_environment(None), _from_source()):
        with pytest.raises(UndefinedError) as raised:
            env.get_template("deployment.yaml.j2").render(workload=workload, runtime=runtime)
        failures.append((str(raised.value), list(_template_frames(raised.value.__traceback__))))
    assert failures[0] == failures[1] == ("'dict object' has no attribute 'labels'", [
        (BUILTIN_PREFIX + "deployment.yaml.j2",
         _line("deployment.yaml.j2", '{% include "pod.yaml.j2" %}')),
        (BUILTIN_PREFIX + "pod.yaml.j2", _line("pod.yaml.j2", "{{ workload.labels }}")),
    ])


def test_a_template_edited_since_it_was_precompiled_is_compiled_from_source() -> None:
    class Edited(type(builtin_loader())):  # type: ignore[misc]
        def get_source(self, environment: Any, template: str) -> Any:
            _, filename, uptodate = super().get_source(environment, template)
            return "edited\n", filename, uptodate

    env = template_environment(None)
    env.loader = ChoiceLoader([Edited()])
    template = env.get_template("service.yaml.j2")
    assert not _from_module(template)
    assert (template.render(), template.filename) == ("edited\n",
                                                      BUILTIN_PREFIX + "service.yaml.j2")


def test_a_module_made_by_another_jinja2_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jinja2, "__version__", "0.0.1")
    template = template_environment(None).get_template("job.yaml.j2")
    assert not _from_module(template)
    assert template.filename == BUILTIN_PREFIX + "job.yaml.j2"
