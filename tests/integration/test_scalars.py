"""Plain scalars read as the real kubectl reads them (``pmanifest.loader.scalars``).

Every scalar of the table is written unquoted in three value positions (a ConfigMap's data, a
container's env value, an item of its args; kubectl refuses a label or annotation that is no
string, so metadata cannot show what it read) and read three ways: by pmanifest's loader, by
kubectl's own decoder (``kubectl label --local -o json``: what ``kubectl apply -f`` sends) and by
``kubectl kustomize`` (its output read by that same decoder: what ``kubectl apply -k`` sends).
Each of the two kubectl readings differs from pmanifest's only where the tables say so, and
pmanifest reads a kustomization's resource as kustomize does; a kubectl that reads one
differently fails here, naming the scalar.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pmanifest.loader.documents import Loaded, load_documents
from tests.integration.tools import clean_env, run, tool

# scalar as written -> what pmanifest reads (and kubectl sends, but for KUBECTL's)
TABLE: dict[str, Any] = {
    "=": "=",  # YAML 1.1's "value" tag for PyYAML
    "<<": "<<",  # the merge key only as a key
    "yes": True, "no": False, "on": True, "off": False, "y": "y", "n": "n",
    "Yes": True, "NO": False, "On": True, "OFF": False, "Y": "Y", "N": "N",
    "yEs": "yEs",
    "true": True, "True": True, "FALSE": False,
    "~": None, "null": None, "Null": None, "NULL": None,
    "0o17": 15, "017": 15, "-017": -15, "0b101": 5, "0x1F": 31, "0x_1F": 31, "+0x1F": 31,
    "1_000": 1000, "1__0": 10, "+12": 12, "-0": 0, "12": 12, "08": 8, "09.5": 9.5,
    "1e3": 1000, "1E-2": 0.01, "1.5": 1.5, "1.": 1, ".5": 0.5, "+.5": 0.5, "1.0": 1,
    "9223372036854775807": 9223372036854775807,
    "-9223372036854775808": -9223372036854775808,
        "1:20": "1:20", "1:20:30.5": "1:20:30.5",  # no sexagesimal
    "2001-12-14": "2001-12-14", "2001-12-14 21:59:43": "2001-12-14 21:59:43",
    "0x": "0x", "0b2": "0b2", "1e": "1e", "+": "+", ".": ".", "._5": "._5",
    "Infinity": "Infinity", "inf": "inf", "NaN": "NaN",
}
# where kubectl's own decoder (`kubectl apply -f`) reads otherwise: y and n are booleans to it
# alone (PyYAML writes the string n unquoted; kustomize reads it as a string too)
KUBECTL: dict[str, Any] = {"y": True, "n": False, "Y": True, "N": False}
# where `kubectl kustomize` (kyaml, YAML 1.2 booleans) sends something else
KUSTOMIZE: dict[str, Any] = {
    **{word: word for word in ("yes", "no", "on", "off", "Yes", "NO", "On", "OFF")},
    "2001-12-14": "2001-12-14T00:00:00Z",
    "2001-12-14 21:59:43": str,  # a string, rewritten in some positions and not in others
}
REFUSED = (".inf", "-.inf", "+.INF", ".nan", ".NaN")  # no JSON holds them: kubectl refuses


def _manifest(values: list[str]) -> str:
    data = "".join(f"  k{i}: {v}\n" for i, v in enumerate(values))
    args = "".join(f"    - {v}\n" for v in values)
    env = "".join(f"    - {{name: E{i}, value: {v}}}\n" for i, v in enumerate(values))
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{data}---\n"
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
            f"  - name: x\n    image: x\n    args:\n{args}    env:\n{env}")


def _typed(value: Any) -> tuple[str, Any]:
    """The value as JSON carries it (a float with no fraction is written as an integer), with
    its type: True is not 1."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and abs(value) < 1e21:
        value = int(value)
    return (type(value).__name__, value)


def _read(documents: list[dict[str, Any]], count: int) -> list[list[Any]]:
    """Each scalar's three readings: the data value, the env value, the list item."""
    config, pod = documents
    container = pod["spec"]["containers"][0]
    return [[config["data"][f"k{i}"], container["env"][i].get("value"), container["args"][i]]
            for i in range(count)]


def _kubectl_json(path: Path, tmp_path: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    result = run([tool("kubectl"), "label", "--local", "-f", str(path), "probe=x", "-o", "json"],
                 tmp_path, env)
    assert result.returncode == 0, result.stderr
    decoder, text, found, at = json.JSONDecoder(), result.stdout, [], 0
    while text[at:].strip():  # one JSON object per document
        value, end = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        found.append(value)
        at = end
    return found


@pytest.fixture(scope="module")
def readings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Any]]]:
    tmp_path = tmp_path_factory.mktemp("scalars")
    env = clean_env(tmp_path)
    values = list(TABLE)
    text = _manifest(values)
    (tmp_path / "objects.yaml").write_text(text)
    (tmp_path / "kustomization.yaml").write_text("resources: [objects.yaml]\n")
    ours = [item.data for item in load_documents(text) if isinstance(item, Loaded)]
    as_resource = [item.data for item in load_documents(text, kustomize=True)
                   if isinstance(item, Loaded)]
    built = run([tool("kubectl"), "kustomize", str(tmp_path)], tmp_path, env)
    assert built.returncode == 0, built.stderr
    (tmp_path / "built.yaml").write_text(built.stdout)
    kustomized = {d["kind"]: d for d in _kubectl_json(tmp_path / "built.yaml", tmp_path, env)}
    return {
        "pmanifest": _read(ours, len(values)),
        "kubectl": _read(_kubectl_json(tmp_path / "objects.yaml", tmp_path, env), len(values)),
        "kustomize": _read([kustomized["ConfigMap"], kustomized["Pod"]], len(values)),
        "pmanifest-kustomize": _read(as_resource, len(values)),
    }


@pytest.mark.parametrize(("index", "scalar"), list(enumerate(TABLE)), ids=list(TABLE))
def test_plain_scalar_reads_as_kubectl_reads_it(
        readings: dict[str, list[list[Any]]], index: int, scalar: str) -> None:
    expected = _typed(TABLE[scalar])
    for position in range(3):
        assert _typed(readings["kubectl"][index][position]) == \
            _typed(KUBECTL.get(scalar, TABLE[scalar])), "kubectl changed"
        assert _typed(readings["pmanifest"][index][position]) == expected
        built = readings["kustomize"][index][position]
        expected_built = KUSTOMIZE.get(scalar, TABLE[scalar])
        ours = readings["pmanifest-kustomize"][index][position]  # a kustomization's resource
        if isinstance(expected_built, type) or scalar.startswith("2001-"):  # (dates rewritten)
            assert type(built) is type(ours) is str, "kubectl kustomize changed"
        else:
            assert _typed(built) == _typed(expected_built), "kubectl kustomize changed"
            assert _typed(ours) == _typed(expected_built)


@pytest.mark.parametrize("scalar", REFUSED)
def test_infinities_and_nan_are_refused_by_kubectl(tmp_path: Path, scalar: str) -> None:
    text = _manifest([scalar])
    (tmp_path / "objects.yaml").write_text(text)
    result = run([tool("kubectl"), "label", "--local", "-f", "objects.yaml", "probe=x", "-o",
                  "json"], tmp_path, clean_env(tmp_path))
    assert result.returncode != 0 and "unsupported value" in result.stderr
    (config, _) = [item.data for item in load_documents(text) if isinstance(item, Loaded)]
    value = config["data"]["k0"]
    assert isinstance(value, float) and not math.isfinite(value)


def test_merge_key_still_merges_as_a_key() -> None:
    (doc,) = load_documents("base: &b {x: 1}\nm:\n  <<: *b\n  y: <<\n")
    assert isinstance(doc, Loaded)
    assert doc.data["m"] == {"x": 1, "y": "<<"}
