"""The interface both prefix caches implement (vLLM's hashed blocks, SGLang's radix tree).

Ownership: a cache entry owns one BlockPool reference on each block it
indexes, exactly like a request's block table does. A block whose only
holders are cache entries is "evictable": evicting those entries returns it
to the free list. So after every request has finished, each used block's
refcount equals the number of cache entries naming it, and evicting all
entries empties the pool; `check_integrity` tests rely on that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass

from reference_engine.block_pool import BlockPool


@dataclass(slots=True)
class MatchResult:
    """The longest cached prefix of a token sequence.

    `blocks` are the full blocks among the first `num_cached_tokens` tokens, to be
    shared. When the match ends inside a block (radix only), `partial_block` is the
    cached block holding its last `num_cached_tokens % block_size` tokens: it is
    never shared (its owner may still write its later slots); the request copies
    those leading slots into a fresh block of its own (copy-on-write at admission).
    `handle` is the cache's own position marker (a radix node) passed back to
    `lock` / `unlock`; None for caches that need no locking.
    """

    num_cached_tokens: int
    blocks: list[int]
    handle: object | None = None
    partial_block: int | None = None
    # Hybrid models: the recurrent-state checkpoint row at the match's end (state_checkpoints.py).
    state_row: int | None = None


@dataclass(slots=True)
class PrefixCacheStats:
    """Counted once per admitted request, not per admission attempt."""

    num_queries: int = 0
    num_query_tokens: int = 0
    num_hit_tokens: int = 0
    # Hits that ended inside a block, so one block was copied (token-exact radix only).
    num_partial_block_hits: int = 0

    def record(
        self, num_query_tokens: int, num_hit_tokens: int, partial_block: bool = False
    ) -> None:
        self.num_queries += 1
        self.num_query_tokens += num_query_tokens
        self.num_hit_tokens += num_hit_tokens
        self.num_partial_block_hits += partial_block

    @property
    def hit_rate(self) -> float:
        return self.num_hit_tokens / self.num_query_tokens if self.num_query_tokens else 0.0


class PrefixCache(ABC):
    # lock/unlock default to no-ops (noqa B027): hashed blocks are already
    # protected by the requests' own block references.
    def __init__(self, pool: BlockPool, block_size: int) -> None:
        self.pool = pool
        self.block_size = block_size
        self.stats = PrefixCacheStats()
        # Told (chained hash of every token up to the block's end, block id) before an
        # evicted full block's reference is dropped: a KV tier keeps it (kv_tiers/).
        self.evict_listener: Callable[[bytes, int], None] | None = None

    @abstractmethod
    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        """Longest cached prefix of `token_ids`. Takes no references: see `lock`."""

    @abstractmethod
    def cache_blocks(
        self,
        token_ids: Sequence[int],
        blocks: MutableSequence[int],
        num_tokens: int,
        handle: object | None,
    ) -> object | None:
        """Index the first `num_tokens` tokens of a request whose KV lives in `blocks`
        (its block table, which an implementation may edit to share cached duplicates
        of its full blocks, moving the references accordingly). The hashed cache
        indexes full blocks only; the radix cache also the partial last block.

        Called after every step with the request's computed-token count, so it
        must be cheap when little changed. `handle` is what the previous call
        (or the admission match) returned for this request; the return value
        replaces it.
        """

    def lock(self, handle: object | None) -> None:  # noqa: B027
        """Pin the entries on the path to `handle` while a request uses them."""

    def unlock(self, handle: object | None) -> None:  # noqa: B027
        """Undo one `lock`; the entries become evictable once nobody pins them."""

    @abstractmethod
    def evict(self, num_blocks: int) -> int:
        """Drop least-recently-used evictable entries until `num_blocks` blocks are free again.

        Returns how many blocks went back to the pool (may be fewer).
        """

    @abstractmethod
    def num_evictable_blocks(self) -> int:
        """How many blocks `evict` could return to the pool right now."""

    @abstractmethod
    def block_refs(self) -> dict[int, int]:
        """Block id -> number of references this cache holds (for integrity checks)."""

    def clear(self) -> int:
        """Evict everything evictable; returns blocks freed."""
        return self.evict(self.pool.num_blocks)
