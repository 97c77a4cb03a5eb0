"""Closest names, cheap enough to run for every broken reference of a long book."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(query: str, names: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[tuple[str, float]]:
    """Up to `n` (name, similarity) pairs, best first.

    difflib's `get_close_matches` already filters by the cheap upper bounds
    (real_quick_ratio, quick_ratio) before the full ratio; a length window in
    front skips most of a 100k-name pool without building a matcher at all.
    """
    lo, hi = len(query) * cutoff / (2 - cutoff), len(query) * (2 - cutoff) / cutoff
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(query)
    scored: list[tuple[float, str]] = []
    for name in set(names):
        if name == query or not lo <= len(name) <= hi:
            continue
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((ratio, name))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(name, ratio) for ratio, name in scored[:n]]
