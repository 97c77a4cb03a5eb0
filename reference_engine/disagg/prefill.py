"""PrefillRole: the prefill instance's side of disaggregation. It owns the pinned transfers.

A request marked `do_remote_decode` runs with max_tokens=1 (its one sampled token is
thrown away: the decode instance samples the first token itself, so seeded sampling
gives the same tokens as a colocated run). When it finishes, a request hook, on the
engine thread before any other step can evict anything, pins the cached blocks of its
prompt under a transfer id. They stay pinned until the decode side says done or abort,
or until the lease ends (a decode instance that died never says either).

Thread use: the hook runs on the engine thread; describe / read / release / expire on
the sender's thread (block reads and unpins go to the engine thread as calls); the
response parameters are read on the event loop. `_pending` is guarded by a lock.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.disagg.connector import KVSender
from reference_engine.disagg.kv_io import gather_blocks
from reference_engine.disagg.transfer import KVLayout, RemoteKV, TransferError, TransferInfo

if TYPE_CHECKING:
    from reference_engine.engine import Engine
    from reference_engine.outputs import RequestOutput
    from reference_engine.sampling_params import SamplingParams
    from reference_engine.server.async_engine import AsyncEngine


@dataclass(slots=True)
class PendingTransfer:
    transfer_id: str
    request_id: str
    holder_id: str  # the KVCacheManager holder that pins the blocks
    token_ids: list[int]
    block_ids: list[int]
    deadline: float  # time.monotonic() after which the pin is dropped


@dataclass(slots=True)
class TransferCounters:
    pinned: int = 0
    sent: int = 0  # released after the receiver said done
    aborted: int = 0  # released after the receiver said abort
    expired: int = 0  # released when the lease ran out
    bytes_sent: int = 0


class PrefillRole:
    role = "prefill"

    def __init__(
        self, engine: AsyncEngine, lease_s: float = 60.0, call_timeout_s: float = 30.0
    ) -> None:
        self.engine = engine
        self.layout = KVLayout.of(engine.engine)
        self.engine_id = uuid.uuid4().hex
        self.lease_s = lease_s
        self.call_timeout_s = call_timeout_s
        self.host = "127.0.0.1"  # where decode instances dial: set by `attach`
        self.port = 0
        self.sender: KVSender | None = None
        self.counters = TransferCounters()
        self._pending: dict[str, PendingTransfer] = {}
        self._by_request: dict[str, str] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def attach(self, sender: KVSender, advertised_host: str) -> None:
        """The listening sender that serves this role; its address goes into responses."""
        self.sender = sender
        self.host, self.port = advertised_host, sender.port

    def close(self) -> None:
        if self.sender is not None:
            self.sender.stop()

    # --- the request (event loop, engine thread) -------------------------------------------
    @staticmethod
    def prefill_params(params: SamplingParams) -> SamplingParams:
        """Compute the prompt and stop: one sample, no stop conditions to check."""
        return dataclasses.replace(params, n=1, max_tokens=1, min_tokens=0, logprobs=None)

    def hook(self, request_id: str) -> Any:
        """The engine-thread hook that pins the request's prompt blocks once it finished."""

        def on_output(engine: Engine, out: RequestOutput | None) -> bool:
            if out is not None and out.finished:
                self._pin(engine, request_id, out.prompt_token_ids)
            return out is None or out.finished

        return on_output

    def _pin(self, engine: Engine, request_id: str, token_ids: list[int]) -> None:
        transfer_id = f"{self.engine_id[:8]}-{next(self._ids)}"
        holder = f"kv-send:{transfer_id}"
        num_tokens = engine.kv.pin_cached_prefix(holder, token_ids)
        blocks = list(engine.kv.block_tables[holder])
        pending = PendingTransfer(
            transfer_id, request_id, holder, list(token_ids[:num_tokens]), blocks,
            time.monotonic() + self.lease_s,
        )  # fmt: skip
        with self._lock:
            self._pending[transfer_id] = pending
            self._by_request[request_id] = transfer_id
            self.counters.pinned += 1

    def response_params(self, request_id: str) -> dict[str, Any] | None:
        """The prefill response's kv_transfer_params (None: nothing was pinned)."""
        with self._lock:
            tid = self._by_request.pop(request_id, None)
            pending = self._pending.get(tid) if tid is not None else None
        if pending is None:
            return None
        remote = RemoteKV(self.engine_id, self.host, self.port, tid or "", len(pending.token_ids))
        return remote.to_params()

    @property
    def num_pinned(self) -> int:
        with self._lock:
            return len(self._pending)

    # --- KVSource (the sender's thread) ----------------------------------------------------
    def _get(self, transfer_id: str) -> PendingTransfer:
        with self._lock:
            pending = self._pending.get(transfer_id)
        if pending is None:
            raise TransferError(f"unknown or expired transfer {transfer_id!r}")
        return pending

    def describe(self, transfer_id: str) -> TransferInfo:
        pending = self._get(transfer_id)
        return TransferInfo(pending.token_ids, self.layout.to_json(), len(pending.block_ids))

    def read(self, transfer_id: str) -> list[torch.Tensor]:
        pending = self._get(transfer_id)
        blocks = pending.block_ids

        def gather(engine: Engine) -> list[torch.Tensor]:
            if engine.kv.block_tables.get(pending.holder_id) != blocks:
                raise TransferError(f"transfer {transfer_id!r} was released meanwhile")
            return gather_blocks(engine.runner, blocks)

        layers = self.engine.submit_call(gather).result(self.call_timeout_s)
        with self._lock:
            self.counters.bytes_sent += sum(t.numel() * t.element_size() for t in layers)
        return layers

    def release(self, transfer_id: str, reason: str) -> None:
        with self._lock:
            pending = self._pending.pop(transfer_id, None)
            if pending is None:
                return  # already released (expired, or a repeated done / abort)
            self._by_request.pop(pending.request_id, None)
            if reason == "done":
                self.counters.sent += 1
            elif reason == "abort":
                self.counters.aborted += 1
            else:
                self.counters.expired += 1
        holder = pending.holder_id
        self.engine.submit_call(lambda engine: engine.kv.free(holder))

    def expire(self) -> None:
        now = time.monotonic()
        with self._lock:
            late = [tid for tid, p in self._pending.items() if p.deadline <= now]
        for tid in late:
            self.release(tid, "expired")

    # --- /metrics ------------------------------------------------------------------------
    def metric_samples(self) -> list[tuple[str, str, str, list[tuple[str, float]]]]:
        c = self.counters
        return [
            ("atlas_kv_transfers_pinned", "gauge", "Prefilled requests whose KV waits for a decode instance.",
             [("", self.num_pinned)]),
            ("atlas_kv_transfers_released_total", "counter", "Pinned transfers released, by why.",
             [('{reason="done"}', c.sent), ('{reason="abort"}', c.aborted), ('{reason="expired"}', c.expired)]),
            ("atlas_kv_transfer_bytes_sent_total", "counter", "KV bytes sent to decode instances.",
             [("", c.bytes_sent)]),
        ]  # fmt: skip
