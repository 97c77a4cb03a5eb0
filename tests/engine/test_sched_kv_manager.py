"""KVCacheManager: all-or-nothing growth, cache-hit sharing, forks, swap round trips."""

from __future__ import annotations

from reference_engine.kv_cache_manager import KVCacheManager


def test_allocate_slots_grows_by_whole_blocks_and_is_all_or_nothing() -> None:
    kv = KVCacheManager(num_blocks=4, block_size=4)
    assert kv.allocate_slots("a", 5)  # 2 blocks
    assert kv.allocate_slots("a", 8)  # still 2 blocks
    assert kv.num_blocks_held("a") == 2
    assert not kv.allocate_slots("b", 12)  # needs 3, only 2 free: nothing taken
    assert kv.pool.num_free == 2 and "b" not in kv.block_tables
    kv.free("a")
    kv.free("a")  # idempotent
    assert kv.pool.num_free == 4
    kv.check_integrity()


def test_cache_hit_shares_blocks_and_leaves_the_last_token_to_compute() -> None:
    kv = KVCacheManager(num_blocks=8, block_size=4, prefix_caching="hash")
    tokens = list(range(12))
    assert kv.allocate_slots("a", 12)
    kv.cache_computed("a", tokens, 12)
    kv.free("a")
    assert kv.pool.num_free == 5  # 3 blocks stay cached

    match = kv.match_prefix(tokens)  # identical prompt: last block must be recomputed
    assert match.num_cached_tokens == 8
    assert kv.allocate_slots("b", 12, match)
    assert kv.block_tables["b"][:2] == match.blocks
    assert all(kv.pool.ref_count(b) == 2 for b in match.blocks)  # cache + request
    kv.check_integrity()
    kv.free("b")
    kv.cache.clear()
    assert kv.pool.num_free == 8


def test_failed_admission_with_a_hit_gives_the_references_back() -> None:
    kv = KVCacheManager(num_blocks=3, block_size=2, prefix_caching="radix")
    tokens = [1, 2, 3, 4, 5]
    assert kv.allocate_slots("a", 4)
    kv.cache_computed("a", tokens, 4)
    kv.free("a")
    assert kv.allocate_slots("hog", 2)
    match = kv.match_prefix([1, 2, 3, 4, 9, 9, 9])
    assert match.num_cached_tokens == 4
    assert not kv.allocate_slots("b", 7, match)  # needs 2 more, 0 free and nothing evictable
    kv.check_integrity()
    assert kv.cache.num_evictable_blocks() == 2  # unpinned again


def test_fork_shares_only_full_blocks() -> None:
    kv = KVCacheManager(num_blocks=8, block_size=4)
    assert kv.allocate_slots("parent", 10)
    assert kv.fork("parent", "child", 9) == 8
    assert kv.block_tables["child"] == kv.block_tables["parent"][:2]
    assert kv.allocate_slots("child", 11)
    assert kv.block_tables["child"][2] != kv.block_tables["parent"][2]
    kv.check_integrity()


def test_swap_out_and_in_round_trip() -> None:
    kv = KVCacheManager(num_blocks=4, block_size=4, num_cpu_blocks=4)
    assert kv.allocate_slots("a", 8)
    device = list(kv.block_tables["a"])
    out = kv.swap_out("a")
    assert [d for d, _ in out] == device and kv.pool.num_free == 4
    assert kv.num_blocks_to_swap_in("a") == 2
    back = kv.swap_in("a", 9)  # room for one more token: a third block
    assert back is not None and [h for h, _ in back] == [h for _, h in out]
    assert kv.num_blocks_held("a") == 3 and kv.host_pool is not None
    assert kv.host_pool.num_free == 4
    kv.check_integrity()


def test_swap_out_refused_when_the_host_pool_is_full() -> None:
    kv = KVCacheManager(num_blocks=4, block_size=4, num_cpu_blocks=1)
    assert kv.allocate_slots("a", 8)
    assert not kv.can_swap_out("a")


def test_failed_admission_with_a_partial_hit_gives_the_source_back() -> None:
    kv = KVCacheManager(num_blocks=4, block_size=2, prefix_caching="radix")
    assert kv.allocate_slots("a", 5)
    a = list(kv.block_tables["a"])
    kv.cache_computed("a", [1, 2, 3, 4, 5], 5)
    kv.free("a")
    assert kv.allocate_slots("hog", 2)
    match = kv.match_prefix([1, 2, 3, 9, 9, 9, 9, 9])  # 3 tokens: block 1 is copied
    assert (match.num_cached_tokens, match.partial_block) == (3, a[1])
    assert not kv.allocate_slots("b", 8, match)  # needs 3 more blocks, only 2 obtainable
    assert kv.blocks_to_copy == [] and kv.pool.ref_count(a[1]) == 1
    kv.check_integrity()


def test_hybrid_swap_keeps_the_state_slot() -> None:
    """A hybrid's KV goes to the host; its recurrent state stays in its device slot, which
    no other request can take meanwhile, and comes back with it."""
    kv = KVCacheManager(num_blocks=4, block_size=4, num_cpu_blocks=4, state_rows=(2, 0))
    assert kv.allocate_slots("a", 8)
    slot = kv.state_slots["a"]
    out = kv.swap_out("a")
    assert len(out) == 2 and kv.num_blocks_held("a") == 0 and kv.state_slots["a"] == slot
    assert kv.allocate_slots("b", 4)  # the other slot
    assert not kv.allocate_slots("c", 4)  # no slot left: a swapped request keeps its own
    assert kv.swap_in("a", 9) is not None and kv.state_slots["a"] == slot
    kv.check_integrity()
    kv.free("a")
    assert kv.state_pool is not None and kv.state_pool.num_free == 1
