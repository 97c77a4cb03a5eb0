"""The KV connector interface: how one request's KV blocks move between two instances.

Three roles, each small enough that another transport is one new file beside
`zmq_connector.py` (vLLM's `KVConnectorBase_V1`, SGLang's `KVManager` / `KVSender` /
`KVReceiver` play the same parts):

- `KVSource`, implemented by `PrefillRole`: what a sender serves. It knows which blocks
  a transfer id pinned and reads them on the engine thread.
- `KVSender` (prefill side): exposes a `KVSource` at a network address.
- `KVReceiver` / `KVSession` (decode side): a session per transfer: `describe` (the
  handshake), `pull` (every layer's K/V), `done` (the sender may unpin), `abort`.

The decode side allocates its blocks between `describe` and `pull`, and writes them
itself, so the interface never hands a transport raw device memory.

How other transports fit:
- Mooncake (SGLang's default): the handshake stays on this control channel (ZeroMQ,
  as in SGLang), extended with the receiver's block addresses; `pull` becomes the
  sender's Mooncake transfer-engine write into those registered addresses (RDMA, a
  push), and `done` its completion notice.
- NIXL (vLLM's NixlConnector): `describe` additionally exchanges NIXL agent metadata and
  the sender's block descriptors; `pull` becomes a NIXL READ of the sender's blocks
  straight into the receiver's (GPU to GPU, no host copy); `done` is the notification
  after which the sender frees them, exactly the role it has here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import torch

from reference_engine.disagg.transfer import RemoteKV, TransferInfo


class KVSource(Protocol):
    """What a sender serves; called from the sender's own thread."""

    def describe(self, transfer_id: str) -> TransferInfo: ...

    def read(self, transfer_id: str) -> list[torch.Tensor]: ...

    def release(self, transfer_id: str, reason: str) -> None: ...

    def expire(self) -> None:
        """Unpin transfers whose lease ran out (their receiver never came or died)."""


class KVSender(ABC):
    """Prefill side: serve a KVSource at `host:port` until stopped."""

    host: str
    port: int

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...


class KVSession(ABC):
    """Decode side: one transfer. Leaving its context without `done` aborts it."""

    @abstractmethod
    async def describe(self) -> TransferInfo: ...

    @abstractmethod
    async def pull(self) -> list[torch.Tensor]:
        """Every layer's [2, num_blocks, block_size, kv_heads, head_dim] K/V, in order."""

    @abstractmethod
    async def done(self) -> None: ...


class KVReceiver(ABC):
    @abstractmethod
    def session(self, remote: RemoteKV) -> AbstractAsyncContextManager[KVSession]: ...

    def close(self) -> None:  # noqa: B027 - a receiver without shared state has nothing to do
        """Release whatever the receiver shares between sessions."""
