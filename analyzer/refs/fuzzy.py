"""Closest names, cheap enough to run for every broken reference of a long book.

rapidfuzz's `ratio` is the normalised Indel similarity (the same measure as
difflib's `SequenceMatcher.ratio` up to how ties in matching blocks fall), in C++.
A pool bucketed by length skips names that can't reach the cutoff anyway: two
strings of lengths a <= b score at most 2a / (a + b). `cdist` scores the whole
window in one call (`extract` costs about twice as much per name: it builds a
result object for each), and the window's list is kept per length range.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Collection, Iterable

import numpy as np
from rapidfuzz import fuzz, process


class NamePool:
    """Names grouped by length, for repeated closest-name queries against one set."""

    def __init__(self, names: Iterable[str]) -> None:
        by_length: dict[int, list[str]] = defaultdict(list)
        for name in names:
            by_length[len(name)].append(name)
        self._by_length = dict(by_length)
        self._windows: dict[tuple[int, int], list[str]] = {}
        self._lowered: dict[str, list[str]] | None = None
        self._reversed: list[str] | None = None  # lower-cased names reversed, sorted: `ending_with`

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_length.values())

    def _all(self) -> list[str]:
        return [n for names in self._by_length.values() for n in names]

    def lowered(self, key: str) -> list[str]:
        """Names that are `key` once lower-cased (`LLMEngine` for `llmengine`)."""
        if self._lowered is None:
            index: dict[str, list[str]] = defaultdict(list)
            for names in self._by_length.values():
                for name in names:
                    index[name.lower()].append(name)
            self._lowered = dict(index)
        return self._lowered.get(key, [])

    def ending_with(self, end: str) -> list[str]:
        """Longer names whose lower-cased form ends with `end`, itself lower case (`gpumodelrunner`
        for `modelrunner`)."""
        if self._reversed is None:
            self.lowered(end)  # builds the index
            assert self._lowered is not None
            self._reversed = sorted(key[::-1] for key in self._lowered)
        # A suffix of the names is a prefix of the reversed names: one bisected range.
        tail = end[::-1]
        start = bisect.bisect_left(self._reversed, tail)
        stop = bisect.bisect_left(self._reversed, tail + "\U0010ffff", start)
        assert self._lowered is not None
        return [n for key in self._reversed[start:stop] if len(key) > len(end) for n in self._lowered[key[::-1]]]

    def window(self, length: int, cutoff: float) -> list[str]:
        lo = int(length * cutoff / (2 - cutoff))
        hi = int(length * (2 - cutoff) / cutoff) + 1
        out = self._windows.get((lo, hi))
        if out is None:
            out = [name for n in range(lo, hi + 1) for name in self._by_length.get(n, ())]
            self._windows[(lo, hi)] = out
        return out


def closest(query: str, names: Collection[str] | NamePool, n: int = 3, cutoff: float = 0.6) -> list[tuple[str, float]]:
    """Up to `n` (name, similarity 0..1) pairs other than `query` itself, best first."""
    pool = names.window(len(query), cutoff) if isinstance(names, NamePool) else list(names)
    if not pool:
        return []
    scores = process.cdist([query], pool, scorer=fuzz.ratio, score_cutoff=cutoff * 100, dtype=np.float64)[0]
    # Below the cutoff scores 0; ties are broken by name, not by the pool's order.
    out = [(pool[i], float(scores[i]) / 100) for i in np.flatnonzero(scores) if pool[i] != query]
    out.sort(key=lambda item: (-item[1], item[0]))
    return out[:n]
