"""Token-exact radix hits: a match ending inside a block copies that block on admission.

These drive the KVCacheManager (and once the Scheduler) directly and check the
block bookkeeping: which blocks are shared, which are copied, who holds which
reference, and that the copy's source survives until the copy has run.
"""

from __future__ import annotations

from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.prefix_cache import RadixPrefixCache
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import Scheduler, SchedulerConfig
from reference_engine.sequence import Sequence

BS = 4


def _cached(kv: KVCacheManager, seq_id: str, tokens: list[int]) -> list[int]:
    """Compute `tokens` for a request, offer them to the cache, finish it; returns its blocks."""
    assert kv.allocate_slots(seq_id, len(tokens))
    blocks = list(kv.block_tables[seq_id])
    kv.cache_computed(seq_id, tokens, len(tokens))
    kv.free(seq_id)
    return blocks


def _radix(kv: KVCacheManager) -> RadixPrefixCache:
    assert isinstance(kv.cache, RadixPrefixCache)
    return kv.cache


def test_match_ending_mid_block_shares_full_blocks_and_copies_the_last() -> None:
    kv = KVCacheManager(16, BS, "radix")
    a = _cached(kv, "a", list(range(14)))
    prompt = [*range(10), 99, 98]  # diverges after 10 tokens: inside block 2
    match = kv.match_prefix(prompt)
    assert (match.num_cached_tokens, match.blocks, match.partial_block) == (10, a[:2], a[2])
    assert kv.allocate_slots("b", len(prompt), match)
    table = kv.block_tables["b"]
    assert table[:2] == a[:2] and table[2] not in a
    assert kv.blocks_to_copy == [(a[2], table[2])]
    # The source is held for the pending copy as well as by the cache.
    assert kv.pool.ref_count(a[2]) == 2
    kv.check_integrity()
    kv.copies_done()
    assert kv.blocks_to_copy == [] and kv.pool.ref_count(a[2]) == 1
    kv.check_integrity()


def test_whole_prompt_but_the_last_token_is_served() -> None:
    kv = KVCacheManager(16, BS, "radix")
    prompt = list(range(8))  # two full blocks
    a = _cached(kv, "a", [*prompt, 50, 51])  # the prompt and two outputs
    match = kv.match_prefix(prompt)
    # The last prompt token must run to produce logits: 7 tokens, the 2nd block copied.
    assert (match.num_cached_tokens, match.blocks, match.partial_block) == (7, a[:1], a[1])


def test_copy_source_survives_eviction_until_the_copy_ran() -> None:
    kv = KVCacheManager(16, BS, "radix")
    a = _cached(kv, "a", list(range(14)))
    c = _cached(kv, "c", [*range(10), 77, 78, 79])  # a second branch after token 10
    match = kv.match_prefix([*range(10), 5, 5])
    # The prefix [0, 10) holds no block 2 itself: each branch holds its own; a's is first.
    assert match.num_cached_tokens == 10 and match.partial_block == a[2]
    assert kv.allocate_slots("b", 12, match)
    # Both branches are unpinned leaves: evict everything the cache can let go of.
    _radix(kv).evict(kv.num_blocks)
    assert a[2] not in kv.cache.block_refs()  # a's branch is gone...
    assert kv.pool.ref_count(a[2]) == 1  # ...but the pending copy still holds its source
    kv.check_integrity()
    kv.copies_done()
    assert kv.pool.ref_count(a[2]) == 0  # back in the free list only now
    kv.check_integrity()
    assert c[2] in kv.cache.block_refs()  # the pinned prefix inherited c's block 2
    kv.free("b")
    kv.cache.clear()
    assert kv.pool.num_free == kv.num_blocks


def test_evicted_last_child_hands_its_first_block_to_a_parent_ending_mid_block() -> None:
    kv = KVCacheManager(16, BS, "radix")
    a = _cached(kv, "a", list(range(14)))
    cache = _radix(kv)
    cache.match_prefix([*range(10), 99])  # splits a's node after token 10
    upper = cache.root.children[0]
    assert upper.end == 10 and upper.blocks == a[:2]  # the lower node holds block 2
    # Pin the upper node, then evict the lower one.
    cache.lock(upper)
    assert cache.evict(kv.num_blocks) == 1  # a[3] goes; a[2] holds the upper node's tail
    assert upper.blocks == a[:3] and not upper.children
    match = kv.match_prefix([*range(10), 99])
    assert (match.num_cached_tokens, match.partial_block) == (10, a[2])
    cache.unlock(upper)
    kv.check_integrity()
    assert cache.evict(kv.num_blocks) == 3 and kv.pool.num_free == kv.num_blocks


def test_recomputing_a_cached_tail_takes_it_over_and_frees_the_old_copy() -> None:
    kv = KVCacheManager(16, BS, "radix")
    tokens = list(range(10))
    a = _cached(kv, "a", tokens)
    # Same tokens computed again without a hit (as a prompt-logprobs request would).
    assert kv.allocate_slots("b", 10)
    b = list(kv.block_tables["b"])
    free_before = kv.pool.num_free
    kv.cache_computed("b", tokens, 10)
    # b adopted a's full blocks (its own copies go back) and the cache now holds b's
    # partial block instead of a's, so b's pin covers only blocks in b's table.
    assert kv.block_tables["b"] == [a[0], a[1], b[2]]
    assert kv.pool.num_free == free_before + 3  # b[0], b[1] and a[2]
    assert kv.cache.block_refs() == {a[0]: 1, a[1]: 1, b[2]: 1}
    kv.check_integrity()


def test_request_continuing_after_a_partial_hit_grows_its_own_branch() -> None:
    kv = KVCacheManager(32, BS, "radix")
    a = _cached(kv, "a", list(range(14)))
    prompt = [*range(10), 99, 98, 97]
    match = kv.match_prefix(prompt)
    assert kv.allocate_slots("b", len(prompt), match)
    kv.copies_done()
    kv.cache_computed("b", prompt, len(prompt))
    b = kv.block_tables["b"]
    # Two branches below token 10, each with its own block for index 2.
    assert kv.match_prefix([*prompt, 0]).blocks == b[:3]
    assert kv.match_prefix(list(range(14))).blocks == a[:3]
    upper = _radix(kv).root.children[0]
    assert upper.end == 10 and upper.blocks == a[:2]
    kv.check_integrity()
    kv.free("b")
    kv.cache.clear()
    assert kv.pool.num_free == kv.num_blocks


def test_block_size_one_never_copies() -> None:
    kv = KVCacheManager(32, 1, "radix")
    a = _cached(kv, "a", list(range(12)))
    match = kv.match_prefix([*range(7), 99])
    assert match.num_cached_tokens == 7 and match.blocks == a[:7]
    assert match.partial_block is None


def test_tight_pool_settles_for_whole_blocks_instead_of_stalling() -> None:
    # 6 blocks, all holding one cached 24-token sequence. A new 24-token prompt sharing
    # its first 10 tokens needs 6 blocks: 2 shared + 4 fresh. Copying block 2 would pin
    # it as the source while the 4 fresh blocks need every other block: one short.
    kv = KVCacheManager(6, BS, "radix")
    cached = list(range(24))
    _cached(kv, "x", cached)
    sched = Scheduler(SchedulerConfig(max_num_batched_tokens=64), kv)
    seq = Sequence("s", "s", 0, [*range(10), *range(100, 114)], SamplingParams(), 0.0)
    sched.add(seq)
    out = sched.schedule()
    assert [item.seq for item in out.scheduled] == [seq]
    assert seq.num_cached_tokens == 8 and out.blocks_to_copy == []
    assert kv.cache.stats.num_partial_block_hits == 0
    kv.check_integrity()
