"""The built-in templates (``pmanifest.templates``): their source, and a loader that takes each
one precompiled instead of compiling it at run time (compiling the built-ins was about a tenth
of a render's instructions).

``python -m pmanifest.generate`` writes, for each ``NAME.j2``, the module
``pmanifest.templates.compiled.<NAME with - and . as _>``: exactly the Python source Jinja's
``Environment.compile(..., raw=True)`` makes of it for render's environment, then the jinja2
version that made it and the fingerprint (length and CRC-32) of the template source. The
loader uses a module only when both still hold (the same jinja2, the very source shipped
beside it); otherwise, or with no module, the template is compiled from source as any
other. The environment's options are pmanifest's own code: ``tests/render/test_builtin.py``
regenerates every module with them and fails when a committed one differs.

The module is never imported: its code object (from the import system, so from its bytecode
cache) runs in a namespace of its own for every environment, as Jinja's ``from_code`` does. The
compiled code reads ``environment`` as a global, which one shared module would hand to every
environment of the process. Template names, file names (``pmanifest/templates/NAME``) and line
numbers in errors are those of a template compiled from source: the code is the same, and
Jinja maps lines with its ``debug_info``. Jinja's own ``ModuleLoader`` checks neither version nor
source and has no ``get_source``, which render needs for the supervisor's text.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, MutableMapping
from types import CodeType
from typing import Any

from pmanifest.io.reading import fingerprint, read_package_file, shipped

BUILTIN_PREFIX = "pmanifest/templates/"
COMPILED_PACKAGE = "pmanifest.templates.compiled"
VERSION_NAME = "JINJA2_VERSION"  # the names the generated modules define last
HASH_NAME = "SOURCE_FINGERPRINT"


def builtin_source(name: str) -> tuple[str, str, Callable[[], bool]] | None:
    path = shipped("pmanifest.templates", name)
    if "/" in name or "\\" in name or not os.path.isfile(path):
        return None
    return (read_package_file(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"),
            BUILTIN_PREFIX + name, lambda: True)


def module_name(template: str) -> str | None:
    """The module a built-in template ``NAME.j2`` is precompiled to; None for other names."""
    module = template.removesuffix(".j2").replace("-", "_").replace(".", "_")
    return module if template.endswith(".j2") and module.isidentifier() else None


def source_hash(source: str) -> str:
    return fingerprint(source.encode("utf-8"))


def builtin_loader() -> Any:
    """A ``jinja2.BaseLoader`` of the built-in templates, precompiled where possible."""
    from jinja2 import BaseLoader, Environment, Template, TemplateNotFound

    class BuiltinLoader(BaseLoader):
        def get_source(self, environment: Environment,
                       template: str) -> tuple[str, str, Callable[[], bool]]:
            found = builtin_source(template)
            if found is None:
                raise TemplateNotFound(template)
            return found

        def load(self, environment: Environment, name: str,
                 globals: MutableMapping[str, Any] | None = None) -> Template:
            source, filename, _ = self.get_source(environment, name)
            namespace = precompiled(environment, name, source, filename)
            if namespace is None:
                return super().load(environment, name, globals)  # compiled from source
            return environment.template_class.from_module_dict(
                environment, namespace, {} if globals is None else globals)

    return BuiltinLoader()


def precompiled(environment: Any, name: str, source: str,
                filename: str) -> dict[str, Any] | None:
    """The namespace of template ``name`` run from its precompiled module for
    ``environment``, or None when there is no module or it is not for this source and this
    jinja2."""
    import jinja2

    code = _module_code(name)
    if code is None:
        return None
    namespace: dict[str, Any] = {"environment": environment, "__file__": filename}
    try:
        exec(code, namespace)  # imports from jinja2.runtime, defines functions and constants
    except Exception:  # made by a jinja2 whose runtime exports other names, or corrupt
        return None
    if namespace.get(VERSION_NAME) != jinja2.__version__ or \
            namespace.get(HASH_NAME) != source_hash(source):
        return None
    return namespace


def _module_code(name: str) -> CodeType | None:
    module = module_name(name)
    if module is None:
        return None
    try:
        spec = importlib.util.find_spec(f"{COMPILED_PACKAGE}.{module}")
    except ImportError:  # no compiled package at all
        return None
    get_code = getattr(spec.loader, "get_code", None) if spec is not None else None
    if spec is None or get_code is None:
        return None
    try:
        code: CodeType | None = get_code(spec.name)  # from the bytecode cache when there is one
    except Exception:  # a corrupt module or bytecode (NUL bytes, bad marshal data): the
        return None  # template is compiled from source instead, as for a stale module
    return code
