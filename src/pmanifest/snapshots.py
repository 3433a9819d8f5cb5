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


def main() -> None:
    from pmanifest.atomic import write_files

    folder = os.path.join(shipped("pmanifest.policies"), SNAPSHOTS)
    os.makedirs(folder, exist_ok=True)
    wanted = expected()
    write_files({os.path.join(folder, name): text for name, text in wanted.items()},
                "snapshot")
    for name in sorted(set(os.listdir(folder)) - set(wanted)):
        if name.endswith(".json"):  # the snapshot of a file that is gone
            os.remove(os.path.join(folder, name))
    print(f"{len(wanted)} snapshots in {folder}")


if __name__ == "__main__":
    main()
