"""No prefix caching: every request computes its whole prompt."""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence

from reference_engine.prefix_cache.base import MatchResult, PrefixCache


class NoPrefixCache(PrefixCache):
    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        return MatchResult(0, [])

    def cache_blocks(
        self,
        token_ids: Sequence[int],
        blocks: MutableSequence[int],
        num_tokens: int,
        handle: object | None,
    ) -> object | None:
        return None

    def evict(self, num_blocks: int) -> int:
        return 0

    def num_evictable_blocks(self) -> int:
        return 0

    def block_refs(self) -> dict[int, int]:
        return {}
