"""``python -m pmanifest.generate``: write every generated file of the repository after editing
what it is made from, and say what changed; ``--check`` writes nothing and exits 1 naming what
is stale (``tests/test_generated.py`` runs it).

- ``policies/snapshots/*.json``: the JSON snapshots of the YAML files shipped in ``policies/``
  (the profiles and the rule catalogue; see :mod:`pmanifest.schema.datafile`);
- ``templates/compiled/*.py``: the built-in templates as Jinja compiles them
  (:mod:`pmanifest.render.precompile`);
- ``examples/.pmanifest-spec.schema.json``: the spec's JSON Schema, what ``pmanifest schema``
  prints, for editors (only in a source checkout, where ``examples/`` sits beside ``src/``).

Run it from an editable install (``pip install -e .``): it writes next to the files it reads.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from pmanifest.catalogue import CATALOGUE_WORDS, FILE_SCHEMA, RegistryError, catalogue_files
from pmanifest.io.reading import shipped, source_checkout
from pmanifest.kube.profile import PROFILE_SCHEMA, PROFILES_FILE, PROFILES_WORDS
from pmanifest.schema.datafile import SNAPSHOTS, snapshot_of


class Generated(NamedTuple):
    """One folder of generated files: where, what each file must hold, and the suffix of the
    files this generator owns there (others ending so are removed)."""

    folder: str
    files: Callable[[], dict[str, str]]
    suffix: str


def expected(folder: str | None = None) -> dict[str, str]:
    """Every snapshot's file name -> the text it must have, from the YAML files as they are."""
    out = {f"{PROFILES_FILE}.json": snapshot_of(PROFILES_FILE, PROFILE_SCHEMA, PROFILES_WORDS,
                                                folder=folder)}
    for name in catalogue_files():
        out[f"{name}.json"] = snapshot_of(name, FILE_SCHEMA, CATALOGUE_WORDS, RegistryError,
                                          folder=folder)
    return out


SPEC_SCHEMA_FILE = ".pmanifest-spec.schema.json"


def _spec_schema() -> dict[str, str]:
    from pmanifest.render.spec import schema_json

    return {SPEC_SCHEMA_FILE: schema_json()}


def _compiled_templates() -> dict[str, str]:
    from pmanifest.render.precompile import generated

    return generated()


def generators() -> list[Generated]:
    """Every generator, in the order they run."""
    found = [
        Generated(os.path.join(shipped("pmanifest.policies"), SNAPSHOTS), expected, ".json"),
        Generated(shipped("pmanifest.templates", "compiled"), _compiled_templates, ".py"),
    ]
    root = source_checkout()
    if root is not None and os.path.isdir(os.path.join(root, "examples")):
        found.append(Generated(os.path.join(root, "examples"), _spec_schema,
                               "-spec.schema.json"))
    return found


def stale(found: Sequence[Generated] | None = None) -> list[str]:
    """The generated files that differ from what their generator makes now (missing ones
    included, and files of a generator's suffix it no longer makes)."""
    out = []
    for generator in generators() if found is None else found:
        files = generator.files()
        for name, text in files.items():
            path = os.path.join(generator.folder, name)
            try:
                with open(path, encoding="utf-8") as handle:
                    same = handle.read() == text
            except OSError:
                same = False
            if not same:
                out.append(path)
        extra = sorted(set(os.listdir(generator.folder)) - set(files)) \
            if os.path.isdir(generator.folder) else []
        out.extend(os.path.join(generator.folder, name) for name in extra
                   if name.endswith(generator.suffix))
    return out


def main(argv: Sequence[str] | None = None, found: Sequence[Generated] | None = None) -> int:
    """Bring every generated file up to date (``--check``: only say which are stale)."""
    from pmanifest.io.writing import sync_generated

    args = list(sys.argv[1:] if argv is None else argv)
    found = generators() if found is None else found
    if args == ["--check"]:
        paths = stale(found)
        for path in paths:
            print(f"stale: {path} (run python -m pmanifest.generate)")
        return 1 if paths else 0
    if args:
        print("usage: python -m pmanifest.generate [--check]", file=sys.stderr)
        return 2
    for generator in found:
        for line in sync_generated(generator.folder, generator.files(), generator.suffix):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
