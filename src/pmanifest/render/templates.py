"""The Jinja2 templates: the sandboxed environment (``--templates`` first, then the built-in
ones), and one template rendered, parsed back and schema-validated."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from pmanifest.errors import InputError, PmanifestError, TemplateError
from pmanifest.loader.documents import YamlProblem, load_single
from pmanifest.render.builtin import BUILTIN_PREFIX, builtin_loader
from pmanifest.render.sandbox import render_bounded, sandbox_class, template_failure
from pmanifest.render.yamltext import finalize_value, quote, to_yaml
from pmanifest.schema.crd import is_custom_kind, validate_custom
from pmanifest.schema.kubernetes import validate

WRAPPER_TEMPLATE = "supervisor.sh"  # the termination supervisor (--templates can replace it)


def _user_name(name: str) -> bool:
    return not ("/" in name or "\\" in name or name in ("", ".", ".."))


def _user_source(root: FsPath, name: str) -> tuple[str, str, Callable[[], bool]] | None:
    """A template of ``--templates DIR`` by plain file name. Nothing outside the directory is
    readable: not through ``..`` or an absolute name, nor through a symbolic link. An entry
    of that name that is no file (a dangling link, a link loop, a directory, a FIFO) is an
    error naming it, never passed over for the built-in template."""
    if not _user_name(name):
        return None
    path = root / name
    if not os.path.lexists(path):
        return None
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # dangling, a loop
        reason = getattr(exc, "strerror", None) or "a symbolic link loop"
        raise InputError(f"--templates entry {name!r} cannot be read ({reason}); make it a "
                         "template file or remove it", str(path)) from None
    if real.parent != root:
        raise InputError(f"template {name!r} leads outside the --templates directory "
                         f"(to {real}); copy the file into the directory instead", str(path))
    raw, mtime = _read_template(real, str(path), name)
    return raw, str(path), lambda: _mtime(real) == mtime


def _mtime(path: FsPath) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _read_template(real: FsPath, shown: str, name: str) -> tuple[str, float | None]:
    """The text of a template file and its modification time, through the one reader."""
    from pmanifest.io.reading import Unreadable, read_limited
    from pmanifest.loader.documents import decode

    try:
        raw, _ = read_limited(str(real), regular_only=True)
        return decode(raw), _mtime(real)
    except Unreadable as exc:
        raise InputError(f"--templates entry {name!r} cannot be read: {exc.reason}; make it a "
                         "template file or remove it", shown) from None
    except OSError:  # a directory
        raise InputError(f"--templates entry {name!r} is a directory, not a template file; "
                         "rename or remove it", shown) from None
    except YamlProblem as problem:
        raise TemplateError(f"{problem.message}; save the template as UTF-8 text", shown,
                            problem.line, problem.column) from None


def template_environment(templates_dir: str | None) -> Any:
    from jinja2 import ChoiceLoader, FunctionLoader, StrictUndefined

    loaders: list[Any] = []
    root: FsPath | None = None
    if templates_dir is not None:
        if not FsPath(templates_dir).is_dir():
            raise InputError("--templates: not a directory; give a directory of *.j2 files",
                             templates_dir)
        root = FsPath(templates_dir).resolve()
        loaders.append(FunctionLoader(functools.partial(_user_source, root)))
    loaders.append(builtin_loader())  # precompiled (pmanifest.render.builtin)
    env = sandbox_class()(
        loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False,
        finalize=finalize_value, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )
    env.user_root = root
    env.filters["q"] = quote
    env.filters["yaml"] = to_yaml
    return env


def wrapper_text(env: Any) -> str:
    from jinja2 import TemplateNotFound

    try:
        source, _, _ = env.loader.get_source(env, WRAPPER_TEMPLATE)
    except TemplateNotFound:
        raise TemplateError("template not found; reinstall pmanifest",
                            BUILTIN_PREFIX + WRAPPER_TEMPLATE) from None
    text: str = source
    return text


def _filename(env: Any, name: str) -> str:
    """The file the template ``name`` comes from, known before it is compiled."""
    root = getattr(env, "user_root", None)
    if root is not None and _user_name(name) and os.path.lexists(root / name):
        return str(root / name)
    return BUILTIN_PREFIX + name


def _is_user(filename: str) -> bool:
    return not filename.startswith(BUILTIN_PREFIX)


Overlay = Callable[[dict[str, Any]], Callable[[str], PmanifestError] | None]


def render_one(env: Any, name: str, context: dict[str, Any], version: str,
               deadline: float, overlay: Overlay | None = None) -> dict[str, Any]:
    """One template rendered, parsed back, ``overlay`` merged into it (the podTemplate of the
    spec, which says whom to blame when the result is invalid), and validated."""
    from jinja2 import TemplateNotFound, TemplateSyntaxError

    filename = _filename(env, name)
    try:
        text = render_bounded(lambda: env.get_template(name), context, deadline)
    except TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}; fix the template",
                            exc.filename or filename, exc.lineno) from None
    except TemplateNotFound as exc:
        raise TemplateError(f"template {exc.name!r} not found; add it to --templates or "
                            "reinstall pmanifest", filename) from None
    except PmanifestError:
        raise  # from our own loader (a template that leads outside --templates)
    except (Exception, RecursionError, MemoryError) as exc:
        failure = template_failure(exc, filename, _is_user)
        if failure is None:
            raise  # only built-in templates: a bug
        raise failure from None
    return _parse_and_validate(text, filename, version, overlay)


def _parse_and_validate(text: str, filename: str, version: str,
                        overlay: Overlay | None = None) -> dict[str, Any]:
    try:
        obj = load_single(text).data
    except YamlProblem as problem:
        raise TemplateError(f"rendered text is not valid YAML (line {problem.line}, column "
                            f"{problem.column} of the output): {problem.message}; fix the "
                            "template", filename) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        raise TemplateError("template must render one mapping with apiVersion and kind; fix "
                            "the template", filename)
    blame = overlay(obj) if overlay is not None else None
    if is_custom_kind(str(obj.get("apiVersion")), obj["kind"]):
        problems = validate_custom(obj, version)  # JobSet, RayCluster, RayJob
    else:
        problems = validate(obj, version)
    if problems:
        first = problems[0]
        if blame is not None:
            raise blame(f"rendered {obj['kind']} is not valid for Kubernetes {version}: "
                        f"{first.message}")
        raise TemplateError(f"rendered {obj['kind']} is not valid for Kubernetes {version}: "
                            f"{first.message}; fix the template", filename)
    return obj
