"""Routing policies: which worker gets a request. Round robin and least outstanding here;
cache-aware routing in cache_aware.py. A policy sees only healthy, untried workers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence

from reference_engine.router.worker import Worker


class Policy(ABC):
    name: str

    @abstractmethod
    def pick(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        """`workers` is not empty; `key` is the request's prompt (characters or token ids)."""

    def route(self, key: Sequence[Hashable], workers: list[Worker]) -> tuple[Worker, int]:
        """The worker, and the prefill work charged to it (prompt elements it will probably
        compute) until the request's first token comes back. A policy blind to caches
        charges the whole prompt."""
        return self.pick(key, workers), len(key)

    def on_removed(self, worker: Worker) -> None:  # noqa: B027 - stateless policies ignore it
        """The worker left the pool (unhealthy); forget what is known about it."""


class RoundRobin(Policy):
    name = "round_robin"

    def __init__(self) -> None:
        self._next = 0

    def pick(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        worker = workers[self._next % len(workers)]
        self._next += 1
        return worker


class LeastOutstanding(Policy):
    """vLLM's router and SGLang's `shortest_queue`: fewest requests in flight; ties go
    to whoever has served the fewest so far, so an idle pool is still spread evenly."""

    name = "least_outstanding"

    def pick(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        return min(workers, key=lambda w: (w.outstanding, w.num_requests))


def make_policy(name: str) -> Policy:
    from reference_engine.router.cache_aware import CacheAware

    policies: dict[str, type[Policy]] = {
        "round_robin": RoundRobin,
        "least_outstanding": LeastOutstanding,
        "cache_aware": CacheAware,
    }
    if name not in policies:
        raise ValueError(f"unknown routing policy {name!r}; choose one of {', '.join(policies)}")
    return policies[name]()
