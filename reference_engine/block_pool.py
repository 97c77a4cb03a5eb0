"""BlockPool: the fixed set of KV-cache block ids, a free list and reference counts.

A block id indexes the first dimension of every layer's K and V tensors
(`[num_blocks, block_size, num_kv_heads, head_dim]`). The pool only does
bookkeeping; the tensors belong to the ModelRunner. Every holder of a block
(a request's block table, a prefix-cache entry) owns one reference, so a block
shared by two requests and the cache has refcount 3 and returns to the free
list only when the last holder lets go.
"""

from __future__ import annotations

from collections import deque


class BlockPoolError(RuntimeError):
    """A bookkeeping bug: double free, freeing a free block, running dry unchecked."""


class BlockPool:
    def __init__(self, num_blocks: int) -> None:
        if num_blocks < 1:
            raise ValueError(f"a block pool needs at least one block, got {num_blocks}")
        self.num_blocks = num_blocks
        self._ref_counts: list[int] = [0] * num_blocks
        # FIFO reuse: a just-freed block is handed out last, which keeps stale
        # data around longest and so surfaces use-after-free bugs in tests.
        self._free: deque[int] = deque(range(num_blocks))

    @property
    def num_free(self) -> int:
        return len(self._free)

    @property
    def num_used(self) -> int:
        return self.num_blocks - len(self._free)

    def ref_count(self, block_id: int) -> int:
        return self._ref_counts[block_id]

    def allocate(self, n: int = 1) -> list[int]:
        """Take `n` free blocks, each with refcount 1. All or nothing."""
        if n > len(self._free):
            raise BlockPoolError(f"asked for {n} blocks, only {len(self._free)} free")
        blocks = [self._free.popleft() for _ in range(n)]
        for b in blocks:
            self._ref_counts[b] = 1
        return blocks

    def incref(self, block_id: int) -> None:
        """Share an allocated block with one more holder (fork, cache hit)."""
        if self._ref_counts[block_id] <= 0:
            raise BlockPoolError(f"block {block_id} is free; a free block cannot be shared")
        self._ref_counts[block_id] += 1

    def decref(self, block_id: int) -> bool:
        """Drop one holder; returns True when the block went back to the free list."""
        count = self._ref_counts[block_id]
        if count <= 0:
            raise BlockPoolError(f"double free of block {block_id}")
        self._ref_counts[block_id] = count - 1
        if count == 1:
            self._free.append(block_id)
            return True
        return False

    def free(self, blocks: list[int]) -> None:
        # Reverse order so a request's tail blocks (least likely to be shared) go back first.
        for b in reversed(blocks):
            self.decref(b)

    def check_integrity(self, expected_refs: dict[int, int] | None = None) -> None:
        """Raise unless the free list and refcounts agree (and match `expected_refs` if given).

        `expected_refs` maps block id -> how many references the caller knows
        about (block tables plus cache entries); every other block must be free.
        """
        free = list(self._free)
        if len(set(free)) != len(free):
            raise BlockPoolError("a block appears twice in the free list")
        free_set = set(free)
        for b, count in enumerate(self._ref_counts):
            if count < 0:
                raise BlockPoolError(f"block {b} has negative refcount {count}")
            if (count == 0) != (b in free_set):
                raise BlockPoolError(
                    f"block {b}: refcount {count} but free-list membership {b in free_set}"
                )
            if expected_refs is not None and count != expected_refs.get(b, 0):
                raise BlockPoolError(
                    f"block {b}: refcount {count}, holders account for {expected_refs.get(b, 0)}"
                )
