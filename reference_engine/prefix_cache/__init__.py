"""Prefix caches behind one interface, chosen by `EngineConfig.prefix_caching`."""

from __future__ import annotations

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache.base import MatchResult, PrefixCache, PrefixCacheStats
from reference_engine.prefix_cache.hashed import HashedPrefixCache
from reference_engine.prefix_cache.none import NoPrefixCache
from reference_engine.prefix_cache.radix import RadixPrefixCache

PREFIX_CACHES: dict[str, type[PrefixCache]] = {
    "none": NoPrefixCache,
    "hash": HashedPrefixCache,
    "radix": RadixPrefixCache,
}


def make_prefix_cache(kind: str, pool: BlockPool, block_size: int) -> PrefixCache:
    try:
        cls = PREFIX_CACHES[kind]
    except KeyError:
        raise ValueError(
            f"unknown prefix_caching {kind!r}; choose one of {', '.join(PREFIX_CACHES)}"
        ) from None
    return cls(pool, block_size)


__all__ = [
    "PREFIX_CACHES",
    "HashedPrefixCache",
    "MatchResult",
    "NoPrefixCache",
    "PrefixCache",
    "PrefixCacheStats",
    "RadixPrefixCache",
    "make_prefix_cache",
]
