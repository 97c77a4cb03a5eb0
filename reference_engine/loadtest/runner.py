"""Open loop (Poisson arrivals) and closed loop (fixed concurrency) drivers.

Open loop models independent users: arrivals do not wait for the server, so an
overloaded server shows up as growing latency. Closed loop models a fixed pool
of clients, each sending its next request when the previous one finishes.
Either stops after `num_requests` or after `duration_s` (no new request starts
after the deadline; those in flight are waited for).
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from reference_engine.loadtest.client import RequestResult, Target, send
from reference_engine.loadtest.workload import LoadRequest

Progress = Callable[[RequestResult], None]


@dataclass(frozen=True, slots=True)
class LoadPlan:
    requests: list[LoadRequest]  # cycled through when the run outlasts the list
    concurrency: int | None = None  # closed loop
    rate: float | None = None  # open loop: mean arrivals per second
    num_requests: int | None = None
    duration_s: float | None = None
    seed: int = 0
    timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if (self.concurrency is None) == (self.rate is None):
            raise ValueError("give exactly one of concurrency (closed loop) or rate (open loop)")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.rate is not None and not self.rate > 0:
            raise ValueError(f"rate must be positive, got {self.rate}")
        if self.num_requests is None and self.duration_s is None:
            raise ValueError("give a number of requests, a duration, or both")
        if not self.requests:
            raise ValueError("the workload is empty")


@dataclass(slots=True)
class RunResult:
    results: list[RequestResult]
    wall_s: float
    # How late the generator's own event loop woke up (seconds, sampled every 10 ms): when
    # these grow, the client is CPU-bound and every latency it reports is inflated.
    loop_lag_s: list[float] = field(default_factory=list)


def make_client(plan: LoadPlan) -> httpx.AsyncClient:
    # TCP_NODELAY: Nagle's algorithm plus delayed ACKs would add ~40 ms to small requests.
    transport = httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
    )
    timeout = httpx.Timeout(plan.timeout_s, connect=30.0)
    return httpx.AsyncClient(transport=transport, timeout=timeout)


async def run(plan: LoadPlan, target: Target, progress: Progress | None = None) -> RunResult:
    lags: list[float] = []
    async with make_client(plan) as client:
        monitor = asyncio.create_task(_watch_loop(lags))
        start = time.perf_counter()
        try:
            if plan.concurrency is not None:
                results = await _closed_loop(client, plan, target, progress)
            else:
                results = await _open_loop(client, plan, target, progress)
        finally:
            monitor.cancel()
        return RunResult(results, time.perf_counter() - start, lags)


async def _watch_loop(lags: list[float], period_s: float = 0.01) -> None:
    while True:
        before = time.perf_counter()
        await asyncio.sleep(period_s)
        lags.append(max(0.0, time.perf_counter() - before - period_s))


class _Budget:
    """Hands out request indices until the count or the deadline runs out."""

    def __init__(self, plan: LoadPlan) -> None:
        self._plan = plan
        self._next = 0
        self._deadline = (
            time.perf_counter() + plan.duration_s if plan.duration_s is not None else None
        )

    def take(self) -> LoadRequest | None:
        plan = self._plan
        if plan.num_requests is not None and self._next >= plan.num_requests:
            return None
        if self._deadline is not None and time.perf_counter() >= self._deadline:
            return None
        req = plan.requests[self._next % len(plan.requests)]
        self._next += 1
        return req


async def _closed_loop(
    client: httpx.AsyncClient, plan: LoadPlan, target: Target, progress: Progress | None
) -> list[RequestResult]:
    budget = _Budget(plan)
    results: list[RequestResult] = []

    async def worker() -> None:
        while (req := budget.take()) is not None:
            result = await send(client, target, req)
            results.append(result)
            if progress is not None:
                progress(result)

    assert plan.concurrency is not None
    await asyncio.gather(*(worker() for _ in range(plan.concurrency)))
    return results


async def _open_loop(
    client: httpx.AsyncClient, plan: LoadPlan, target: Target, progress: Progress | None
) -> list[RequestResult]:
    assert plan.rate is not None
    rng = random.Random(plan.seed)
    budget = _Budget(plan)
    results: list[RequestResult] = []

    async def one(req: LoadRequest) -> None:
        result = await send(client, target, req)
        results.append(result)
        if progress is not None:
            progress(result)

    tasks = []
    next_at = time.perf_counter()
    while True:
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        req = budget.take()  # after the wait: nothing starts past the deadline
        if req is None:
            break
        tasks.append(asyncio.create_task(one(req)))
        next_at += rng.expovariate(plan.rate)  # Poisson process: exponential gaps
    await asyncio.gather(*tasks)
    return results
