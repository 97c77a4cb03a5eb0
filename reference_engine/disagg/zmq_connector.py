"""The KV connector over ZeroMQ: a ROUTER socket on the prefill side, a DEALER per transfer
on the decode side, plain TCP between them (what vLLM's and SGLang's control planes use;
here it carries the KV bytes too, so any two machines that can reach each other work).

Messages are multipart: a JSON header frame, then raw tensor bytes where there are any.

    decode (DEALER)                      prefill (ROUTER, its own thread)
    {"op": "describe", "transfer_id"} -> {"ok", "token_ids", "layout", "num_blocks"}
    {"op": "pull", ...}               -> {"op": "layer", "index", "shape", "dtype"} + bytes,
                                         one message per layer, then {"op": "end"}
    {"op": "done" | "abort", ...}     -> {"ok": true}; the sender unpins the blocks

Every receive on the decode side has a timeout, so a dead prefill instance costs one
timeout, after which the request computes its prompt locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from types import TracebackType
from typing import Any

import torch
import zmq
import zmq.asyncio

from reference_engine.disagg.connector import KVReceiver, KVSender, KVSession, KVSource
from reference_engine.disagg.kv_io import from_bytes, to_bytes
from reference_engine.disagg.transfer import RemoteKV, TransferError, TransferInfo

log = logging.getLogger("atlas.disagg")


def _header(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


class ZmqKVSender(KVSender):
    """Serves a KVSource on tcp://host:port (port 0: any free port, see `.port`)."""

    def __init__(self, source: KVSource, host: str = "127.0.0.1", port: int = 0) -> None:
        self.source = source
        self.host = host
        self.port = port
        self._ctx = zmq.Context()
        self._sock: zmq.Socket[bytes] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        sock = self._ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        try:
            if self.port == 0:
                self.port = sock.bind_to_random_port(f"tcp://{self.host}")
            else:
                sock.bind(f"tcp://{self.host}:{self.port}")
        except zmq.ZMQError as exc:
            sock.close()
            raise OSError(
                f"cannot listen for KV transfers on {self.host}:{self.port}: {exc}"
            ) from None
        self._sock = sock
        self._thread = threading.Thread(target=self._run, name="atlas-kv-sender", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._ctx.destroy(linger=0)

    def _run(self) -> None:
        assert self._sock is not None
        poller = zmq.Poller()
        poller.register(self._sock, zmq.POLLIN)
        while not self._stop.is_set():
            if poller.poll(100):
                identity, *frames = self._sock.recv_multipart()
                try:
                    self._handle(identity, json.loads(frames[0]))
                except Exception as exc:  # a bad peer or a failed read: tell it, keep serving
                    log.warning("KV transfer request failed: %s", exc)
                    self._sock.send_multipart([identity, _header({"ok": False, "error": str(exc)})])
            try:
                self.source.expire()
            except Exception:  # the engine stopped: nothing left to unpin
                log.debug("lease expiry failed", exc_info=True)
        self._sock.close(linger=0)

    def _handle(self, identity: bytes, header: dict[str, Any]) -> None:
        assert self._sock is not None
        op, tid = header.get("op"), str(header.get("transfer_id"))
        if op == "describe":
            info = self.source.describe(tid)
            reply = {"ok": True, "token_ids": info.token_ids, "layout": info.layout,
                     "num_blocks": info.num_blocks}  # fmt: skip
            self._sock.send_multipart([identity, _header(reply)])
        elif op == "pull":
            layers = self.source.read(tid)
            for i, kv in enumerate(layers):
                meta = {"op": "layer", "index": i, "shape": list(kv.shape),
                        "dtype": str(kv.dtype).removeprefix("torch.")}  # fmt: skip
                self._sock.send_multipart([identity, _header(meta), to_bytes(kv)], copy=False)
            self._sock.send_multipart([identity, _header({"op": "end", "num_layers": len(layers)})])
        elif op in ("done", "abort"):
            self.source.release(tid, op)
            self._sock.send_multipart([identity, _header({"ok": True})])
        else:
            raise ValueError(f"unknown KV transfer operation {op!r}")


class _ZmqSession(KVSession):
    def __init__(self, ctx: zmq.asyncio.Context, remote: RemoteKV, timeout_s: float) -> None:
        self.remote = remote
        self.timeout_s = timeout_s
        self._sock = ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 500)  # an abort gets half a second to leave
        self._finished = False

    async def __aenter__(self) -> _ZmqSession:
        self._sock.connect(self.remote.endpoint)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._finished:  # failed or cancelled mid-way: let the sender unpin now
            with contextlib.suppress(zmq.ZMQError):  # else the sender's lease covers it
                self._sock.send_multipart(self._op("abort"), flags=zmq.NOBLOCK)
        self._sock.close()

    def _op(self, op: str) -> list[bytes]:
        return [_header({"op": op, "transfer_id": self.remote.transfer_id})]

    async def _recv(self) -> tuple[dict[str, Any], list[bytes]]:
        try:
            frames = await asyncio.wait_for(self._sock.recv_multipart(), self.timeout_s)
        except TimeoutError:
            raise TransferError(
                f"no answer from the prefill instance at {self.remote.endpoint} "
                f"within {self.timeout_s} s"
            ) from None
        header = json.loads(frames[0])
        if header.get("ok") is False:
            raise TransferError(f"the prefill instance refused: {header.get('error')}")
        return header, frames[1:]

    async def describe(self) -> TransferInfo:
        await self._sock.send_multipart(self._op("describe"))
        header, _ = await self._recv()
        return TransferInfo(
            list(header["token_ids"]), dict(header["layout"]), int(header["num_blocks"])
        )

    async def pull(self) -> list[torch.Tensor]:
        await self._sock.send_multipart(self._op("pull"))
        layers: list[torch.Tensor] = []
        while True:
            header, frames = await self._recv()
            if header["op"] == "end":
                if header["num_layers"] != len(layers):
                    raise TransferError(f"got {len(layers)} of {header['num_layers']} layers")
                return layers
            if header["op"] != "layer" or header["index"] != len(layers) or len(frames) != 1:
                raise TransferError(f"unexpected KV frame {header}")
            try:
                layers.append(from_bytes(frames[0], header["dtype"], tuple(header["shape"])))
            except (KeyError, ValueError) as exc:
                raise TransferError(f"a malformed KV frame: {exc}") from None

    async def done(self) -> None:
        await self._sock.send_multipart(self._op("done"))
        self._finished = True
        await self._recv()


class ZmqKVReceiver(KVReceiver):
    """Decode side: one DEALER socket per transfer, on the server's event loop."""

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self._ctx = zmq.asyncio.Context()

    def session(self, remote: RemoteKV) -> _ZmqSession:
        return _ZmqSession(self._ctx, remote, self.timeout_s)

    def close(self) -> None:
        self._ctx.destroy(linger=0)
