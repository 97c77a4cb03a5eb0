"""A router in this process (uvicorn on its own thread, 127.0.0.1, a free port), and fake
workers for the failures real ones cannot be made to show on cue."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from reference_engine.router.app import build_router_app
from reference_engine.router.proxy import Router, RouterConfig
from reference_engine.router.worker import WorkerPool


@dataclass
class Running:
    base_url: str
    server: uvicorn.Server
    thread: threading.Thread
    app: FastAPI

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def run_app(app: FastAPI, port: int = 0) -> Running:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app did not start")
        time.sleep(0.01)
    return Running(f"http://127.0.0.1:{port}", server, thread, app)


def start_router(pool: WorkerPool, **cfg: Any) -> tuple[Running, Router]:
    router = Router(pool, RouterConfig(**{"health_interval_s": 0.2, **cfg}))
    return run_app(build_router_app(router)), router


@dataclass
class FakeWorker:
    """A worker whose behaviour the test sets: healthy or not, and how it answers."""

    mode: str = "ok"  # ok | 500 (a bug: uvicorn answers 500) | 503 | 429 | die_mid_stream
    healthy: bool = True
    calls: int = 0
    running: Running | None = None
    seen_bodies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        assert self.running is not None
        return self.running.base_url

    def start(self, port: int = 0) -> FakeWorker:
        app = FastAPI()

        @app.get("/health")
        async def health() -> Response:
            return Response(status_code=200 if self.healthy else 503)

        @app.post("/v1/completions")
        async def completions(request: Request) -> Response:
            self.calls += 1
            self.seen_bodies.append(await request.json())
            if self.mode == "500":
                raise RuntimeError("a bug in the fake worker")
            if self.mode in ("503", "429"):
                status = int(self.mode)
                body = {
                    "error": {"message": f"fake {status}", "type": "x", "param": None, "code": None}
                }
                return JSONResponse(body, status_code=status, headers={"Retry-After": "7"})
            return StreamingResponse(self._events(), media_type="text/event-stream")

        self.running = run_app(app, port)
        return self

    async def _events(self) -> AsyncIterator[bytes]:
        chunk = {"id": "x", "object": "text_completion", "choices": [{"index": 0, "text": "fake"}]}
        yield f"data: {json.dumps(chunk)}\n\n".encode()
        if self.mode == "die_mid_stream":
            await asyncio.sleep(0.05)
            raise ConnectionResetError
        yield b"data: [DONE]\n\n"

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()


def sse_data(text: str) -> list[str]:
    return [e.removeprefix("data: ") for e in text.split("\n\n") if e.startswith("data: ")]


def post(base: str, path: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    return httpx.post(base + path, json=body, timeout=60, **kw)
