"""HealthChecker: probes every worker's /health; removes and re-admits workers.

A worker leaves the pool after `unhealthy_after` failed probes in a row, or at once when
a request to it fails to connect (the proxy calls `mark_failed`). It comes back after
one good probe, with a clean slate in the cache-aware tree (it may have restarted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import httpx

from reference_engine.router.policies import Policy
from reference_engine.router.worker import Worker, WorkerPool

log = logging.getLogger("atlas.router")


class HealthChecker:
    def __init__(
        self,
        pool: WorkerPool,
        policies: list[Policy],
        client: httpx.AsyncClient,
        interval_s: float = 2.0,
        timeout_s: float = 2.0,
        unhealthy_after: int = 2,
    ) -> None:
        self.pool = pool
        self.policies = policies
        self.client = client
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.unhealthy_after = unhealthy_after
        self.num_removals = 0
        self.num_readmissions = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            await self.check_all()
            await asyncio.sleep(self.interval_s)

    async def check_all(self) -> None:
        await asyncio.gather(*(self._check(w) for w in self.pool.workers))

    async def _check(self, worker: Worker) -> None:
        try:
            resp = await self.client.get(worker.url + "/health", timeout=self.timeout_s)
            ok, why = resp.status_code == 200, f"/health answered {resp.status_code}"
        except httpx.HTTPError as exc:
            ok, why = False, f"/health failed: {type(exc).__name__}"
        if ok:
            worker.failed_checks = 0
            if not worker.healthy:
                worker.healthy = True
                self.num_readmissions += 1
                log.warning("worker %s is back", worker.url)
            return
        worker.failed_checks += 1
        if worker.failed_checks >= self.unhealthy_after:
            self.mark_failed(worker, why)

    def mark_failed(self, worker: Worker, why: str) -> None:
        worker.last_error = why
        if not worker.healthy:
            return
        worker.healthy = False
        self.num_removals += 1
        for policy in self.policies:
            policy.on_removed(worker)
        log.warning("worker %s removed: %s", worker.url, why)
