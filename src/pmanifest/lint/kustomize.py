"""Kustomize patches among the files of a lint run.

A file that a kustomization names under ``patches``, ``patchesStrategicMerge`` or
``patchesJson6902``, and every other file in a directory below the kustomization where it names
one (a patch directory, see :func:`patch_directories`), is a fragment of an object, merged
into a base by ``kubectl kustomize``: linted as a whole object it reports missing selectors
and templates that the base has, and placement the base may already fix. The lint engine
skips such files (one PM007 info finding per object says so, and where the kustomization is);
what kustomize builds is linted instead.

The kustomizations looked at: those among the inputs (a directory walk finds them), and those
in the directories of the input files and above them, up to the current directory (for files
inside it) or to the repository root (the first directory with a ``.git``), so a file named on
the command line, as pre-commit does, is recognised too. A kustomization that cannot be read or
parsed names no patch (it is linted, and reported, as an input when it is one). Entries of a
patch list that are commented out count too: kubebuilder scaffolds kustomizations with patch
files named in ``#- path: ...`` lines, and those files are patches whether or not the line is
enabled.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pmanifest.io.limits import MAX_KUSTOMIZATIONS_FOLLOWED
from pmanifest.kube.kustomized import Built
from pmanifest.lint.fragments import in_patch_directory
from pmanifest.lint.sources import FileRef, Problem, Source
from pmanifest.loader.documents import Loaded, YamlProblem, decode, load_documents

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")


def is_kustomization(path: str) -> bool:
    """Is ``path`` named as kustomize names a kustomization (read as one, not as manifests)?"""
    return os.path.basename(path) in KUSTOMIZATION_NAMES


def mark_patches(items: list[FileRef | Source | Problem]) -> list[FileRef | Source | Problem]:
    """The inputs, with ``patch_of`` set on every file a kustomization names as a patch and
    ``selector_labels`` on every file a kustomization names as a resource (the labels it adds
    to the selectors of the file's objects, if any)."""
    files = [item for item in items if isinstance(item, FileRef)]
    if not files:
        return items
    kustomizations = _kustomizations(f.path for f in files)
    patches = patch_files(kustomizations)
    labels = selector_labels(kustomizations)
    if not patches and not labels:
        return items
    directories = patch_directories(patches)
    services = webhook_services(kustomizations) if labels else {}
    return [_marked(item, patches, directories, labels, services)
            if isinstance(item, FileRef) else item for item in items]


def _marked(item: FileRef, patches: dict[str, str], directories: dict[str, str],
            labels: dict[str, dict[str, str]], services: dict[str, set[str]]) -> FileRef:
    key = _real(item.path)
    if key in patches:
        item = item._replace(patch_of=patches[key])
    elif key not in labels and os.path.dirname(key) in directories:
        kustomization = directories[os.path.dirname(key)]
        shown = os.path.join(os.path.dirname(kustomization),
                             os.path.relpath(os.path.dirname(key),
                                             os.path.dirname(_real(kustomization))))
        item = item._replace(patch_of=in_patch_directory(kustomization, shown + os.sep))
    if key in labels:
        item = item._replace(built=Built(tuple(sorted(labels[key].items())),
                                         tuple(sorted(services.get(key, ())))))
    return item


def patch_directories(patches: dict[str, str]) -> dict[str, str]:
    """Real path of every patch directory -> the kustomization that names a patch in it. A
    patch directory lies below the kustomization's own directory, holds no kustomization (it
    would be a base of its own) and holds a file the kustomization names as a patch: every
    file in it is a patch (kubebuilder scaffolds ``patches/`` with files the kustomization
    names and files it leaves for later), unless a kustomization lists it as a resource."""
    found: dict[str, str] = {}
    for patch, kustomization in patches.items():
        directory = os.path.dirname(patch)
        own = os.path.dirname(_real(kustomization))
        if directory in found or not directory.startswith(own + os.sep):
            continue
        if not any(os.path.isfile(os.path.join(directory, n)) for n in KUSTOMIZATION_NAMES):
            found[directory] = kustomization
    return found


def patch_files(kustomizations: Iterable[str]) -> dict[str, str]:
    """Real path of every patch file the kustomizations name -> the kustomization (as found)."""
    found: dict[str, str] = {}
    for kustomization in kustomizations:
        base = os.path.dirname(_real(kustomization))
        text = _text(kustomization)
        if text is None:
            continue
        for path in (*_patch_paths(_parse(text)), *_commented_patch_paths(text)):
            found.setdefault(_real(os.path.join(base, path)), kustomization)
    return found


def selector_labels(kustomizations: Iterable[str]) -> dict[str, dict[str, str]]:
    """Real path of every file a kustomization names as a resource -> the labels kustomize
    puts in its selectors (none, often): ``commonLabels``, and ``labels`` entries with
    ``includeSelectors: true``, of the kustomization naming the file and of every one
    including that one's directory (an overlay's labels reach its bases' resources)."""
    found: dict[str, dict[str, str]] = {}
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    stack: list[tuple[str, dict[str, str]]] = [(_real(k), {}) for k in kustomizations]
    while stack and len(seen) < MAX_KUSTOMIZATIONS_FOLLOWED:
        kustomization, inherited = stack.pop()
        key = (kustomization, tuple(sorted(inherited.items())))
        text = _text(kustomization) if key not in seen else None
        seen.add(key)
        data = _parse(text) if text is not None else None
        if not isinstance(data, dict):
            continue
        labels = {**inherited, **_labels_for_selectors(data)}
        files, bases = _entries(kustomization, data)
        stack.extend((inner, labels) for inner in bases)
        for target in files:
            found.setdefault(target, {}).update(labels)
    return found


# a document of one of these kinds, and a Service, as a plain text scan finds them
_WEBHOOK_KIND = re.compile(r"^kind:[ \t]*[\"']?(?:Mutating|Validating)WebhookConfiguration\b",
                           re.MULTILINE)
_SERVICE_KIND = re.compile(r"^kind:[ \t]*[\"']?Service[\"']?[ \t]*(?:#.*)?$", re.MULTILINE)


def webhook_services(kustomizations: Iterable[str]) -> dict[str, set[str]]:
    """Real path of every resource file holding a webhook configuration -> the names of the
    Services kustomize gives a namespace in a build that holds the file too: a build (every
    kustomization is one) whose own ``namespace:``, or that of a kustomization on its way down
    to the Service's file, sets it. kustomize then writes that namespace into a webhook's
    ``clientConfig.service`` naming the Service without one (see :mod:`.kube.kustomized`)."""
    builds: dict[str, dict[str, bool]] = {}  # kustomization -> its files -> namespace set
    kinds: dict[str, tuple[bool, bool]] = {}  # file -> (a webhook configuration? a Service?)
    services: dict[str, frozenset[str]] = {}  # file -> the names of its Services
    found: dict[str, set[str]] = {}
    for kustomization in kustomizations:
        build = _build(_real(kustomization), builds)
        hooks = [f for f in build if _kinds_in(f, kinds)[0]]
        if not hooks:
            continue
        names = {name for f, set_ in build.items() if set_ and _kinds_in(f, kinds)[1]
                 for name in _services_in(f, services)}
        for hook in hooks:
            found.setdefault(hook, set()).update(names)
    return found


def _build(root: str, builds: dict[str, dict[str, bool]]) -> dict[str, bool]:
    """The resource files of the build ``root`` (a kustomization's real path), each with
    whether a ``namespace:`` on its way down sets its objects' namespace; every kustomization
    reached is built once (in ``builds``), bases first, without recursion; a cycle (kustomize
    refuses it) ends where it closes."""
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack and len(builds) < MAX_KUSTOMIZATIONS_FOLLOWED:
        kustomization, expanded = stack.pop()
        if kustomization in builds and not expanded:
            continue
        text = _text(kustomization)
        data = _parse(text) if text is not None else None
        data = data if isinstance(data, dict) else {}
        files, bases = _entries(kustomization, data)
        if not expanded:
            builds[kustomization] = {}  # (being built: a cycle back to it adds nothing)
            stack.append((kustomization, True))
            stack.extend((base, False) for base in bases if base not in builds)
            continue
        sets = isinstance(data.get("namespace"), str) and bool(data["namespace"])
        out = dict.fromkeys(files, sets)
        for base in bases:
            for file, set_ in builds.get(base, {}).items():
                out[file] = out.get(file, False) or set_ or sets
        builds[kustomization] = out
    return builds.get(root, {})


def _entries(kustomization: str, data: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The real paths of a kustomization's resource files and of the kustomizations of its
    resource directories."""
    files, bases = [], []
    directory = os.path.dirname(kustomization)
    for entry in _resource_entries(data):
        target = _real(os.path.join(directory, entry))
        inner = next((os.path.join(target, name) for name in KUSTOMIZATION_NAMES
                      if os.path.isfile(os.path.join(target, name))), None)
        if inner is not None:
            bases.append(inner)
        elif os.path.isfile(target):
            files.append(target)
    return files, bases


def _resource_text(path: str) -> str:
    """A resource file's text ("" when it cannot be read or decoded: it is linted, and
    reported, as an input)."""
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        return decode(read_limited(path, regular_only=True, record=False)[0])
    except (OSError, Unreadable, YamlProblem):
        return ""


def _kinds_in(path: str, known: dict[str, tuple[bool, bool]]) -> tuple[bool, bool]:
    """Does a resource file hold a webhook configuration, a Service (a plain text scan, once)?"""
    if path not in known:
        text = _resource_text(path)
        known[path] = (_WEBHOOK_KIND.search(text) is not None,
                       _SERVICE_KIND.search(text) is not None)
    return known[path]


def _services_in(path: str, known: dict[str, frozenset[str]]) -> frozenset[str]:
    """The names of the Services in a resource file (parsed once; none when it does not)."""
    if path not in known:
        names: set[str] = set()
        with contextlib.suppress(YamlProblem):
            names = {str(d.data["metadata"]["name"]) for d in load_documents(_resource_text(path))
                     if isinstance(d, Loaded) and _is_service(d.data)}
        known[path] = frozenset(names)
    return known[path]


def _is_service(data: Any) -> bool:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return data.get("kind") == "Service" and data.get("apiVersion") == "v1" \
        and isinstance(metadata, dict) and isinstance(metadata.get("name"), str)


def _labels_for_selectors(data: dict[str, Any]) -> dict[str, str]:
    """The labels a kustomization adds to selectors (and so to pod templates)."""
    out: dict[str, str] = {}
    common = data.get("commonLabels")
    if isinstance(common, dict):
        out.update((str(k), _text_of(v)) for k, v in common.items())
    entries = data.get("labels")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("includeSelectors") is True \
                and isinstance(entry.get("pairs"), dict):
            out.update((str(k), _text_of(v)) for k, v in entry["pairs"].items())
    return out


def _text_of(value: Any) -> str:
    """A label value as kustomize writes it (it reads YAML 1.2: ``true``, not ``yes``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _resource_entries(data: dict[str, Any]) -> Iterator[str]:
    """Local paths among a kustomization's ``resources`` (and the older ``bases``)."""
    for key in ("resources", "bases"):
        entries = data.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and entry and "://" not in entry and "\n" not in entry:
                yield entry


def _kustomizations(paths: Iterable[str]) -> list[str]:
    """Kustomization files among ``paths`` and in their directories and above (see the module
    docstring), each once, in a fixed order."""
    cwd = _real(os.curdir)
    seen_dirs: set[str] = set()
    real_dirs: dict[str, str] = {}  # a directory's real path, resolved once for all its files
    out: dict[str, None] = {}
    for path in paths:
        if os.path.basename(path) in KUSTOMIZATION_NAMES:
            out.setdefault(path, None)
        start = _real_directory(path, real_dirs)
        if start in seen_dirs:
            continue  # a file beside one looked at already (no upward search, no stat)
        for directory in search_dirs(start, cwd):
            if directory in seen_dirs:
                break  # this directory and everything above it were looked at already
            seen_dirs.add(directory)
            for name in KUSTOMIZATION_NAMES:
                candidate = os.path.join(directory, name)
                if os.path.isfile(candidate):
                    out.setdefault(_shown(candidate, cwd), None)
    return list(out)


def _real_directory(path: str, known: dict[str, str]) -> str:
    """The real directory of the file ``path``: the one a symbolic link leads to, else its
    directory's real path (from ``known`` when a file beside it asked already)."""
    if os.path.islink(path):
        return os.path.dirname(_real(path))
    directory = os.path.dirname(path) or os.curdir
    if directory not in known:
        known[directory] = _real(directory)
    return known[directory]


def _shown(path: str, cwd: str) -> str:
    """A path found by looking upwards, as findings name files: relative to the current
    directory when it is inside it."""
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith(os.pardir) else relative


def search_dirs(directory: str, cwd: str) -> list[str]:
    """``directory`` and its parents up to the current directory or a repository root; only
    ``directory`` itself when neither is above it."""
    found = []
    current = directory
    while True:
        found.append(current)
        if current == cwd or os.path.exists(os.path.join(current, ".git")):
            return found
        parent = os.path.dirname(current)
        if parent == current:
            return found[:1]
        current = parent


def _text(path: str) -> str | None:
    """A kustomization's text, or None when it cannot be read, is not a regular file (a FIFO
    would be drained, a device read on) or is not a kustomization's size."""
    from pmanifest.io.limits import MAX_KUSTOMIZATION_BYTES
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        raw, _ = read_limited(path, MAX_KUSTOMIZATION_BYTES, regular_only=True)
        return decode(raw)
    except (OSError, Unreadable, YamlProblem):
        return None


def _parse(text: str) -> Any:
    """The first document of a kustomization, or None when it does not parse."""
    try:
        for item in load_documents(text):
            return item.data if isinstance(item, Loaded) else None
    except YamlProblem:
        return None
    return None


# a section starts at a key in the first column, commented out too (kubebuilder's `#patches:`)
# (strings, compiled by re on first use: only a kustomization needs them)
_SECTION = r"^#*([A-Za-z]\w*)\s*:"
_COMMENTED_ENTRY = r"^#+\s*-\s*(?:path\s*:\s*)?([\w./-]+\.ya?ml)\s*$"


def _commented_patch_paths(text: str) -> Iterator[str]:
    """Patch files named in commented-out entries of a patch list: kubebuilder scaffolds
    kustomizations that way (``#- path: patches/cainjection_in_jobs.yaml``), and the files stay
    patches whether or not the line is enabled. Only entries inside a patch section count."""
    section = None
    for line in text.splitlines():
        head = re.match(_SECTION, line)
        if head is not None:
            section = head.group(1)
            continue
        entry = re.match(_COMMENTED_ENTRY, line.strip())
        if section in PATCH_KEYS and entry is not None:
            yield entry.group(1)


def _patch_paths(data: Any) -> Iterator[str]:
    """The relative paths of the patch files a kustomization names (inline patches have
    none)."""
    if not isinstance(data, dict):
        return
    for key in PATCH_KEYS:
        entries = data.get(key)
        for entry in entries if isinstance(entries, list) else []:
            path = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(path, str) and path and "\n" not in path:
                yield path


def _real(path: str) -> str:
    return os.path.realpath(path)
