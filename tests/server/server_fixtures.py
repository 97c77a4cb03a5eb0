"""A real uvicorn server on 127.0.0.1 (a free port) serving the tiny model, in this process.

The server runs on its own thread, so tests can also look at the engine directly;
clients still go through real sockets and real HTTP.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.server.async_engine import AsyncEngine
from reference_engine.server.launch import GracefulServer, ServeConfig, make_server
from reference_engine.server.serving import ServingLimits
from reference_engine.tiny_model import TINY_MODEL_NAME

MODEL = TINY_MODEL_NAME
MAX_MODEL_LEN = 128  # small context: fuzzed requests can never ask for long generations


@dataclass
class LiveServer:
    base_url: str
    engine: AsyncEngine
    server: GracefulServer
    thread: threading.Thread
    # One client for the module: a new httpx.Client builds an SSL context (~50 ms) each time.
    http: httpx.Client

    @property
    def api_url(self) -> str:
        return self.base_url + "/v1"

    def kv(self) -> dict[str, Any]:
        return self.http.get("/debug/kv").json()  # type: ignore[no-any-return]

    def wait_idle(self, timeout_s: float = 10.0) -> dict[str, Any]:
        """The /debug/kv report once no request is left in the engine."""
        deadline = time.monotonic() + timeout_s
        while True:
            report = self.kv()
            if report["idle"] or time.monotonic() > deadline:
                return report
            time.sleep(0.02)

    def stop(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(timeout=15)


def start_server(
    cache_dir: Path,
    max_n: int = 4,
    limits: ServingLimits | None = None,
    api_key: str | None = None,
    serve_options: dict[str, Any] | None = None,
    **engine_kwargs: Any,
) -> LiveServer:
    """`serve_options`: more ServeConfig fields (a disaggregation role, ...)."""
    kwargs: dict[str, Any] = {
        "max_model_len": MAX_MODEL_LEN,
        "max_num_seqs": 32,
        "num_gpu_blocks": 256,
        "block_size": 8,
        **engine_kwargs,
    }
    engine = AsyncEngine(Engine(EngineConfig(cache_dir=cache_dir, **kwargs)))
    # proto=IPPROTO_TCP, not 0: asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP; without it Nagle + delayed ACKs add 40 ms to every keep-alive request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # the OS picks a free port; bound before uvicorn, so no race
    port = sock.getsockname()[1]
    cfg = ServeConfig(
        limits=limits or ServingLimits(max_n=max_n),
        graceful_s=1,
        api_key=api_key,
        **(serve_options or {}),
    )
    server = make_server(engine, MODEL, cfg)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
    http = httpx.Client(base_url=base, timeout=60, headers=headers)
    return LiveServer(base, engine, server, thread, http)
