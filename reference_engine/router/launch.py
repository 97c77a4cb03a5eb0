"""Start the router (uvicorn), and for `atlas engine cluster` the workers behind it.

`Cluster` starts each worker as its own `python -m reference_engine.server` process on
127.0.0.1 (one port each), waits for every /health, and stops them all (SIGTERM, then
SIGKILL after a grace period) however the router ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import uvicorn

from reference_engine.router.app import build_router_app
from reference_engine.router.proxy import Router, RouterConfig
from reference_engine.router.worker import Worker, WorkerPool


def make_pool(workers: list[str], prefill: list[str], decode: list[str]) -> WorkerPool:
    if workers and (prefill or decode):
        raise ValueError("give either --worker URLs, or --prefill and --decode URLs, not both")
    if bool(prefill) != bool(decode):
        raise ValueError(
            "disaggregated serving needs at least one --prefill and one --decode worker"
        )
    if not (workers or prefill):
        raise ValueError("give at least one --worker URL (or --prefill and --decode URLs)")
    entries = [(u, "colocated") for u in workers] + [(u, "prefill") for u in prefill]
    entries += [(u, "decode") for u in decode]
    seen: set[str] = set()
    pool = WorkerPool()
    for url, role in entries:
        url = url.rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"a worker URL must start with http:// or https://, got {url!r}")
        if url in seen:
            raise ValueError(f"worker {url} is listed twice")
        seen.add(url)
        pool.workers.append(Worker(url, role))
    return pool


def serve_router(pool: WorkerPool, cfg: RouterConfig, listener: socket.socket) -> None:
    """Serve on `listener` (from `server.launch.bind_listener`, bound before anything else
    starts so a taken port fails at once) until Ctrl-C; the socket is closed after."""
    try:
        app = build_router_app(Router(pool, cfg))
        host, port = listener.getsockname()[:2]
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(slots=True)
class Cluster:
    """Worker processes for a one-command demo; a context manager that always stops them."""

    roles: list[str]  # one entry per worker: colocated, prefill or decode
    serve_args: list[str] = field(default_factory=list)  # passed to every worker
    start_timeout_s: float = 180.0
    quiet: bool = False  # workers' own output to /dev/null (benchmarks)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    @contextlib.contextmanager
    def running(self) -> Iterator[Cluster]:
        try:
            for role in self.roles:
                port = free_port()
                cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port),
                       "--role", role, *self.serve_args]  # fmt: skip
                out = subprocess.DEVNULL if self.quiet else None
                self.procs.append(
                    subprocess.Popen(cmd, env=os.environ.copy(), stdout=out, stderr=out)
                )
                self.urls.append(f"http://127.0.0.1:{port}")
            self._wait_healthy()
            yield self
        finally:
            self.stop()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        pending = set(range(len(self.procs)))
        while pending:
            for i in list(pending):
                if self.procs[i].poll() is not None:
                    raise RuntimeError(
                        f"worker {self.urls[i]} exited with {self.procs[i].returncode}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(self.urls[i] + "/health", timeout=1).status_code == 200:
                        pending.discard(i)
            if pending and time.monotonic() > deadline:
                raise RuntimeError(f"workers did not come up within {self.start_timeout_s:.0f} s")
            time.sleep(0.2)

    def pool(self) -> WorkerPool:
        by_role: dict[str, list[str]] = {"colocated": [], "prefill": [], "decode": []}
        for role, url in zip(self.roles, self.urls, strict=True):
            by_role[role].append(url)
        return make_pool(by_role["colocated"], by_role["prefill"], by_role["decode"])

    def stop(self, grace_s: float = 10.0) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
