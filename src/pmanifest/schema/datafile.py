"""pmanifest's own data files (the config, provider profiles, the rule catalogue): parsed by
the loader, validated by a JSON Schema, every problem one line at its file position.

The YAML files shipped in ``policies/`` are read on every run, so each has a JSON snapshot of
its validated data in ``policies/snapshots/`` (written by ``python -m pmanifest.generate``):
``json.loads`` costs a fraction of parsing and validating the YAML. A snapshot is used only
when it was made from exactly the bytes of its YAML file; after an edit, the YAML is read as
before until the snapshot is written again (and the suite fails until then).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pmanifest.errors import ConfigError, PmanifestError
from pmanifest.io.reading import fingerprint, shipped
from pmanifest.loader.documents import YamlProblem, load_single
from pmanifest.loader.positions import Positions

if TYPE_CHECKING:  # the translator of schema errors is imported only when there is one
    from pmanifest.schema.words import Words


def load_data(text: str, source: str, schema: dict[str, Any], words: Words | str,
              error: type[Exception] = ConfigError) -> tuple[Any, Positions]:
    """The data of ``text`` and its positions, or ``error`` at the first problem (``words``:
    the document's vocabulary, or only what its root is called)."""
    try:
        loaded = load_single(text)
    except YamlProblem as problem:
        raise _error(error, problem.message, source, problem.line, problem.column) from None
    first = first_violation(loaded.data, loaded.positions, schema, words)
    if first is not None:
        message, line, column = first
        raise _error(error, message, source, line, column)
    return loaded.data, loaded.positions


def first_violation(data: Any, positions: Positions, schema: dict[str, Any],
                    words: Words | str) -> tuple[str, int, int] | None:
    """(message, line, column) of the first problem of ``data`` against ``schema``, or None.
    Unknown keys come first: their did-you-mean usually explains a missing key too."""
    fast = compiled_check(schema)
    if fast is not None and fast(data):
        return None
    from jsonschema import Draft202012Validator

    from pmanifest.schema.words import Words, describe

    if isinstance(words, str):
        words = Words(root=words)
    found: list[tuple[int, int, int, str]] = []
    for err in Draft202012Validator(schema).iter_errors(data):
        rank = {"additionalProperties": 0, "required": 2}.get(err.validator, 1)
        for violation in describe(err, words):
            pos = (positions.at(violation.path) if violation.at_key
                   else positions.value_at(violation.path))
            found.append((rank, pos.line, pos.column, violation.message))
    if not found:
        return None
    _, line, column, message = min(found)
    return message, line, column


_COMPILED: dict[int, tuple[dict[str, Any], Any]] = {}


def compiled_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled yes/no check of one of pmanifest's schemas (module constants), built once;
    None where the schema uses a keyword the compiler does not know."""
    found = _COMPILED.get(id(schema))
    if found is None or found[0] is not schema:
        from pmanifest.schema.fast import compile_schema

        found = (schema, compile_schema(schema, {}))
        _COMPILED[id(schema)] = found
    check: Callable[[Any], bool] | None = found[1]
    return check


def _error(error: type[Exception], message: str, source: str, line: int,
           column: int) -> Exception:
    if issubclass(error, PmanifestError):
        return error(message, source, line, column)
    return error(f"{source}:{line}:{column}: {message}")


SNAPSHOTS = "snapshots"  # policies/snapshots/NAME.json: the validated data of policies/NAME
_STALE = object()


def load_shipped(name: str, schema: dict[str, Any], words: Words | str,
                 error: type[Exception] = ConfigError, folder: str | None = None,
                 build: Callable[[Any], Any] = lambda data: data) -> Any:
    """``build`` of the validated data of ``policies/NAME`` (``folder``: another directory
    laid out the same way), from its snapshot when that was made from exactly these bytes.
    A snapshot that cannot be read, or whose data ``build`` fails on (a corrupt file: it is
    pmanifest's own), is set aside like a stale one: the YAML is read instead."""
    raw = _shipped(folder, name)
    data = _from_snapshot(_path(folder, SNAPSHOTS, f"{name}.json"), raw)
    if data is not _STALE:
        try:
            return build(data)
        except Exception:  # corrupt: any failure means "read the YAML"
            pass
    data, _ = load_data(raw.decode("utf-8"), f"policies/{name}", schema, words, error)
    return build(data)


def _path(folder: str | None, *parts: str) -> str:
    return os.path.join(folder or shipped("pmanifest.policies"), *parts)


def _shipped(folder: str | None, name: str) -> bytes:
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        return read_limited(_path(folder, name), regular_only=True, record=False)[0]
    except Unreadable as exc:
        raise OSError(f"policies/{name}: {exc.reason}; reinstall pmanifest") from None


def snapshot_of(name: str, schema: dict[str, Any], words: Words | str,
                error: type[Exception] = ConfigError, folder: str | None = None) -> str:
    """The snapshot of ``policies/NAME`` as it is committed: its data, validated, and the
    fingerprint of the bytes it came from."""
    raw = _shipped(folder, name)
    data, _ = load_data(raw.decode("utf-8"), f"policies/{name}", schema, words, error)
    text = json.dumps({"source": fingerprint(raw), "data": data}, indent=1,
                      ensure_ascii=False) + "\n"
    if json.loads(text)["data"] != data:  # only strings, numbers, lists and maps survive JSON
        raise error(f"policies/{name}: its data does not survive a JSON round trip")
    return text


def _from_snapshot(path: str, raw: bytes) -> Any:
    from pmanifest.io.reading import Unreadable, read_limited

    try:
        snapshot = json.loads(read_limited(path, regular_only=True, record=False)[0])
    except (OSError, Unreadable, ValueError, RecursionError):  # missing, corrupt
        return _STALE
    if not isinstance(snapshot, dict) or snapshot.get("source") != fingerprint(raw) or \
            "data" not in snapshot:
        return _STALE
    return snapshot["data"]
