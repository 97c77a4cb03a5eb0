"""KVTierHierarchy: moves prefix-cache blocks between the device, host memory and disk.

Owner: the Engine; everything here runs on the engine thread, between or inside steps.
With async scheduling a forward pass may still be in flight on the worker thread then
(an eviction while the next step is scheduled, a promotion when a request arrives as the
last step of the one before finishes): every copy to or from device KV first waits for
it (`_device_kv`), since that forward may still write the block being demoted, or write
a freed block handed to a promotion. Steps that copy nothing keep their overlap.

- Demotion. The prefix cache calls `on_evict(key, block)` for every block it evicts;
  with write-back, that is when the block's KV is copied to the host tier, and the host
  tier's own evictions go to disk. With write-through, every full block a request
  computes is copied to the host tier (and to disk) right after the step that computed
  it, so an eviction costs nothing and the disk holds everything for a restart.
- Promotion. When a request arrives (`Engine.add_request`, so while it waits for
  admission), the full blocks of its prompt past the device cache's own match are
  looked up tier by tier, in order, until the first miss; the ones found are copied
  into fresh device blocks and indexed in the prefix cache, where admission finds them
  as an ordinary hit. A disk hit is also put back in the host tier.
- Checks. Every entry is decoded with its checksum and layout (entry.py); a bad one is
  dropped and counted, and the request computes that block and everything after it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from reference_engine.disagg.kv_io import gather_blocks, scatter_blocks
from reference_engine.disagg.transfer import KVLayout
from reference_engine.kv_cache_manager import FREED_BLOCK
from reference_engine.kv_tiers.disk import DiskTier
from reference_engine.kv_tiers.entry import EntryError, decode_entry, encode_entry
from reference_engine.kv_tiers.host import HostTier
from reference_engine.kv_tiers.shared import SharedTier, SharedTierError
from reference_engine.prefix_cache.hashed import _ROOT_HASH, hash_block

if TYPE_CHECKING:
    from reference_engine.engine import Engine
    from reference_engine.sampling_params import SamplingParams
    from reference_engine.scheduler import SchedulerOutput

POLICIES = ("write_back", "write_through")


@dataclass(frozen=True, slots=True)
class TierConfig:
    host_blocks: int = 0  # 0: no host tier
    disk_dir: str | None = None  # None: no disk tier
    disk_blocks: int = 4096
    policy: str = "write_back"
    shared_url: str | None = None  # redis://host:port/db of a Redis / Valkey server


def make_kv_tiers(engine: Engine) -> KVTierHierarchy | None:
    """The engine's tiers from its EngineConfig (kv_host_blocks, kv_disk_dir, ...)."""
    from reference_engine.config import ConfigError

    cfg = engine.config
    if not cfg.kv_host_blocks and not cfg.kv_disk_dir and not cfg.kv_shared_url:
        return None
    if engine.kv.state_pool is not None:
        raise ConfigError("KV tiers do not keep a hybrid model's recurrent state snapshots")
    if cfg.kv_tier_policy == "write_through" and getattr(engine, "overlap", None) is not None:
        # The overlapped step indexes blocks before their forward pass has written them.
        raise ConfigError("kv_tier_policy write_through with async scheduling is not implemented")
    tiers = TierConfig(
        cfg.kv_host_blocks,
        cfg.kv_disk_dir,
        cfg.kv_disk_blocks,
        cfg.kv_tier_policy,
        cfg.kv_shared_url,
    )
    try:
        return KVTierHierarchy(tiers, engine)
    except (ValueError, SharedTierError) as exc:
        raise ConfigError(str(exc)) from None


def chain_keys(token_ids: Sequence[int], block_size: int, num_blocks: int) -> list[bytes]:
    """The key of each of the first `num_blocks` full blocks: a hash of every token up to
    the block's end (the hashed prefix cache's chained hash)."""
    keys, parent = [], _ROOT_HASH
    for i in range(num_blocks):
        parent = hash_block(parent, token_ids[i * block_size : (i + 1) * block_size])
        keys.append(parent)
    return keys


@dataclass(slots=True)
class _Cursor:
    """Write-through progress of one sequence: blocks already written, last chain key."""

    seq: object  # the Sequence itself: a request id reused later must not inherit the chain
    num_blocks: int = 0
    last_key: bytes = _ROOT_HASH


class KVTierHierarchy:
    def __init__(self, cfg: TierConfig, engine: Engine) -> None:
        if cfg.policy not in POLICIES:
            raise ValueError(
                f"the KV tier policy must be write_back or write_through, got {cfg.policy!r}"
            )
        self.cfg = cfg
        self.engine = engine
        self.block_size = engine.block_size
        self.layout = repr(KVLayout.of(engine).to_json())
        self.host = HostTier(cfg.host_blocks) if cfg.host_blocks > 0 else None
        self.disk = DiskTier(Path(cfg.disk_dir), cfg.disk_blocks) if cfg.disk_dir else None
        self.shared = SharedTier(cfg.shared_url, self.layout) if cfg.shared_url else None
        self.tiers: list[HostTier | DiskTier | SharedTier] = [
            t for t in (self.host, self.disk, self.shared) if t is not None
        ]
        if not self.tiers:
            raise ValueError("a KV tier hierarchy needs a host tier, a disk tier or both")
        self._cursors: dict[str, _Cursor] = {}
        self._holders = itertools.count()
        # The tiers are read by the server's prefetch thread and written by the engine
        # thread (demotion, write-through); one lock keeps their indexes consistent.
        self._lock = threading.RLock()
        self._prefetched: dict[str, None] = {}  # request ids promoted ahead of add_request
        self.num_demoted = 0  # blocks copied down on eviction (write-back)
        self.num_written_through = 0
        self.num_promoted = 0  # blocks copied back to the device
        engine.kv.cache.evict_listener = self.on_evict

    @staticmethod
    def wants(params: SamplingParams, lora_request: object | None) -> bool:
        """Whether a request may take cached blocks at all (as the scheduler decides)."""
        return lora_request is None and params.prompt_logprobs is None and not params.kv_eviction

    # --- storing ---------------------------------------------------------------------------
    def _device_kv(self) -> None:
        """Order a copy touching device KV after the forward pass in flight, if any."""
        if self.engine.overlap is not None:
            self.engine.overlap.wait_forward()

    def _encode(self, block: int) -> bytes:
        self._device_kv()
        layers = gather_blocks(self.engine.runner, [block])
        return encode_entry(layers, self.layout)

    def _store(self, key: bytes, data: bytes, through: bool) -> None:
        with self._lock:
            self._store_locked(key, data, through)

    def _store_locked(self, key: bytes, data: bytes, through: bool) -> None:
        if self.shared is not None:
            self.shared.put(key, data)  # every block stored goes where other instances look
        if self.host is None:
            if self.disk is not None:
                self.disk.put(key, data)
            return
        for old_key, old in self.host.put(key, data):
            if self.disk is not None and not through:
                self.disk.put(old_key, old)  # write-back: the host's overflow goes down
        if through and self.disk is not None:
            self.disk.put(key, data)

    def _stored(self, key: bytes) -> bool:
        with self._lock:
            return any(key in tier for tier in self.tiers)

    def on_evict(self, key: bytes, block: int) -> None:
        """The device cache is dropping `block` (its KV is intact until freed)."""
        if self._stored(key):
            return  # written through already, or demoted earlier and promoted back
        self._store(key, self._encode(block), through=False)
        self.num_demoted += 1

    def after_step(self, out: SchedulerOutput) -> None:
        """Write-through: copy every newly computed full block down the tiers."""
        if self.cfg.policy != "write_through":
            return
        kv, bs = self.engine.kv, self.block_size
        for item in out.scheduled:
            seq = item.seq
            table = kv.block_tables.get(seq.seq_id)
            if table is None or seq.lora_name is not None or seq.params.kv_eviction:
                continue  # the prefix cache does not take these either
            if seq.multi_modal is not None:
                continue  # image tokens' KV is keyed by image content, which tiers do not hash
            cursor = self._cursors.get(seq.seq_id)
            if cursor is None or cursor.seq is not seq:
                cursor = self._cursors[seq.seq_id] = _Cursor(seq)
            # Accepted speculative drafts are computed tokens not appended yet (as in
            # Scheduler.on_step_done); a block freed out of a sliding window has no KV left.
            tokens = seq.all_token_ids + list(getattr(seq, "spec_token_ids", None) or [])
            last = min(seq.num_computed_tokens, len(tokens)) // bs
            for i in range(cursor.num_blocks, min(last, len(table))):
                key = hash_block(cursor.last_key, tokens[i * bs : (i + 1) * bs])
                if table[i] != FREED_BLOCK and not self._stored(key):
                    self._store(key, self._encode(table[i]), through=True)
                    self.num_written_through += 1
                cursor.num_blocks, cursor.last_key = i + 1, key
        for seq_id in [s for s in self._cursors if s not in kv.block_tables]:
            del self._cursors[seq_id]

    # --- promotion --------------------------------------------------------------------------
    def _load(self, key: bytes) -> list[torch.Tensor] | None:
        for tier in self.tiers:
            with self._lock:
                data = tier.get(key)
            if data is None:
                continue
            try:
                layers = decode_entry(data, self.layout)
            except EntryError:
                with self._lock:
                    tier.drop(key)  # never used: recomputed from here on
                return None
            if tier is not self.host and self.host is not None:
                with self._lock:
                    for old_key, old in self.host.put(key, data):  # closer for the next hit
                        if self.disk is not None and self.cfg.policy == "write_back":
                            self.disk.put(old_key, old)
            return layers
        return None

    def plan(self, token_ids: Sequence[int]) -> tuple[int, list[bytes]]:
        """Engine thread: how many of the prompt's full blocks the device already holds, and
        the keys of the rest (the last prompt token is always computed)."""
        bs = self.block_size
        usable = token_ids[: len(token_ids) - 1]
        have = self._device_blocks(usable)
        return have, chain_keys(usable, bs, len(usable) // bs)[have:]

    def _device_blocks(self, usable: Sequence[int]) -> int:
        match = self.engine.kv.cache.match_prefix(usable)
        return match.num_cached_tokens // self.block_size

    def fetch(self, keys: list[bytes]) -> list[list[torch.Tensor]]:
        """Any thread: read and check the blocks tier by tier, up to the first miss. The
        server runs this off the engine thread while the request waits (prefetch.py)."""
        loaded: list[list[torch.Tensor]] = []
        for key in keys:
            layers = self._load(key)
            if layers is None:
                break
            loaded.append(layers)
        return loaded

    def install(
        self,
        request_id: str | None,
        token_ids: Sequence[int],
        have: int,
        loaded: list[list[torch.Tensor]],
    ) -> int:
        """Engine thread: copy fetched blocks into fresh device blocks and index them in the
        prefix cache, where admission finds them as an ordinary hit. Returns how many."""
        if request_id is not None:
            self._prefetched[request_id] = None  # Engine.add_request need not look again
            while len(self._prefetched) > 4096:  # requests refused after their prefetch
                self._prefetched.pop(next(iter(self._prefetched)))
        kv, bs = self.engine.kv, self.block_size
        usable = list(token_ids[: len(token_ids) - 1])
        now = self._device_blocks(usable)
        if now < have:
            return 0  # evicted meanwhile: the fetched blocks no longer join a cached prefix
        loaded = loaded[now - have :]
        if not loaded:
            return 0
        match = kv.cache.match_prefix(usable[: now * bs])
        if match.partial_block is not None:
            match = kv.match_whole_blocks(usable, match)
        holder = f"kv-tier:{next(self._holders)}"
        num_tokens = (now + len(loaded)) * bs
        if not kv.allocate_slots(holder, num_tokens, match):
            return 0  # the device is full of pinned blocks: compute instead
        fresh = kv.block_tables[holder][now:]
        layers = [torch.cat([entry[j] for entry in loaded], dim=1) for j in range(len(loaded[0]))]
        self._device_kv()
        scatter_blocks(self.engine.runner, fresh, layers)
        kv.cache_computed(holder, usable, num_tokens)
        kv.free(holder)  # the cache's own references keep them; admission pins them again
        self.num_promoted += len(loaded)
        return len(loaded)

    def promote(self, request_id: str, token_ids: Sequence[int]) -> int:
        """Engine thread, when a request is added: bring the prompt's tiered blocks back,
        unless the server already prefetched them. Returns how many blocks came back."""
        if request_id in self._prefetched:
            del self._prefetched[request_id]
            return 0
        have, keys = self.plan(token_ids)
        return self.install(None, token_ids, have, self.fetch(keys)) if keys else 0

    # --- /metrics ---------------------------------------------------------------------------
    def metric_samples(self) -> list[tuple[str, str, str, list[tuple[str, float]]]]:
        def per_tier(attr: str) -> list[tuple[str, float]]:
            return [(f'{{tier="{t.name}"}}', float(getattr(t.stats, attr))) for t in self.tiers]

        return [
            ("atlas_kv_tier_capacity_blocks", "gauge", "KV blocks each tier holds at most.",
             [(f'{{tier="{t.name}"}}', t.capacity) for t in self.tiers]),
            ("atlas_kv_tier_used_blocks", "gauge", "KV blocks in each tier.",
             [(f'{{tier="{t.name}"}}', len(t)) for t in self.tiers]),
            ("atlas_kv_tier_hit_rate", "gauge", "Lookups that found their block, per tier.",
             [(f'{{tier="{t.name}"}}', t.stats.hit_rate) for t in self.tiers]),
            ("atlas_kv_tier_lookups_total", "counter", "Block lookups per tier.", per_tier("lookups")),
            ("atlas_kv_tier_hits_total", "counter", "Block lookups that hit, per tier.", per_tier("hits")),
            ("atlas_kv_tier_corrupt_total", "counter", "Entries found damaged and dropped.", per_tier("corrupt")),
            ("atlas_kv_tier_evicted_total", "counter", "Entries pushed out of each tier.", per_tier("evicted")),
            ("atlas_kv_tier_shared_errors_total", "counter",
             "Shared-tier operations that failed (server unreachable): misses, not failures.",
             [("", self.shared.errors if self.shared is not None else 0)]),
            ("atlas_kv_tier_promoted_blocks_total", "counter", "Blocks copied back to the device.",
             [("", self.num_promoted)]),
            ("atlas_kv_tier_demoted_blocks_total", "counter", "Blocks copied down on eviction (write-back).",
             [("", self.num_demoted)]),
            ("atlas_kv_tier_written_through_blocks_total", "counter", "Blocks copied down as computed.",
             [("", self.num_written_through)]),
        ]  # fmt: skip
