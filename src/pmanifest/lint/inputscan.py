"""What the whole input tells before any file is linted: which provider's preemptible labels
it uses (the profile a run infers when none is given), the GKE ComputeClasses it defines
(a class whose every priority is on-demand is never preemptible capacity) and the serving
runtimes it defines (KServe's and OME's: which of their components' pods ask for an
accelerator, for the services that name them and hold no container of their own).

A pass over the bytes: a label counts in a document where it is written outside a comment;
only a file that names a ComputeClass or a ServingRuntime is parsed here (through the loader).
``lint_bytes`` reads its one file this way, ``lint`` every input (regular files and what
stdin held; a FIFO is read once, by the lint itself, and tells nothing here).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from pmanifest.kube.kinds import Runtimes
from pmanifest.lint.sources import FileRef, Problem, Source

COMPUTE_CLASS = b"ComputeClass"
SERVING_RUNTIME = b"ServingRuntime"
# a document of such a kind (not a CRD naming it, indented under ``names:``)
_RUNTIME_KIND = re.compile(rb"^kind:[ \t]*[\"']?(?:Cluster)?ServingRuntime\b", re.MULTILINE)


class InputFacts(NamedTuple):
    """What the input tells of its platform."""

    labels: Mapping[str, int]  # provider label key -> documents that use it
    standard_classes: tuple[str, ...] = ()  # ComputeClasses whose priorities are on-demand
    runtimes: Runtimes = MappingProxyType({})  # the serving runtimes it defines


def scan(raws: Iterable[bytes], keys: Iterable[str]) -> InputFacts:
    """The provider label keys ``keys`` used in ``raws`` and the on-demand ComputeClasses."""
    wanted = [k.encode("utf-8") for k in dict.fromkeys(keys)]
    labels: Counter[str] = Counter()
    classes: dict[str, bool] = {}
    runtimes: dict[tuple[str, str], Mapping[str, bool]] = {}
    for raw in raws:
        found = [k for k in wanted if k in raw]
        if found:
            starts = [0, *(m + 1 for m in _all(raw, b"\n---"))]
            for key in found:
                used = len(_documents(raw, key, starts))
                if used:
                    labels[key.decode("utf-8")] += used
        _objects(raw, classes, runtimes)
    return InputFacts(dict(labels), tuple(sorted(n for n, on_demand in classes.items()
                                                 if on_demand)), runtimes)  # (pickled)


def _objects(raw: bytes, classes: dict[str, bool],
             runtimes: dict[tuple[str, str], Mapping[str, bool]]) -> None:
    """Add the ComputeClasses (on demand only if every definition of a name is) and the
    serving runtimes of one file."""
    if COMPUTE_CLASS in raw:
        for name, on_demand in compute_classes(raw).items():
            classes[name] = classes.get(name, True) and on_demand
    if SERVING_RUNTIME in raw and _RUNTIME_KIND.search(raw) is not None:
        runtimes.update(serving_runtimes(raw))


def _all(raw: bytes, text: bytes) -> Iterator[int]:
    at = raw.find(text)
    while at >= 0:
        yield at
        at = raw.find(text, at + 1)


def _documents(raw: bytes, key: bytes, starts: list[int]) -> set[int]:
    """The documents (by their place in ``starts``) where ``key`` is written as a label key
    or value outside a comment (not inside a longer name or a URL: ``https://cloud.google.com/``
    names no label)."""
    import bisect

    return {bisect.bisect_right(starts, at) for at in _all(raw, key)
            if raw[at - 1:at] not in _NAME_BYTES
            and b"#" not in raw[raw.rfind(b"\n", 0, at) + 1:at]}


# bytes that continue a name: a key found right after one is part of something longer
_NAME_BYTES = frozenset(bytes([c]) for c in
                        b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./-_")


def serving_runtimes(raw: bytes) -> dict[tuple[str, str], Mapping[str, bool]]:
    """The serving runtimes of a file (a kind some service kind of the table names as its
    runtime, in the service's group): (group, name) -> its template parts -> does the part's
    pod ask for an accelerator."""
    from pmanifest.kube.kinds import KINDS
    from pmanifest.kube.podtemplates import find, group_of
    from pmanifest.kube.resources import pod_requests_accelerator
    from pmanifest.loader.documents import Loaded, YamlProblem, decode, load_documents

    kinds = {(k.group, name) for k in KINDS for name in k.runtime_kinds}
    try:
        text = decode(raw)
    except YamlProblem:
        return {}
    out: dict[tuple[str, str], Mapping[str, bool]] = {}
    for item in load_documents(text):
        data = item.data if isinstance(item, Loaded) else None
        if not isinstance(data, dict):
            continue
        group, meta = group_of(data.get("apiVersion")), data.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if (group, data.get("kind")) in kinds and isinstance(name, str):
            out[(group, name)] = {
                found.template.part: pod_requests_accelerator(found.pod,
                                                              found.template.containers)
                for found in find(data)}
    return out


def compute_classes(raw: bytes) -> dict[str, bool]:
    """The GKE ComputeClasses (cloud.google.com/v1) of a file: name -> every priority is
    on-demand (``spot`` false or absent). A priority with ``spot: true``, or one that names
    existing node pools (which may be Spot pools), makes a class one that can be preempted;
    a class with no priorities tells nothing (GKE then picks the machines). A name defined
    more than once (alternatives, of which one is applied) is on-demand only if every
    definition is, whatever their order; :func:`scan` joins the files' the same way."""
    from pmanifest.loader.documents import Broken, YamlProblem, decode, load_documents

    try:
        text = decode(raw)
    except YamlProblem:
        return {}
    out: dict[str, bool] = {}
    for item in load_documents(text):
        data = None if isinstance(item, Broken) else item.data
        if not isinstance(data, dict) or data.get("kind") != "ComputeClass" \
                or not str(data.get("apiVersion", "")).startswith("cloud.google.com/"):
            continue
        meta, spec = data.get("metadata"), data.get("spec")
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(name, str) and isinstance(spec, dict):
            out[name] = out.get(name, True) and _on_demand(spec.get("priorities"))
    return out


def _on_demand(priorities: Any) -> bool:
    return isinstance(priorities, list) and bool(priorities) and all(
        isinstance(p, dict) and p.get("spot", False) is False and "nodepools" not in p
        for p in priorities)



def scan_inputs(items: Iterable[FileRef | Source | Problem], keys: Iterable[str]) -> InputFacts:
    """:func:`scan` of every input: a regular file read (through the one reader, not
    recorded: lint reads it again), what stdin held; FIFOs and problems tell nothing."""
    return scan((raw for raw in map(_raw, items) if raw is not None), keys)


def _raw(item: FileRef | Source | Problem) -> bytes | None:
    if isinstance(item, Source):
        return item.raw
    if not isinstance(item, FileRef):
        return None
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        return read_limited(item.path, regular_only=True, record=False)[0]
    except (OSError, Unreadable):
        return None

