"""The pod templates of the covered kinds (:mod:`.scope`) as one CEL list.

``variables.templates`` holds, for the admitted object, one map per pod template lint reads:
``pod`` (the pod spec), ``meta`` (its metadata), ``kindRole`` and ``byImage`` (the role it has
when none is declared, and whether a database image makes it a coordinator), ``containers``
(init containers first), ``job`` (a batch/v1 Job spec around it, or ``{}``), ``isJob`` and
``title``. :func:`role` then decides the role as :func:`pmanifest.kube.workloads.role_of` does:
the ``pmanifest.io/role`` label or annotation of the template, then of the object, then the
config's ``roles:``, then a database or queue image, then the kind's role.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator

from pmanifest.admission.cel import all_of, at, fresh, present, string, strings
from pmanifest.admission.scope import Covered, covered, kind_matches
from pmanifest.kube.contract import ROLE_LABEL, ROLES
from pmanifest.kube.kinds import Kind, Template
from pmanifest.kube.podtemplates import parse
from pmanifest.kube.roles import stateful_name_pattern

# ------------------------------------------------------------------------------- templates

def _meta_path(template: Template) -> tuple[str, ...]:
    pod = parse(template.path)
    if template.meta == "self":
        return pod
    if template.meta == "child":
        return (*pod, "metadata")
    return (*pod[:-1], "metadata")


def declared(meta: str, path: tuple[str, ...]) -> str:
    """The role a ``pmanifest.io/role`` label, else annotation, declares at ``meta`` + path
    (a value that is no role is passed over), or ``''``."""
    out = "''"
    for key in ("annotations", "labels"):  # built inside out: labels are read first
        where = at(meta, (*path, key))
        value = f"{where}[{string(ROLE_LABEL)}]"
        test = all_of([present(meta, (*path, key)), f"{string(ROLE_LABEL)} in {where}",
                       f"{value} in {strings(ROLES)}"])
        out = f"({test}) ? {value} : ({out})"
    return out


def stateful_image_pattern() -> str:
    """An RE2 pattern matching exactly the images :func:`pmanifest.kube.roles.stateful_image`
    calls databases or queues: the name after the last ``/`` before any ``@``, up to its
    first ``:``, in lower case (Python's ``str.lower``, character by character), follows
    :func:`pmanifest.kube.roles.stateful_name_pattern`."""
    def word(text: str) -> str:
        return "".join(_lower_class(ch) if ch.isalpha() else _literal(ch) for ch in text)

    letters = "".join("".join(case_folded("lower").get(ch, [ch]))
                      for ch in "abcdefghijklmnopqrstuvwxyz")
    name = stateful_name_pattern(word, f"[{letters}]", "[0-9]")
    return f"^(?:[^@]*/)?{name}(?::[^@/]*)?(?:@(?s:.*))?$"


def _literal(ch: str) -> str:
    return "\\" + ch if ch == "." else ch


def _lower_class(ch: str) -> str:
    """A character class of every character whose ``str.lower()`` is ``ch``."""
    found = case_folded("lower").get(ch, [ch])
    return ch if len(found) == 1 else "[" + "".join(found) + "]"


@functools.cache
def case_folded(method: str) -> dict[str, list[str]]:
    """ASCII letter -> every character whose ``str.lower()`` (``str.upper()``) is that
    letter: ``k`` -> ``k``, ``K``, KELVIN SIGN. Exact, where ``(?i)`` would fold more."""
    out: dict[str, list[str]] = {}
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        mapped = getattr(ch, method)()
        if len(mapped) == 1 and mapped.isascii() and mapped.isalpha():
            out.setdefault(mapped, []).append(ch)
    return out


def stateful(pod: str) -> str:
    """A (non-init) container of the pod at ``pod`` runs a database or queue image."""
    c = fresh("c")
    return (f"{present(pod, ['containers'])} && {pod}.containers.exists({c}, has({c}.image) && "
            f"{c}.image.matches({string(stateful_image_pattern())}))")


def role(entry: str) -> str:
    """:func:`pmanifest.kube.workloads.role_of` for the template ``entry`` (an item of
    ``variables.templates``): declared on the template, then on the object, then the
    config's role for the kind, a database or queue image, the kind's role."""
    own = declared(f"{entry}.meta", ())
    on_object = declared("object", ("metadata",))
    image = stateful(f"{entry}.pod")
    fallback = f"({entry}.byImage && ({image})) ? 'coordinator' : {entry}.kindRole"
    return f"({own}) != '' ? ({own}) : (({on_object}) != '' ? ({on_object}) : ({fallback}))"


def inferred(entry: str) -> str:
    """Lint reads the role of the template ``entry`` from what its pod runs (no declared role,
    the table's anchor empty, no database image): a policy cannot, and leaves it to lint."""
    own = declared(f"{entry}.meta", ())
    on_object = declared("object", ("metadata",))
    return all_of([f"{entry}.inferred", f"({own}) == ''", f"({on_object}) == ''",
                   f"!({stateful(f'{entry}.pod')})"])


def _kind_role(kind: Kind, template: Template,
               roles: tuple[tuple[str, str], ...]) -> tuple[str, bool]:
    """The role a template of ``kind`` has when none is declared, and whether a database or
    queue image makes it a coordinator (not when the config names the kind's role)."""
    configured = next((role for name, role in roles
                       if kind_matches((name,), kind.group, kind.kind)), None)
    if configured is not None:
        return configured, False
    return template.role, template.by_image


def _containers(template: Template) -> str:
    """Init containers first, then the others (read only where the pod spec is present)."""
    pod = at("object", parse(template.path))
    return " + ".join(f"({present(pod, [key])} ? {at(pod, [key])} : [])"
                      for key, is_list, _ in template.containers if is_list)


def _meta(template: Template) -> str:
    """The template's metadata, or ``{}`` (read only where the pod spec is present, so only
    the steps past the pod spec's holder are checked)."""
    path = _meta_path(template)
    pod = parse(template.path)
    known = pod if template.meta in ("self", "child") else pod[:-1]
    base = at("object", known)
    rest = path[len(known):]
    if not rest:
        return base
    return f"{present(base, rest)} ? dyn({at(base, rest)}) : dyn({{}})"


def _entry(kind: Kind, template: Template, roles: tuple[tuple[str, str], ...]) -> str:
    pod = parse(template.path)
    job = pod[:-2] if template.job else None
    title = f"{kind.title or kind.kind} {template.part}".strip()
    kind_role, by_image = _kind_role(kind, template, roles)
    configured = any(kind_matches((name,), kind.group, kind.kind) for name, _ in roles)
    inferred = "false"
    if template.anchor_if is not None and not configured:
        anchor = parse(template.anchor_if)
        inferred = f"!({present('object', anchor)} && size({at('object', anchor)}) > 0)"
    fields = {
        "pod": at("object", pod),
        "meta": _meta(template),
        "kindRole": string(kind_role),
        "byImage": "true" if by_image else "false",
        "inferred": inferred,
        "containers": _containers(template),
        "job": "{}" if job is None else at("object", job),
        "isJob": "true" if job is not None else "false",
        "title": string(title),
    }
    body = ", ".join(f"'{key}': dyn({value})" for key, value in fields.items())
    return f"({present('object', pod)}) ? [{{{body}}}] : []"


def templates(roles: tuple[tuple[str, str], ...] = ()) -> str:
    """``variables.templates``: the pod templates of the admitted object (see the module)."""
    out = "[]"
    for cov in reversed(covered()):
        entries = " + ".join(f"({_entry(cov.kind, t, roles)})" for t in cov.kind.templates)
        out = f"{_is_kind(cov)} ? ({entries}) : ({out})"
    return out


def _is_kind(cov: Covered) -> str:
    """The admitted object is of this kind (the resource matched decides its group)."""
    if not cov.api_group:
        return f"object.apiVersion == 'v1' && object.kind == {string(cov.kind.kind)}"
    return (f"object.apiVersion.startsWith({string(cov.api_group + '/')}) && "
            f"object.kind == {string(cov.kind.kind)}")


def meta_paths(cov: Covered) -> Iterator[tuple[str, ...]]:
    """:func:`pmanifest.kube.workloads.annotation_paths` of an object of this kind (where the
    pod templates' metadata would be)."""
    seen: set[tuple[str, ...]] = {("metadata",)}
    yield ("metadata",)
    for template in cov.kind.templates:
        path = _meta_path(template)
        if path not in seen:
            seen.add(path)
            yield path


def metas(kinds: tuple[Covered, ...]) -> str:
    """The metadata of the object and of its pod templates (``{}`` for those absent), as a
    CEL list, dispatching on the object's kind (matchConditions see no variables)."""
    out = "[]"
    for cov in reversed(kinds):
        items = []
        for path in meta_paths(cov):
            items.append(f"{present('object', path)} ? dyn({at('object', path)}) : dyn({{}})")
        out = f"({_is_kind(cov)}) ? [{', '.join(items)}] : ({out})"
    return out
