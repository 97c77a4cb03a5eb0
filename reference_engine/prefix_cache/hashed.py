"""vLLM-style prefix caching: full blocks keyed by a chained hash of their tokens.

Block i's key hashes (key of block i-1, tokens of block i), so equal keys
mean equal whole prefixes, not just equal blocks. Only full blocks are
cached: a partial block is still being written. Entries whose block nobody
else holds are evicted least recently used first.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache.base import MatchResult, PrefixCache

BlockHash = bytes
_ROOT_HASH: BlockHash = b"atlas-prefix-root"


def hash_block(parent: BlockHash, tokens: Sequence[int]) -> BlockHash:
    # A cryptographic digest, so a collision (= serving another prompt's KV) is not a real risk.
    h = hashlib.blake2b(parent, digest_size=16)
    h.update(b",".join(str(t).encode() for t in tokens))
    return h.digest()


@dataclass(slots=True)
class _HashCursor:
    """Per-request progress, so each step hashes only the newly filled blocks."""

    num_hashed_blocks: int = 0
    last_hash: BlockHash = _ROOT_HASH


class HashedPrefixCache(PrefixCache):
    def __init__(self, pool: BlockPool, block_size: int) -> None:
        super().__init__(pool, block_size)
        # hash -> block id, least recently used first.
        self._table: OrderedDict[BlockHash, int] = OrderedDict()

    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        bs = self.block_size
        blocks: list[int] = []
        hashes: list[BlockHash] = []
        parent = _ROOT_HASH
        for i in range(len(token_ids) // bs):
            key = hash_block(parent, token_ids[i * bs : (i + 1) * bs])
            block = self._table.get(key)
            if block is None:
                break
            blocks.append(block)
            hashes.append(key)
            parent = key
        self._touch(hashes)
        cursor = _HashCursor(len(blocks), parent)
        return MatchResult(len(blocks) * bs, blocks, cursor)

    def _touch(self, hashes: list[BlockHash]) -> None:
        # Tail first, so a prefix's first block is the most recent: evicting a
        # head block would strand every block chained after it.
        for key in reversed(hashes):
            self._table.move_to_end(key)

    def cache_blocks(
        self,
        token_ids: Sequence[int],
        blocks: MutableSequence[int],
        num_tokens: int,
        handle: object | None,
    ) -> object | None:
        cursor = handle if isinstance(handle, _HashCursor) else _HashCursor()
        bs = self.block_size
        new_hashes: list[BlockHash] = []
        for i in range(cursor.num_hashed_blocks, num_tokens // bs):
            key = hash_block(cursor.last_hash, token_ids[i * bs : (i + 1) * bs])
            if key not in self._table:
                self._table[key] = blocks[i]
                self.pool.incref(blocks[i])
            # else: another request computed the same prefix in the same step;
            # keep the first copy, this request's duplicate block stays private.
            new_hashes.append(key)
            cursor.last_hash = key
            cursor.num_hashed_blocks = i + 1
        self._touch(new_hashes)
        return cursor

    def evict(self, num_blocks: int) -> int:
        freed = 0
        for key in list(self._table):
            if freed >= num_blocks:
                break
            block = self._table[key]
            if self.pool.ref_count(block) == 1:  # only this entry holds it
                if self.evict_listener is not None:
                    self.evict_listener(key, block)
                del self._table[key]
                self.pool.decref(block)
                freed += 1
        return freed

    def num_evictable_blocks(self) -> int:
        return sum(1 for b in self._table.values() if self.pool.ref_count(b) == 1)

    def block_refs(self) -> dict[int, int]:
        refs: dict[int, int] = {}
        for b in self._table.values():
            refs[b] = refs.get(b, 0) + 1
        return refs

    def __len__(self) -> int:
        return len(self._table)
