"""Property tests for both prefix caches against a brute-force model.

Every block carries a label of the exact tokens (and their positions) the
request wrote into it. A hit is sound when each returned block's label equals
the query's tokens at those positions (for a partial block, its leading slots);
without eviction it is also complete: as long as the longest common prefix
with anything cached, rounded down to whole blocks for the hashed cache and
exact to the token for the radix cache.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache import make_prefix_cache

BS = 2
token_lists = st.lists(
    st.integers(0, 3), min_size=1, max_size=12
)  # few symbols: many shared prefixes


def _lcp(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@settings(max_examples=100, deadline=None)
@given(
    kind=st.sampled_from(["hash", "radix"]),
    inserted=st.lists(token_lists, min_size=1, max_size=8),
    queries=st.lists(token_lists, min_size=1, max_size=6),
    evict_after=st.integers(0, 8),
    evict_count=st.integers(0, 10),
)
def test_hits_are_sound_and_complete(
    kind: str,
    inserted: list[list[int]],
    queries: list[list[int]],
    evict_after: int,
    evict_count: int,
) -> None:
    pool = BlockPool(64)
    cache = make_prefix_cache(kind, pool, BS)
    label: dict[int, tuple[tuple[int, int], ...]] = {}
    evicted = False
    for k, tokens in enumerate(inserted):
        blocks = pool.allocate(-(-len(tokens) // BS))
        for i, b in enumerate(blocks):
            chunk = tokens[i * BS : (i + 1) * BS]
            label[b] = tuple((t, i * BS + j) for j, t in enumerate(chunk))
        handle = cache.cache_blocks(tokens, blocks, len(tokens), None)
        cache.unlock(handle)
        pool.free(blocks)  # the request finishes; only the cache holds what it kept
        pool.check_integrity(cache.block_refs())
        if k == evict_after:
            cache.evict(evict_count)
            evicted = evict_count > 0
    for q in queries:
        hit = cache.match_prefix(q)
        num_full, num_partial = divmod(hit.num_cached_tokens, BS)
        assert len(hit.blocks) == num_full
        assert (hit.partial_block is not None) == (num_partial > 0)
        for i, b in enumerate(hit.blocks):
            assert label[b] == tuple((q[i * BS + j], i * BS + j) for j in range(BS))
        if hit.partial_block is not None:
            p = num_full * BS
            expected = tuple((q[p + j], p + j) for j in range(num_partial))
            assert label[hit.partial_block][:num_partial] == expected
        if not evicted:
            lcp = max(_lcp(q, s) for s in inserted)
            assert hit.num_cached_tokens == (lcp // BS * BS if kind == "hash" else lcp)
    cache.clear()
    assert pool.num_free == pool.num_blocks
