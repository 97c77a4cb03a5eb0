"""Hierarchical KV cache: prefix-cache blocks live on in host memory and on disk.

    device prefix cache --evict--> HostTier (bytes, LRU) --evict--> DiskTier (files, LRU)
           ^            '--store--> SharedTier (Redis / Valkey, other instances too)
           '------------------ promote on a prefix hit (host, disk, shared) --'

Entries are whole KV blocks keyed by the chained hash of every token up to the end of
the block (the hashed prefix cache's key), so a key names a prefix, not just a block,
and any engine with the same model can use any entry: a restarted one reads the disk
tier back. Each entry carries a checksum and the KV layout; a corrupted or truncated
one is detected, dropped and recomputed, never used.

`KVTierHierarchy` (hierarchy.py) owns the tiers and runs on the engine thread.
"""

from reference_engine.kv_tiers.disk import DiskTier
from reference_engine.kv_tiers.entry import EntryError, decode_entry, encode_entry
from reference_engine.kv_tiers.hierarchy import KVTierHierarchy, TierConfig
from reference_engine.kv_tiers.host import HostTier
from reference_engine.kv_tiers.shared import SharedTier, SharedTierError

__all__ = [
    "DiskTier",
    "EntryError",
    "HostTier",
    "KVTierHierarchy",
    "SharedTier",
    "SharedTierError",
    "TierConfig",
    "decode_entry",
    "encode_entry",
]
