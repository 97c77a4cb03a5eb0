"""Closest names, cheap enough to run for every broken reference of a long book.

rapidfuzz's `ratio` is the normalised Indel similarity (the same measure as
difflib's `SequenceMatcher.ratio` up to how ties in matching blocks fall), in C++.
A pool bucketed by length skips names that can't reach the cutoff anyway: two
strings of lengths a <= b score at most 2a / (a + b).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable

from rapidfuzz import fuzz, process


class NamePool:
    """Names grouped by length, for repeated closest-name queries against one set."""

    def __init__(self, names: Iterable[str]) -> None:
        by_length: dict[int, list[str]] = defaultdict(list)
        for name in names:
            by_length[len(name)].append(name)
        self._by_length = dict(by_length)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_length.values())

    def _all(self) -> list[str]:
        return [n for names in self._by_length.values() for n in names]

    def window(self, length: int, cutoff: float) -> list[str]:
        lo = int(length * cutoff / (2 - cutoff))
        hi = int(length * (2 - cutoff) / cutoff) + 1
        out: list[str] = []
        for n in range(lo, hi + 1):
            out.extend(self._by_length.get(n, ()))
        return out


def closest(query: str, names: Collection[str] | NamePool, n: int = 3, cutoff: float = 0.6) -> list[tuple[str, float]]:
    """Up to `n` (name, similarity 0..1) pairs other than `query` itself, best first."""
    pool = names.window(len(query), cutoff) if isinstance(names, NamePool) else names
    hits = process.extract(query, pool, scorer=fuzz.ratio, limit=n + 1, score_cutoff=cutoff * 100)
    out = [(name, score / 100) for name, score, _ in hits if name != query]
    out.sort(key=lambda item: (-item[1], item[0]))
    return out[:n]
