"""KVCacheManager: per-request block tables on top of the BlockPool and the prefix cache.

It owns every block reference a request holds: the device block table, the
host block table while swapped out, the prefix-cache pin, and for one step a
reference on the source of a pending copy. The scheduler asks it questions in
token counts; the model runner later executes the swaps and copies it hands
out. Shared blocks are always full blocks, so nobody ever
writes into a shared block: forks share whole blocks only, and a radix hit that
ends inside a block gets a private copy of that block (copy-on-write at
admission, see `blocks_to_copy`), executed before the request's first
forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from reference_engine.block_pool import BlockPool
from reference_engine.kv_window import FREED_BLOCK, dead_blocks
from reference_engine.prefix_cache import MatchResult, PrefixCache, make_prefix_cache
from reference_engine.prefix_cache.hashed import _ROOT_HASH, hash_block
from reference_engine.prefix_cache.state_checkpoints import StateCheckpoints

BlockMapping = list[tuple[int, int]]  # (source block, destination block)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class KVCacheManager:
    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        prefix_caching: str = "none",
        num_cpu_blocks: int = 0,
        sliding_windows: Sequence[int | None] = (),
        state_rows: tuple[int, int] = (0, 0),
    ) -> None:
        self.block_size = block_size
        # The model's per-layer windows: blocks out of every layer's window are freed.
        self.sliding_windows = list(sliding_windows)
        # Hybrid models: a recurrent-state slot per running request, beside its blocks
        # (vLLM's MambaManager, SGLang's HybridReqToTokenPool). Held from the first
        # allocation to `free`; the runner's layers keep the state rows themselves.
        num_slots, num_checkpoints = state_rows
        self.state_pool = BlockPool(num_slots) if num_slots > 0 else None
        self.state_slots: dict[str, int] = {}
        # Prefix caching for hybrids (hash cache only): state snapshots at block boundaries,
        # rows after the running slots. Pending rows are held for one step each.
        self.state_checkpoints = (
            StateCheckpoints(num_checkpoints, first_row=num_slots)
            if num_slots > 0 and num_checkpoints > 0 and prefix_caching != "none"
            else None
        )
        self._pending_restores: dict[str, int] = {}
        # Per request: (blocks hashed, chained hash so far), to file snapshots by prefix.
        self._state_keys: dict[str, tuple[int, bytes]] = {}
        self._pending_checkpoints: dict[str, int] = {}
        self.pool = BlockPool(num_blocks)
        self.host_pool = BlockPool(num_cpu_blocks) if num_cpu_blocks > 0 else None
        self.cache: PrefixCache = make_prefix_cache(prefix_caching, self.pool, block_size)
        self.block_tables: dict[str, list[int]] = {}
        self.host_block_tables: dict[str, list[int]] = {}
        self._cache_handles: dict[str, object | None] = {}
        # Copy-on-write of partially matched prefix blocks, to run before the next forward
        # pass; each source holds one reference until then (see allocate_slots).
        self.blocks_to_copy: BlockMapping = []

    # --- capacity ---------------------------------------------------------
    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    def num_free_blocks(self) -> int:
        """Blocks obtainable now: free ones plus cached ones only the cache holds."""
        return self.pool.num_free + self.cache.num_evictable_blocks()

    def usage(self) -> float:
        return 1.0 - self.pool.num_free / self.pool.num_blocks

    def num_blocks_held(self, seq_id: str) -> int:
        return sum(b != FREED_BLOCK for b in self.block_tables.get(seq_id, ()))

    def _take(self, n: int) -> list[int] | None:
        if n > self.pool.num_free:
            self.cache.evict(n - self.pool.num_free)
        if n > self.pool.num_free:
            return None
        return self.pool.allocate(n)

    # --- admission and growth ---------------------------------------------
    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        """Cached prefix for a new request, always leaving at least one token to compute:
        the last prompt token must run through the model to produce logits."""
        if self.state_pool is not None:
            return self._match_with_state(token_ids[: len(token_ids) - 1])
        return self.cache.match_prefix(token_ids[: len(token_ids) - 1])

    def _match_with_state(self, token_ids: Sequence[int]) -> MatchResult:
        """A hybrid's cached blocks alone cannot resume it: the match is cut back to the
        longest prefix whose recurrent state was checkpointed (state_checkpoints.py)."""
        if self.state_checkpoints is None:
            return MatchResult(0, [])
        match = self.cache.match_prefix(token_ids)
        key, best, row = _ROOT_HASH, 0, None
        bs = self.block_size
        for i in range(len(match.blocks)):
            key = hash_block(key, token_ids[i * bs : (i + 1) * bs])
            found = self.state_checkpoints.lookup(key)
            if found is not None:
                best, row = i + 1, found
        if row is None:
            return MatchResult(0, [])
        cut = self.cache.match_prefix(token_ids[: best * bs])
        cut.state_row = row
        return cut

    def state_inputs(self, seq_id: str, start: int, end: int) -> dict[str, int]:
        """The state rows a hybrid sequence's step uses (SeqInput's state_* fields): its
        slot, a checkpoint to start from (a prefix hit's), and a fresh row to snapshot the
        state at the last block boundary in (start, end] into, filed in `cache_computed`."""
        rows = {
            "state_slot": self.state_slots.get(seq_id, -1),
            "state_restore": self._pending_restores.get(seq_id, -1),
            "state_checkpoint": -1,
        }
        boundary = end // self.block_size * self.block_size
        if self.state_checkpoints is not None and boundary > start and seq_id in self.state_slots:
            row = self.state_checkpoints.take()
            if row is not None:
                self._pending_checkpoints[seq_id] = row
                rows["state_checkpoint"] = row
        return rows

    def states_done(self) -> None:
        """After a step: restores were consumed; snapshots nobody filed are dropped."""
        if self.state_checkpoints is None:
            return
        for row in [*self._pending_restores.values(), *self._pending_checkpoints.values()]:
            self.state_checkpoints.release(row)
        self._pending_restores.clear()
        self._pending_checkpoints.clear()

    def match_whole_blocks(self, token_ids: Sequence[int], match: MatchResult) -> MatchResult:
        """`match` cut back to its full blocks, for when a partial block's copy does not fit:
        it needs a fresh block while its source stays cached, one more than computing
        those few tokens would."""
        num_tokens = match.num_cached_tokens - match.num_cached_tokens % self.block_size
        return self.cache.match_prefix(token_ids[:num_tokens])

    def allocate_slots(
        self, seq_id: str, num_total_tokens: int, match: MatchResult | None = None
    ) -> bool:
        """Make the block table hold `num_total_tokens` token slots. All or nothing.

        With `match` (a fresh request's cache hit) the matched full blocks are
        shared. A partially matched block is copied into the first new block
        (queued in `blocks_to_copy`; only its leading slots matter, the request
        writes the rest before reading them).
        """
        table = self.block_tables.get(seq_id, [])
        needs_slot = self.state_pool is not None and seq_id not in self.state_slots
        if needs_slot and self.state_pool is not None and self.state_pool.num_free == 0:
            return False  # more running requests than slots: max_num_seqs bounds both
        held: list[int] = []  # references taken before allocating
        if match is not None:
            assert not table, "prefix matches apply only to requests holding no blocks"
            # References first: the blocks may be evictable, and _take below could evict them.
            held = match.blocks + ([match.partial_block] if match.partial_block is not None else [])
            for b in held:
                self.pool.incref(b)
            self.cache.lock(match.handle)
        shared = match.blocks if match is not None else []
        need = cdiv(num_total_tokens, self.block_size) - len(table) - len(shared)
        new = self._take(need) if need > 0 else []
        if new is None:
            if match is not None:
                self.cache.unlock(match.handle)
                self.pool.free(held)
            return False
        if match is not None:
            self._cache_handles[seq_id] = match.handle
            if match.partial_block is not None:
                # The source keeps its extra reference until the copy ran (`copies_done`).
                self.blocks_to_copy.append((match.partial_block, new[0]))
        self.block_tables[seq_id] = table + shared + new
        if needs_slot and self.state_pool is not None:
            self.state_slots[seq_id] = self.state_pool.allocate(1)[0]
        if match is not None and match.state_row is not None and self.state_checkpoints:
            self.state_checkpoints.pin(match.state_row)  # until its first step ran
            self._pending_restores[seq_id] = match.state_row
        return True

    def copies_done(self) -> None:
        """The engine ran `blocks_to_copy`: release the references on their sources."""
        for src, _ in self.blocks_to_copy:
            self.pool.decref(src)
        self.blocks_to_copy = []

    def fork(self, parent_id: str, child_id: str, num_tokens: int) -> int:
        """Share the parent's blocks that hold only the first `num_tokens` tokens.

        Only whole blocks are shared: the child writes its own tokens from
        there on. Returns how many tokens the child starts with computed.
        """
        assert child_id not in self.block_tables
        num_shared = num_tokens // self.block_size
        shared = self.block_tables[parent_id][:num_shared]
        if FREED_BLOCK in shared or self.state_pool is not None:
            # A hybrid child would need the parent's recurrent state at the fork point,
            # which the parent has moved past: it computes its prompt itself.
            # Likewise when the parent ran on and freed blocks the child's window still needs.
            shared, num_shared = [], 0
        for b in shared:
            self.pool.incref(b)
        self.block_tables[child_id] = list(shared)
        return num_shared * self.block_size

    # --- prefix caching -----------------------------------------------------
    def cache_computed(
        self, seq_id: str, token_ids: Sequence[int], num_computed_tokens: int
    ) -> None:
        """Offer the request's computed tokens to the prefix cache (after their KV is written)."""
        table = self.block_tables.get(seq_id)
        if table is None or num_computed_tokens == 0:
            return
        if self.state_pool is not None and self.state_checkpoints is None:
            return  # hybrids without state checkpoints: prefix caching is off
        handle = self._cache_handles.get(seq_id)
        if handle is None and FREED_BLOCK in table:
            # Back from swap with blocks freed by its window: the cache would start indexing
            # from block 0 and meet the holes. Blocks offered before the swap stay cached.
            return
        self._cache_handles[seq_id] = self.cache.cache_blocks(
            token_ids, table, num_computed_tokens, handle
        )
        row = self._pending_checkpoints.pop(seq_id, None)
        if row is not None and self.state_checkpoints is not None:
            # Filed under the chained hash of the prefix ending at the snapshot's boundary
            # (the hashed cache's own key; computed here for the radix cache too).
            self.state_checkpoints.file(
                self._prefix_key(seq_id, token_ids, num_computed_tokens), row
            )

    def _prefix_key(self, seq_id: str, token_ids: Sequence[int], num_tokens: int) -> bytes:
        bs = self.block_size
        done, key = self._state_keys.get(seq_id, (0, _ROOT_HASH))
        for i in range(done, num_tokens // bs):
            key = hash_block(key, token_ids[i * bs : (i + 1) * bs])
        self._state_keys[seq_id] = (num_tokens // bs, key)
        return key

    def pin_cached_prefix(self, holder_id: str, token_ids: Sequence[int]) -> int:
        """Pin the cached prefix of `token_ids` for a holder that is not a request (a KV
        transfer waiting for its receiver): its blocks are held under `holder_id` like a
        request's block table, so nothing evicts them, until `free(holder_id)`. A radix
        match ending inside a block pins that block too (it holds the tail's KV in its
        leading slots). Returns the number of tokens pinned."""
        assert holder_id not in self.block_tables
        match = self.cache.match_prefix(token_ids)
        blocks = match.blocks + ([match.partial_block] if match.partial_block is not None else [])
        for b in blocks:
            self.pool.incref(b)
        self.cache.lock(match.handle)
        self.block_tables[holder_id] = blocks
        self._cache_handles[holder_id] = match.handle
        return match.num_cached_tokens

    # --- release ----------------------------------------------------------------
    def release_unseen_blocks(
        self, seq_id: str, num_computed_tokens: int, policy: object | None = None
    ) -> int:
        """Free the request's blocks that no later query sees in any layer (sliding windows,
        its eviction policy; kv_window.py). Their table entries become FREED_BLOCK, so later
        blocks keep their indices. Returns how many blocks went back."""
        table = self.block_tables.get(seq_id)
        if table is None:
            return 0
        dead = dead_blocks(num_computed_tokens, self.block_size, self.sliding_windows, policy)
        return self.evict_blocks(seq_id, dead)

    def evict_blocks(self, seq_id: str, indices: Sequence[int] | range) -> int:
        """Free the given entries of the request's table (FREED_BLOCK from then on)."""
        table = self.block_tables.get(seq_id)
        if table is None:
            return 0
        freed = [i for i in indices if i < len(table) and table[i] != FREED_BLOCK]
        for i in freed:
            self.pool.decref(table[i])  # the prefix cache may keep its own reference
            table[i] = FREED_BLOCK
        return len(freed)

    def trim(self, seq_id: str, num_tokens: int) -> None:
        """Release trailing blocks beyond those `num_tokens` slots need: blocks allocated
        for speculative drafts that were rejected (only ever private, uncached blocks)."""
        table = self.block_tables.get(seq_id)
        keep = cdiv(num_tokens, self.block_size)
        if table is not None and len(table) > keep:
            self.pool.free([b for b in table[keep:] if b != FREED_BLOCK])
            del table[keep:]

    def free(self, seq_id: str) -> None:
        """Drop everything the request holds, on device and host. Safe to call twice."""
        table = self.block_tables.pop(seq_id, None)
        if table is not None:
            self.pool.free([b for b in table if b != FREED_BLOCK])
        if seq_id in self._cache_handles:
            self.cache.unlock(self._cache_handles.pop(seq_id))
        self._state_keys.pop(seq_id, None)
        slot = self.state_slots.pop(seq_id, None)
        if slot is not None and self.state_pool is not None:
            self.state_pool.free([slot])
        host = self.host_block_tables.pop(seq_id, None)
        if host is not None:
            assert self.host_pool is not None
            self.host_pool.free([b for b in host if b != FREED_BLOCK])

    # --- swap preemption ---------------------------------------------------------
    def can_swap_out(self, seq_id: str) -> bool:
        return self.host_pool is not None and self.host_pool.num_free >= self.num_blocks_held(
            seq_id
        )

    def swap_out(self, seq_id: str) -> BlockMapping:
        """Move the request's KV to host blocks; returns (device, host) copies to run.

        A hybrid's recurrent state stays in its device slot meanwhile: it is small and
        fixed in size, and the slot pool is sized for max_num_seqs whatever runs, so
        parking it would free nothing another request could use (a swapped request holds
        its slot, so running + swapped hybrids never exceed max_num_seqs)."""
        assert self.host_pool is not None and self.can_swap_out(seq_id)
        table = self.block_tables[seq_id]
        live = self.host_pool.allocate(self.num_blocks_held(seq_id))
        mapping = [(b, live.pop(0)) for b in table if b != FREED_BLOCK]
        slot = self.state_slots.pop(seq_id, None)  # not freed with the blocks (see above)
        self.free(seq_id)  # shared blocks stay on device for their other holders
        if slot is not None:
            self.state_slots[seq_id] = slot
        # Freed entries stay freed on the host, so the table keeps its indices.
        host_ids = iter(h for _, h in mapping)
        self.host_block_tables[seq_id] = [
            FREED_BLOCK if b == FREED_BLOCK else next(host_ids) for b in table
        ]
        return mapping

    def num_blocks_to_swap_in(self, seq_id: str) -> int:
        return sum(b != FREED_BLOCK for b in self.host_block_tables[seq_id])

    def swap_in(self, seq_id: str, num_total_tokens: int) -> BlockMapping | None:
        """Bring a swapped request back into fresh private device blocks with room for
        `num_total_tokens`; returns (host, device) copies, or None when blocks are short."""
        assert self.host_pool is not None
        host = self.host_block_tables[seq_id]
        num_freed = host.count(FREED_BLOCK)
        need = max(len(host), cdiv(num_total_tokens, self.block_size)) - num_freed
        new = self._take(need)
        if new is None:
            return None
        del self.host_block_tables[seq_id]
        self.host_pool.free([b for b in host if b != FREED_BLOCK])
        fresh = iter(new)
        table = [FREED_BLOCK if b == FREED_BLOCK else next(fresh) for b in host]
        self.block_tables[seq_id] = table + list(fresh)
        return [(h, d) for h, d in zip(host, table, strict=True) if h != FREED_BLOCK]

    # --- checks -------------------------------------------------------------------
    def check_integrity(self) -> None:
        """Every block reference is accounted for by exactly one holder."""
        expected: dict[int, int] = dict(self.cache.block_refs())
        for src, _ in self.blocks_to_copy:
            expected[src] = expected.get(src, 0) + 1
        for table in self.block_tables.values():
            for b in table:
                if b != FREED_BLOCK:
                    expected[b] = expected.get(b, 0) + 1
        self.pool.check_integrity(expected)
        if self.host_pool is not None:
            host_expected: dict[int, int] = {}
            for table in self.host_block_tables.values():
                for b in table:
                    if b != FREED_BLOCK:
                        host_expected[b] = host_expected.get(b, 0) + 1
            self.host_pool.check_integrity(host_expected)
        if self.state_pool is not None:
            self.state_pool.check_integrity({s: 1 for s in self.state_slots.values()})
        if self.state_checkpoints is not None:
            pending = [*self._pending_restores.values(), *self._pending_checkpoints.values()]
            self.state_checkpoints.rows.check_integrity(
                self.state_checkpoints.expected_refs(pending)
            )

    def is_idle_clean(self) -> bool:
        """True when no request holds anything: only cache entries keep blocks."""
        return (
            not self.block_tables
            and not self.host_block_tables
            and not self.blocks_to_copy
            and not self.state_slots
            and not self._pending_restores
            and not self._pending_checkpoints
        )
