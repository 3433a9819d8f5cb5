"""A run's findings, held compactly until its reports are written.

A tree of 20,000 files can have a finding or more in every file, each about 2 KB as Python
objects (its message, its path, its fix). ``Stored`` keeps the findings in order, packed in
batches of ``BATCH`` (pickled, then compressed: findings of one rule read alike, so a batch
shrinks to a few percent), and gives them back as often as they are iterated. A run with
fewer findings than a batch never packs one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pmanifest.kube.document import Finding

BATCH = 512  # findings packed together (about 1 MB as objects before they are packed)


class Stored:
    """Findings in the order they were added, iterable again and again."""

    __slots__ = ("_count", "_packed", "_pending")

    def __init__(self, findings: Iterable[Finding] = ()) -> None:
        self._packed: list[bytes] = []
        self._pending: list[Finding] = []
        self._count = 0
        self.extend(findings)

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> Stored:
        """``findings`` as a Stored (the same object when it is one)."""
        return findings if isinstance(findings, Stored) else cls(findings)

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self._pending.append(finding)
            self._count += 1
            if len(self._pending) >= BATCH:
                self._pack()

    def _pack(self) -> None:
        import pickle  # (only a run with that many findings pays for these imports)
        import zlib

        self._packed.append(zlib.compress(pickle.dumps(self._pending, pickle.HIGHEST_PROTOCOL),
                                          1))
        self._pending = []

    def __iter__(self) -> Iterator[Finding]:
        if self._packed:
            yield from self._unpacked()
        yield from self._pending

    def _unpacked(self) -> Iterator[Finding]:
        import pickle
        import zlib

        for batch in self._packed:
            findings: list[Finding] = pickle.loads(zlib.decompress(batch))
            yield from findings

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __repr__(self) -> str:
        return f"Stored({self._count} findings)"
