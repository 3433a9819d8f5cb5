"""Documents that do not parse: a PM001 finding, unless the file is not a manifest at all.

A Kubernetes object always has an ``apiVersion`` and a ``kind`` key. A file whose text the YAML
scanner or parser refuses (a syntax error: JSON with comments, a deliberately broken fixture of
another program) and in which neither key appears anywhere, in any document, as a plain text
scan reads it, cannot be an object that failed to parse: it is another tool's file, skipped
and counted with the YAML documents that are no Kubernetes object. A file that names either
key stays PM001 wherever it breaks, and so does every refusal that is not a syntax error: the
bounds the loader keeps (alias bombs, nesting depth, size), a duplicate key, a value no type
holds, a character YAML does not allow, text that does not decode. Those are refused whatever
the file holds, so that a hostile file cannot pass unseen by leaving the keys out.
"""

from __future__ import annotations

import re

from pmanifest.loader.documents import YamlProblem

# a key, in block or flow YAML or in JSON: the name, perhaps quoted, then a colon
_OBJECT_KEY = re.compile(r"""(?<![\w-])["']?(?:apiVersion|kind)["']?[ \t]*:""")


def names_object_keys(text: str) -> bool:
    """Does ``apiVersion`` or ``kind`` appear as a key anywhere in ``text``?"""
    return _OBJECT_KEY.search(text) is not None


class KeyScan:
    """One file's answer, scanned for once (a file can break in many documents)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.keys: bool | None = None

    def not_a_manifest(self, problem: YamlProblem) -> bool:
        """Is the document that broke with ``problem`` another tool's file rather than an
        object (a syntax error, in a file that names no ``apiVersion`` and no ``kind``)?"""
        if not problem.syntax or problem.templated:
            return False
        if self.keys is None:
            self.keys = names_object_keys(self.text)
        return not self.keys
