"""``python -m pmanifest.snapshots``: write the JSON snapshots of the YAML files shipped in
``policies/`` (the profiles and the rule catalogue; see :mod:`pmanifest.datafile`) after
editing one of them. Run it from an editable install (``pip install -e .``): it writes next to
the files it reads. ``tests/test_snapshots.py`` fails while a snapshot is stale."""

from __future__ import annotations

import os

from pmanifest.catalogue import CATALOGUE_WORDS, FILE_SCHEMA, RegistryError, catalogue_files
from pmanifest.datafile import SNAPSHOTS, snapshot_of
from pmanifest.profile import PROFILE_SCHEMA, PROFILES_FILE, PROFILES_WORDS
from pmanifest.reading import shipped


def expected(folder: str | None = None) -> dict[str, str]:
    """Every snapshot's file name -> the text it must have, from the YAML files as they are."""
    out = {f"{PROFILES_FILE}.json": snapshot_of(PROFILES_FILE, PROFILE_SCHEMA, PROFILES_WORDS,
                                                folder=folder)}
    for name in catalogue_files():
        out[f"{name}.json"] = snapshot_of(name, FILE_SCHEMA, CATALOGUE_WORDS, RegistryError,
                                          folder=folder)
    return out


def main(target: str | None = None) -> None:
    """Bring ``target`` (``policies/snapshots``) up to date, saying what changed."""
    from pmanifest.atomic import sync_generated

    folder = target or os.path.join(shipped("pmanifest.policies"), SNAPSHOTS)
    for line in sync_generated(folder, expected(), ".json"):
        print(line)


if __name__ == "__main__":
    main()
