"""Both prefix caches: hits, chained keys, token-level radix matches, pinning, LRU eviction."""

from __future__ import annotations

import pytest

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache import HashedPrefixCache, RadixPrefixCache, make_prefix_cache

BS = 4


def _request_blocks(pool: BlockPool, num_tokens: int) -> list[int]:
    return pool.allocate(-(-num_tokens // BS))


def _finish(pool: BlockPool, blocks: list[int]) -> None:
    pool.free(blocks)


@pytest.mark.parametrize("kind", ["hash", "radix"])
def test_cached_prompt_is_found_again_and_pool_drains_after_clear(kind: str) -> None:
    pool = BlockPool(16)
    cache = make_prefix_cache(kind, pool, BS)
    tokens = list(range(10))  # 2 full blocks + 2 tokens
    blocks = _request_blocks(pool, len(tokens))
    handle = cache.cache_blocks(tokens, blocks, len(tokens), None)
    cache.unlock(handle)
    _finish(pool, blocks)

    hit = cache.match_prefix(tokens)
    assert hit.blocks == blocks[:2]  # full blocks are shared
    if kind == "hash":
        assert hit.num_cached_tokens == 8 and hit.partial_block is None  # full blocks only
    else:
        assert hit.num_cached_tokens == 10 and hit.partial_block == blocks[2]  # to the token
    pool.check_integrity(cache.block_refs())
    cache.clear()
    assert pool.num_free == 16 and cache.block_refs() == {}
    pool.check_integrity({})


def test_hash_keys_chain_the_whole_prefix() -> None:
    pool = BlockPool(8)
    cache = HashedPrefixCache(pool, BS)
    a = [1, 2, 3, 4, 5, 6, 7, 8]
    blocks = _request_blocks(pool, 8)
    cache.cache_blocks(a, blocks, 8, None)
    # Same second block, different first block: no hit at all (the second key depends on the first).
    assert cache.match_prefix([9, 9, 9, 9, 5, 6, 7, 8]).num_cached_tokens == 0
    assert cache.match_prefix([1, 2, 3, 4, 0, 0, 0, 0]).num_cached_tokens == 4


def test_hash_identical_prefix_cached_twice_keeps_first_copy() -> None:
    pool = BlockPool(8)
    cache = HashedPrefixCache(pool, BS)
    tokens = [1, 2, 3, 4, 5]
    first, second = _request_blocks(pool, 5), _request_blocks(pool, 5)
    cache.cache_blocks(tokens, first, 5, None)
    cache.cache_blocks(tokens, second, 5, None)  # same step, same prefix
    assert cache.block_refs() == {first[0]: 1}
    _finish(pool, first)
    _finish(pool, second)
    assert pool.num_used == 1  # only the cached block survives
    assert cache.match_prefix(tokens).blocks == [first[0]]


def test_hash_evicts_least_recently_used_and_skips_blocks_in_use() -> None:
    pool = BlockPool(6)
    cache = HashedPrefixCache(pool, BS)
    old = _request_blocks(pool, 8)
    cache.cache_blocks(list(range(8)), old, 8, None)
    new = _request_blocks(pool, 8)
    cache.cache_blocks(list(range(100, 108)), new, 8, None)
    _finish(pool, old)
    assert cache.num_evictable_blocks() == 2  # `new` is still held by its request
    assert cache.evict(1) == 1
    # The tail of the old prefix goes first; its head is still a hit.
    assert cache.match_prefix(list(range(8))).num_cached_tokens == 4
    assert cache.evict(10) == 1
    assert cache.match_prefix(list(range(100, 108))).num_cached_tokens == 8
    _finish(pool, new)
    assert cache.evict(10) == 2 and pool.num_free == 6


def test_radix_splits_where_prompts_diverge_at_any_token() -> None:
    pool = BlockPool(16)
    cache = RadixPrefixCache(pool, BS)
    a = list(range(12))
    a_blocks = _request_blocks(pool, 12)
    cache.unlock(cache.cache_blocks(a, a_blocks, 12, None))
    _finish(pool, a_blocks)

    b = [*range(6), 50, 51, 52]  # diverges inside block 1
    hit = cache.match_prefix(b)  # splits a's edge after token 6
    assert hit.num_cached_tokens == 6 and hit.blocks == a_blocks[:1]
    assert hit.partial_block == a_blocks[1]  # copied, not shared: b writes slot 2 of its own
    assert len(cache._nodes()) == 2
    pool.check_integrity(cache.block_refs())  # the split block stays with the lower node only

    # b's table: the shared block, then its copy of block 1 and one more block.
    b_blocks = [a_blocks[0], *pool.allocate(2)]
    pool.incref(a_blocks[0])
    cache.lock(hit.handle)
    cache.unlock(cache.cache_blocks(b, b_blocks, 9, hit.handle))
    assert cache.match_prefix([*b, 7]).blocks == b_blocks[:2]
    assert cache.match_prefix([*b, 7]).partial_block == b_blocks[2]
    assert cache.match_prefix(a).blocks == a_blocks
    # Both branches hold a block for index 1; the prefix [0, 6) owns none of its own there.
    assert cache.match_prefix(list(range(6))).partial_block in (a_blocks[1], b_blocks[1])
    _finish(pool, b_blocks)
    pool.check_integrity(cache.block_refs())
    cache.clear()
    assert pool.num_free == 16


def test_radix_insert_of_a_recomputed_prefix_adopts_the_cached_blocks() -> None:
    pool = BlockPool(16)
    cache = RadixPrefixCache(pool, BS)
    tokens = list(range(8))
    first, second = _request_blocks(pool, 8), _request_blocks(pool, 8)
    h1 = cache.cache_blocks(tokens, first, 8, None)
    h2 = cache.cache_blocks(tokens, second, 8, None)  # same prompt computed in the same step
    assert h1 is h2 and second == first  # second now shares first's blocks
    assert pool.num_used == 2 and all(pool.ref_count(b) == 3 for b in first)
    cache.unlock(h1)
    cache.unlock(h2)
    _finish(pool, first)
    _finish(pool, second)
    assert cache.evict(10) == 2 and pool.num_free == 16


def test_radix_locked_path_is_not_evicted_and_lru_leaf_goes_first() -> None:
    pool = BlockPool(16)
    cache = RadixPrefixCache(pool, BS)
    handles = []
    all_blocks = []
    for first in (1, 2, 3):
        toks = [first] * 8
        blocks = _request_blocks(pool, 8)
        handles.append(cache.cache_blocks(toks, blocks, 8, None))
        all_blocks.append(blocks)
        _finish(pool, blocks)
    cache.unlock(handles[0])
    cache.unlock(handles[2])
    cache.match_prefix([3] * 8)  # touch 3: now 1 is the least recently used
    assert cache.num_evictable_blocks() == 4
    assert cache.evict(1) == 2  # a whole leaf goes, here 2 blocks
    assert cache.match_prefix([1] * 8).num_cached_tokens == 0
    assert cache.match_prefix([3] * 8).num_cached_tokens == 8
    assert cache.evict(100) == 2  # only 3 is left unpinned
    assert cache.match_prefix([2] * 8).num_cached_tokens == 8  # pinned by handles[1]
    cache.unlock(handles[1])
    assert cache.evict(100) == 2 and pool.num_free == 16


def test_radix_request_growing_step_by_step_extends_its_own_leaf() -> None:
    pool = BlockPool(16)
    cache = RadixPrefixCache(pool, BS)
    tokens = list(range(12))
    blocks = _request_blocks(pool, 12)
    handle = None
    for n in range(1, 13):  # one decode step at a time
        handle = cache.cache_blocks(tokens, blocks, n, handle)
    assert len(cache._nodes()) == 1  # one node, not one per block
    assert cache.block_refs() == {b: 1 for b in blocks}
    cache.unlock(handle)
    _finish(pool, blocks)
    assert cache.num_evictable_blocks() == 3
    assert cache.match_prefix(tokens).num_cached_tokens == 12


def test_hit_rate_accounting() -> None:
    cache = make_prefix_cache("radix", BlockPool(4), BS)
    cache.stats.record(10, 0)
    cache.stats.record(10, 5)
    assert cache.stats.num_queries == 2 and cache.stats.hit_rate == pytest.approx(0.25)


def test_unknown_cache_kind_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown prefix_caching 'lru'"):
        make_prefix_cache("lru", BlockPool(1), BS)
