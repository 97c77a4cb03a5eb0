"""Closest names, cheap enough to run for every broken reference of a long book.

rapidfuzz's `ratio` is the normalised Indel similarity (the same measure as
difflib's `SequenceMatcher.ratio` up to how ties in matching blocks fall), in C++:
scoring a 100k-name pool takes milliseconds instead of the tenths of a second
difflib needs.
"""

from __future__ import annotations

from collections.abc import Collection

from rapidfuzz import fuzz, process


def closest(query: str, names: Collection[str], n: int = 3, cutoff: float = 0.6) -> list[tuple[str, float]]:
    """Up to `n` (name, similarity 0..1) pairs other than `query` itself, best first."""
    hits = process.extract(query, names, scorer=fuzz.ratio, limit=n + 1, score_cutoff=cutoff * 100)
    out = [(name, score / 100) for name, score, _ in hits if name != query]
    out.sort(key=lambda item: (-item[1], item[0]))
    return out[:n]
