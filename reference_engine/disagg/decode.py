"""DecodeRole: the decode instance's side of disaggregation. It owns the receiving holders.

For a request carrying a prefill's `kv_transfer_params`, before the request reaches
the engine: handshake with the sender, allocate blocks here (a holder in the
KVCacheManager, `kv-recv:<request id>`), pull every layer's K/V, write them into the
blocks and index them in the prefix cache, and tell the sender it may unpin. The
request then enters the engine as usual and is admitted as a prefix-cache hit of what
was transferred (the last prompt token is always computed here: its logits give the
first token). The holder keeps the blocks pinned until that admission, then a request
hook drops it on the engine thread.

Whatever goes wrong in a transfer (a dead or refusing sender, a layout mismatch, no
room for the blocks, a timeout) frees the holder, aborts the sender's side and lets the
request compute its prompt here: slower, never wrong. A client that leaves mid-transfer
cancels the transfer the same way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.disagg.connector import KVReceiver
from reference_engine.disagg.kv_io import scatter_blocks
from reference_engine.disagg.transfer import KVLayout, RemoteKV, TransferError

if TYPE_CHECKING:
    from reference_engine.engine import Engine
    from reference_engine.outputs import RequestOutput
    from reference_engine.server.async_engine import AsyncEngine

log = logging.getLogger("atlas.disagg")


@dataclass(slots=True)
class ReceiveCounters:
    received: int = 0
    failed: int = 0  # fell back to computing the prompt here
    cancelled: int = 0  # the client left mid-transfer
    tokens: int = 0
    bytes: int = 0
    seconds: float = 0.0


class DecodeRole:
    role = "decode"

    def __init__(self, engine: AsyncEngine, receiver: KVReceiver) -> None:
        if engine.engine.config.prefix_caching == "none":
            raise ValueError("a decode instance needs prefix caching (hash or radix): "
                             "transferred KV enters the engine as a prefix-cache hit")  # fmt: skip
        self.engine = engine
        self.receiver = receiver
        self.layout = KVLayout.of(engine.engine)
        self.counters = ReceiveCounters()
        self.last_error: str | None = None

    def close(self) -> None:
        self.receiver.close()

    async def receive(self, request_id: str, token_ids: list[int], params: dict[str, Any]) -> Any:
        """Pull the remote KV into this engine's prefix cache, pinned for the request.
        Returns the hook that unpins after admission, or None when the request must
        compute its prompt itself. Raises ValueError for malformed params (a 400)."""
        remote = RemoteKV.from_params(params)
        holder = f"kv-recv:{request_id}"
        start = time.monotonic()
        try:
            num_bytes, num_tokens = await self._transfer(remote, holder, token_ids)
        except asyncio.CancelledError:
            self.counters.cancelled += 1
            self._release_soon(holder)
            raise
        except (TransferError, OSError, ValueError, KeyError, TypeError) as exc:
            self.counters.failed += 1
            self.last_error = str(exc)
            log.warning("KV transfer for %s failed, computing the prompt here: %s", request_id, exc)
            self._release_soon(holder)
            return None
        self.counters.received += 1
        self.counters.tokens += num_tokens
        self.counters.bytes += num_bytes
        self.counters.seconds += time.monotonic() - start

        def unpin(engine: Engine, out: RequestOutput | None) -> bool:
            engine.kv.free(holder)  # admitted (it holds its own references now) or gone
            return True

        return unpin

    async def _transfer(
        self, remote: RemoteKV, holder: str, token_ids: list[int]
    ) -> tuple[int, int]:
        async with self.receiver.session(remote) as session:
            info = await session.describe()
            self.layout.check_same(info.layout)
            n = len(info.token_ids)
            if info.token_ids != token_ids[:n]:
                raise TransferError(
                    "the transferred tokens are not a prefix of this request's prompt"
                )
            if n == 0:
                await session.done()
                return 0, 0
            if not await self.engine.call(lambda e: e.kv.allocate_slots(holder, n)):
                raise TransferError(f"no room for {n} transferred tokens' KV blocks")
            layers = await session.pull()
            await self.engine.call(lambda e: self._install(e, holder, info.token_ids, layers))
            await session.done()
            return sum(t.numel() * t.element_size() for t in layers), n

    @staticmethod
    def _install(
        engine: Engine, holder: str, token_ids: list[int], layers: list[torch.Tensor]
    ) -> None:
        """Engine thread: write the KV into the holder's blocks, then index them."""
        blocks = engine.kv.block_tables[holder]
        scatter_blocks(engine.runner, blocks, layers)
        engine.kv.cache_computed(holder, token_ids, len(token_ids))

    def _release_soon(self, holder: str) -> None:
        try:
            self.engine.submit_call(lambda e: e.kv.free(holder))
        except Exception:  # the engine is gone, and its blocks with it
            log.debug("could not release %s", holder, exc_info=True)

    def metric_samples(self) -> list[tuple[str, str, str, list[tuple[str, float]]]]:
        c = self.counters
        return [
            ("atlas_kv_transfers_received_total", "counter", "Requests whose prompt KV came from a prefill instance, by outcome.",
             [('{outcome="received"}', c.received), ('{outcome="failed"}', c.failed), ('{outcome="cancelled"}', c.cancelled)]),
            ("atlas_kv_transfer_tokens_received_total", "counter", "Prompt tokens whose KV was transferred in.",
             [("", c.tokens)]),
            ("atlas_kv_transfer_bytes_received_total", "counter", "KV bytes received.", [("", c.bytes)]),
            ("atlas_kv_transfer_seconds_total", "counter", "Time spent in successful transfers.", [("", c.seconds)]),
        ]  # fmt: skip
