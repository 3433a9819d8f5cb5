"""Do pods of given GPU counts fit on nodes of a given size? Exact bin packing, bounded.

A pod's GPUs come from one node, so fitting is bin packing, not a sum: three 5-GPU pods need
three 8-GPU nodes although 15 <= 16. First-fit decreasing is not exact here (4+2+2 and 3+3+2
fill two nodes; FFD opens a third), so the number of nodes is found exactly, by a search over
how many pods of each size go on a node (there are few such node "patterns" for a few GPUs a
node), memoised on the pods left. The search stops after ``BUDGET`` states; the answer is then
undecided (None) unless a bound settles it: more GPUs than the nodes hold never fit, and a
first-fit decreasing packing that fits always fits.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping

BUDGET = 200_000  # memoised states before giving up (a few hundred ms at most)
EXPAND_LIMIT = 5_000  # pods packed one by one; beyond, only the bounds decide
Counts = tuple[int, ...]  # Counts[i]: pods of i + 1 GPUs


class _Exhausted(Exception):
    pass


def fits_counts(pods: Mapping[int, int], nodes: int, per_node: int,
                partial: int = 0) -> bool | None:
    """``fits`` for ``{GPUs a pod: number of pods}``, whatever the numbers (a Deployment of
    a billion replicas, a cluster of 2**70 GPUs): bounds first, pod by pod only when few."""
    counts = {size: n for size, n in pods.items() if size > 0 and n > 0}
    bound = _bounds(counts, nodes, per_node, partial)
    if bound is not None:
        return bound
    if sum(counts.values()) > EXPAND_LIMIT:
        return None
    return fits([size for size, n in counts.items() for _ in range(n)], nodes, per_node,
                partial)


def _bounds(counts: dict[int, int], nodes: int, per_node: int, partial: int) -> bool | None:
    """What the cheap bounds settle (None: they do not)."""
    if any(size > per_node for size in counts):
        return False
    if sum(size * n for size, n in counts.items()) > nodes * per_node + partial:
        return False
    if sum(counts.values()) <= nodes:
        return True  # a node each
    if sum(-(-n // (per_node // size)) for size, n in counts.items()) <= nodes:
        return True  # even packing each size apart fits
    big = sum(n for size, n in counts.items() if size * 2 > per_node)
    if big > nodes + (1 if partial else 0):
        return False  # no two of these share a node
    return None


def fits(pods: Iterable[int], nodes: int, per_node: int, partial: int = 0) -> bool | None:
    """Can ``pods`` (GPUs each, 1..per_node) run at once on ``nodes`` nodes of ``per_node``
    GPUs plus one node of ``partial`` GPUs? None: undecided within the budget."""
    sizes = sorted((g for g in pods if g > 0), reverse=True)
    if any(g > per_node for g in sizes):
        return False
    if sum(sizes) > nodes * per_node + partial:
        return False
    nodes = min(nodes, len(sizes))  # more nodes than pods help no one
    if _first_fit(sizes, [per_node] * nodes + ([partial] if partial else [])):
        return True
    counts = _counts(sizes, per_node)
    try:
        if not partial:
            return _min_nodes(counts, per_node) <= nodes
        return any(_min_nodes(_minus(counts, p), per_node) <= nodes
                   for p in _patterns(per_node, partial) if _within(p, counts))
    except _Exhausted:
        return None


def min_nodes(pods: Iterable[int], per_node: int) -> int | None:
    """The fewest nodes of ``per_node`` GPUs that hold every pod (None: undecided)."""
    sizes = [g for g in pods if g > 0]
    if any(g > per_node for g in sizes):
        raise ValueError("a pod larger than a node fits on no number of nodes")
    try:
        return _min_nodes(_counts(sizes, per_node), per_node)
    except _Exhausted:
        return None


def _counts(sizes: list[int], per_node: int) -> Counts:
    found = Counter(sizes)
    return tuple(found.get(i + 1, 0) for i in range(per_node))


def _first_fit(sizes: list[int], bins: list[int]) -> bool:
    free = sorted(bins, reverse=True)
    for size in sizes:  # already in decreasing order
        for i, room in enumerate(free):
            if size <= room:
                free[i] -= size
                break
        else:
            return False
    return True


@functools.cache
def _patterns(per_node: int, room: int) -> tuple[Counts, ...]:
    """Every non-empty way to fill ``room`` GPUs with pods of 1..per_node GPUs."""
    found: list[Counts] = []

    def fill(size: int, left: int, chosen: list[int]) -> None:
        if size == 0:
            if any(chosen):
                found.append(tuple(chosen))
            return
        for k in range(left // size + 1):
            chosen[size - 1] = k
            fill(size - 1, left - k * size, chosen)
        chosen[size - 1] = 0

    fill(per_node, room, [0] * per_node)
    return tuple(found)


def _within(pattern: Counts, counts: Counts) -> bool:
    return all(p <= c for p, c in zip(pattern, counts, strict=True))


def _minus(counts: Counts, pattern: Counts) -> Counts:
    return tuple(c - p for c, p in zip(counts, pattern, strict=True))


def _min_nodes(counts: Counts, per_node: int) -> int:
    """The exact minimum, by a memoised search over node patterns; iterative (a stack, not
    recursion), as a thousand pods may need hundreds of nodes."""
    sizes = [i + 1 for i, c in enumerate(counts) for _ in range(c)]
    sizes.sort(reverse=True)
    greedy = _first_fit_count(sizes, per_node)
    if greedy == _lower_bound(counts, per_node):
        return greedy  # first-fit decreasing met a lower bound: it is optimal
    return _search(counts, per_node)


def _search(counts: Counts, per_node: int) -> int:
    patterns = _patterns(per_node, per_node)
    memo: dict[Counts, int] = {tuple(0 for _ in counts): 0}
    stack = [counts]
    while stack:
        left = stack[-1]
        if left in memo:
            stack.pop()
            continue
        largest = max(i for i, c in enumerate(left) if c)  # some node holds one of them
        children = [_minus(left, p) for p in patterns if p[largest] and _within(p, left)]
        missing = [child for child in children if child not in memo]
        if missing:
            if len(memo) + len(stack) > BUDGET:
                raise _Exhausted
            stack.extend(missing)
            continue
        memo[left] = 1 + min(memo[child] for child in children)
        stack.pop()
    return memo[counts]


def _lower_bound(counts: Counts, per_node: int) -> int:
    """No packing uses fewer nodes: by total GPUs, and by pods over half a node (no two of
    them share a node)."""
    total = sum((i + 1) * c for i, c in enumerate(counts))
    big = sum(c for i, c in enumerate(counts) if (i + 1) * 2 > per_node)
    return max(math.ceil(total / per_node), big)


def _first_fit_count(sizes: list[int], per_node: int) -> int:
    free: list[int] = []
    for size in sizes:
        for i, room in enumerate(free):
            if size <= room:
                free[i] -= size
                break
        else:
            free.append(per_node - size)
    return len(free)
