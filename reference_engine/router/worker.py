"""Worker and WorkerPool: the router's view of the engine servers behind it.

The pool is owned by the router's event loop (the proxy and the health checker both run
there), so its counters need no locks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Worker:
    url: str  # http://host:port, no trailing slash
    role: str = "colocated"  # or "prefill" / "decode" (disaggregated pairs)
    healthy: bool = True
    outstanding: int = 0  # requests sent and not yet answered in full
    queued_prefill: int = 0  # prompt elements sent whose first token has not come back yet
    num_requests: int = 0
    num_failures: int = 0  # requests that could not be delivered (then retried elsewhere)
    failed_checks: int = 0  # consecutive failed health checks
    last_error: str = ""


@dataclass(slots=True)
class WorkerPool:
    workers: list[Worker] = field(default_factory=list)

    @property
    def disaggregated(self) -> bool:
        return any(w.role != "colocated" for w in self.workers)

    def available(self, role: str, exclude: set[str]) -> list[Worker]:
        return [w for w in self.workers if w.role == role and w.healthy and w.url not in exclude]

    def ready(self) -> bool:
        """Whether a request could be served now (a prefill and a decode when disaggregated)."""
        roles = ("prefill", "decode") if self.disaggregated else ("colocated",)
        return all(self.available(role, set()) for role in roles)

    def get(self, url: str) -> Worker | None:
        return next((w for w in self.workers if w.url == url), None)
