"""Recurrent-state checkpoints: what lets a hybrid model (Gated DeltaNet layers) hit the
prefix cache at all.

A cached block holds the attention layers' KV of its tokens, but a linear-attention layer
has no per-token KV: to resume after a prefix of P tokens it needs its state *at P*. So a
hit is usable only up to a position whose state was saved. Which positions are saved:

- the last block boundary a step crosses, for every running hybrid request (prefill chunks
  and decodes alike): when a step computes positions [start, end) and
  B = floor(end / block_size) * block_size > start, the layer snapshots the state at B
  into a checkpoint row (layers/gated_delta_net.py), and the row is filed under the hash of
  the block ending at B (the hashed prefix cache's chained key, so it names the whole
  prefix; the radix cache's hits are cut back by the same key). A decoding request so leaves a checkpoint every block; a prompt prefilled in
  one chunk leaves one, at its last full block.
- nothing in between: a state per block of every prompt would cost far more memory than
  the blocks themselves (a state is [heads, key dim, value dim] per layer).

The cases this serves are the ones that matter in serving: a multi-turn chat whose next
prompt extends the previous conversation, and repeated prompts. A prompt that shares only
part of another's prefill chunk finds no checkpoint there and computes from the start
(vLLM's "align" mode and SGLang's MambaRadixCache make similar trade-offs). Rows are
evicted least recently used first. With the radix cache, a hit is whole blocks only: a
state exists at block boundaries, never inside a block.

Owner: the KVCacheManager. Rows live in the state pools after the running slots.
"""

from __future__ import annotations

from collections import OrderedDict

from reference_engine.block_pool import BlockPool


def num_state_rows(max_num_seqs: int, prefix_caching: str) -> tuple[int, int]:
    """(running slots, checkpoint rows) of a hybrid model's state pools."""
    return max_num_seqs, (2 * max_num_seqs if prefix_caching != "none" else 0)


class StateCheckpoints:
    """Checkpoint rows by block hash, LRU; each row's references live in `rows` (a
    BlockPool over row indices, offset by `first_row` in the state pools)."""

    def __init__(self, num_rows: int, first_row: int) -> None:
        self.rows = BlockPool(num_rows)
        self.first_row = first_row
        self._by_hash: OrderedDict[bytes, int] = OrderedDict()  # hash -> local row

    def take(self) -> int | None:
        """A free row for a new snapshot (evicting the least recently used unpinned one);
        returns its state-pool index, or None when every row is pinned."""
        if self.rows.num_free == 0:
            for key, row in self._by_hash.items():
                if self.rows.ref_count(row) == 1:
                    del self._by_hash[key]
                    self.rows.decref(row)
                    break
        if self.rows.num_free == 0:
            return None
        return self.rows.allocate(1)[0] + self.first_row

    def file(self, key: bytes, row: int) -> None:
        """Index the snapshot now in `row` under `key`; the index takes over its reference."""
        local = row - self.first_row
        if key in self._by_hash:  # same prefix snapshotted twice: keep the first
            self.rows.decref(local)
            return
        self._by_hash[key] = local

    def lookup(self, key: bytes) -> int | None:
        local = self._by_hash.get(key)
        if local is None:
            return None
        self._by_hash.move_to_end(key)
        return local + self.first_row

    def pin(self, row: int) -> None:
        self.rows.incref(row - self.first_row)

    def release(self, row: int) -> None:
        self.rows.decref(row - self.first_row)

    def expected_refs(self, extra: list[int]) -> dict[int, int]:
        """Local row -> references: one per index entry, plus `extra` (pending rows)."""
        refs: dict[int, int] = {}
        for local in [*self._by_hash.values(), *(r - self.first_row for r in extra)]:
            refs[local] = refs.get(local, 0) + 1
        return refs
