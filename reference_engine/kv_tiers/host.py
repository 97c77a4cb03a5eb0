"""HostTier: KV blocks in host memory, LRU, a fixed number of entries.

HiCache's host pool and vLLM's CPU offloading play this part. Entries are the encoded
bytes (entry.py), so the host copy is checked like the disk copy when promoted.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(slots=True)
class TierStats:
    lookups: int = 0
    hits: int = 0
    stored: int = 0
    evicted: int = 0
    corrupt: int = 0  # entries found damaged and dropped

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0


class HostTier:
    name = "host"

    def __init__(self, capacity_blocks: int) -> None:
        if capacity_blocks < 1:
            raise ValueError(f"the host tier needs at least one block, got {capacity_blocks}")
        self.capacity = capacity_blocks
        self._entries: OrderedDict[bytes, bytes] = OrderedDict()
        self.stats = TierStats()

    def __contains__(self, key: bytes) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes) -> bytes | None:
        self.stats.lookups += 1
        data = self._entries.get(key)
        if data is not None:
            self.stats.hits += 1
            self._entries.move_to_end(key)
        return data

    def put(self, key: bytes, data: bytes) -> list[tuple[bytes, bytes]]:
        """Store; returns the entries pushed out to make room (for the next tier down)."""
        if key in self._entries:
            self._entries.move_to_end(key)
            return []
        self._entries[key] = data
        self.stats.stored += 1
        out = []
        while len(self._entries) > self.capacity:
            out.append(self._entries.popitem(last=False))
            self.stats.evicted += 1
        return out

    def drop(self, key: bytes) -> None:
        if self._entries.pop(key, None) is not None:
            self.stats.corrupt += 1
