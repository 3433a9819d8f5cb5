"""The JSON snapshots of the YAML data files shipped in ``policies/``: committed as the YAML
files are now, used only when made from exactly the bytes of their file, and giving the same
catalogue and profiles as the YAML does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pmanifest import catalogue
from pmanifest.catalogue import FILE_SCHEMA, RegistryError
from pmanifest.errors import ConfigError
from pmanifest.generate import expected
from pmanifest.io.reading import shipped
from pmanifest.kube import profile
from pmanifest.schema.datafile import SNAPSHOTS, load_data, load_shipped, snapshot_of
from tests.rules.running import catalogue_entries

FOLDER = Path(shipped("pmanifest.policies"))
SCHEMA = {"type": "object", "required": ["name"], "additionalProperties": False,
          "properties": {"name": {"type": "string"}}}


def test_every_snapshot_is_current() -> None:
    """Fails after a YAML file of policies/ is edited: run `python -m pmanifest.generate`."""
    wanted = expected()
    committed = {path.name: path.read_text(encoding="utf-8")
                 for path in (FOLDER / SNAPSHOTS).glob("*.json")}
    assert sorted(committed) == sorted(wanted)
    stale = [name for name, text in wanted.items() if committed[name] != text]
    assert not stale, f"stale snapshots {stale}: run `python -m pmanifest.generate`"
    assert "profiles.yaml.json" in wanted and len(wanted) == len(catalogue.catalogue_files()) + 1


def test_the_catalogue_and_profiles_equal_what_their_yaml_says() -> None:
    from_yaml = {}
    for name in catalogue.catalogue_files():
        text = (FOLDER / name).read_text(encoding="utf-8")
        from_yaml.update({m.id: m for m in catalogue_entries(text, f"policies/{name}")})
    assert catalogue.builtin() == from_yaml
    assert len(from_yaml) > 30
    text = (FOLDER / profile.PROFILES_FILE).read_text(encoding="utf-8")
    assert profile._all_profiles() == profile.parse_profiles(text, "policies/profiles.yaml")


def _folder(tmp_path: Path, yaml_text: str, snapshot: str | None) -> str:
    (tmp_path / "x.yaml").write_text(yaml_text, encoding="utf-8")
    (tmp_path / SNAPSHOTS).mkdir()
    if snapshot is not None:
        (tmp_path / SNAPSHOTS / "x.yaml.json").write_text(snapshot, encoding="utf-8")
    return str(tmp_path)


def test_a_snapshot_of_these_bytes_is_read_instead_of_the_yaml(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "name: from-yaml\n", None)
    made = json.loads(snapshot_of("x.yaml", SCHEMA, "the file", folder=folder))
    assert made["data"] == {"name": "from-yaml"}
    made["data"] = {"name": "from-the-snapshot"}  # tells which one was read
    (tmp_path / SNAPSHOTS / "x.yaml.json").write_text(json.dumps(made), encoding="utf-8")
    assert load_shipped("x.yaml", SCHEMA, "the file", folder=folder) == {
        "name": "from-the-snapshot"}


@pytest.mark.parametrize("snapshot", [
    None,  # none written yet
    "{not json",
    '["a list"]',
    '{"source": "16:00000000", "data": {"name": "stale"}}',  # another file's fingerprint
    '{"source": "16:1a3af85f"}',  # this file's fingerprint, but no data
])
def test_without_a_snapshot_of_these_bytes_the_yaml_is_read(tmp_path: Path,
                                                             snapshot: str | None) -> None:
    folder = _folder(tmp_path, "name: from-yaml\n", snapshot)
    assert load_shipped("x.yaml", SCHEMA, "the file", folder=folder) == {"name": "from-yaml"}


def test_an_edit_after_the_snapshot_is_validated_at_its_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "name: ok\n", None)
    (tmp_path / SNAPSHOTS / "x.yaml.json").write_text(
        snapshot_of("x.yaml", SCHEMA, "the file", folder=folder), encoding="utf-8")
    (tmp_path / "x.yaml").write_text("name: ok\nnmae: typo\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_shipped("x.yaml", SCHEMA, "the file", folder=folder)
    assert (caught.value.file, caught.value.line) == ("policies/x.yaml", 2)
    assert "nmae" in str(caught.value)


def test_a_snapshot_is_made_only_of_valid_data(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "- id: PM999\n", None)
    with pytest.raises(RegistryError, match=r"policies/x\.yaml:1:"):
        snapshot_of("x.yaml", FILE_SCHEMA, catalogue.CATALOGUE_WORDS, RegistryError,
                    folder=folder)


def test_data_json_cannot_hold_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "name: x\n", None)
    schema = {"type": "object"}
    (tmp_path / "x.yaml").write_text("1: an integer key\n", encoding="utf-8")
    data, _ = load_data("1: an integer key\n", "x.yaml", schema, "the file")
    assert data == {1: "an integer key"}  # JSON would make the key a string
    with pytest.raises(ConfigError, match="JSON round trip"):
        snapshot_of("x.yaml", schema, "the file", folder=folder)


def test_snapshots_ship_in_the_package() -> None:
    assert os.path.isfile(FOLDER / SNAPSHOTS / "profiles.yaml.json")
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():  # from the source tree: the wheel's package data names them
        assert '"snapshots/*.json"' in pyproject.read_text(encoding="utf-8")
