"""DiskTier: KV blocks as files in a directory, LRU, a fixed number of entries.

One file per entry, named by its key; written to a temporary name and renamed, so a
crash never leaves a half-written entry under a real name. A new engine on the same
directory indexes the files already there (oldest access first), so the tier outlives
a restart. LMCache's local disk backend and HiCache's storage layer play this part.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from pathlib import Path

from reference_engine.kv_tiers.host import TierStats

SUFFIX = ".kv"


class DiskTier:
    name = "disk"

    def __init__(self, directory: Path, capacity_blocks: int) -> None:
        if capacity_blocks < 1:
            raise ValueError(f"the disk tier needs at least one block, got {capacity_blocks}")
        self.directory = Path(directory)
        self.capacity = capacity_blocks
        self.stats = TierStats()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            files = sorted(self.directory.glob("*" + SUFFIX), key=lambda p: p.stat().st_mtime)
        except OSError as exc:
            raise ValueError(f"cannot use {self.directory} as the KV disk tier: {exc}") from None
        self._index: OrderedDict[bytes, Path] = OrderedDict()
        for path in files:
            with contextlib.suppress(ValueError):
                self._index[bytes.fromhex(path.stem)] = path
        self._trim()

    def __contains__(self, key: bytes) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def get(self, key: bytes) -> bytes | None:
        self.stats.lookups += 1
        path = self._index.get(key)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            self._index.pop(key, None)
            return None
        self.stats.hits += 1
        self._index.move_to_end(key)
        with contextlib.suppress(OSError):
            os.utime(path)  # the LRU order survives a restart
        return data

    def put(self, key: bytes, data: bytes) -> None:
        if key in self._index:
            self._index.move_to_end(key)
            return
        path = self.directory / (key.hex() + SUFFIX)
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            return  # a full or read-only disk loses the entry, not the request
        self._index[key] = path
        self.stats.stored += 1
        self._trim()

    def drop(self, key: bytes) -> None:
        path = self._index.pop(key, None)
        if path is not None:
            self.stats.corrupt += 1
            with contextlib.suppress(OSError):
                path.unlink()

    def _trim(self) -> None:
        while len(self._index) > self.capacity:
            _, path = self._index.popitem(last=False)
            self.stats.evicted += 1
            with contextlib.suppress(OSError):
                path.unlink()
