"""An attribute passed to a function that changes that argument in place."""

from __future__ import annotations

import heapq
import random


def sort_queue(queue: list[int]) -> None:
    queue.sort()


def count(queue: list[int]) -> int:
    return len(queue)


class Policy:
    def calc_priority(self, queue: list[int]) -> None:
        self._reorder(queue)

    @staticmethod
    def _reorder(queue: list[int]) -> None:
        queue[:] = sorted(queue)

    def describe(self, queue: list[int]) -> str:
        return ",".join(map(str, queue))


class Sched:
    def __init__(self) -> None:
        self.waiting: list[int] = []
        self.heap: list[int] = []
        self.policy = Policy()

    def prepare(self) -> None:
        sort_queue(self.waiting)

    def order(self) -> None:
        self.policy.calc_priority(self.waiting)

    def log(self) -> str:
        count(self.waiting)
        return self.policy.describe(self.waiting)

    def push(self, x: int) -> None:
        heapq.heappush(self.heap, x)

    def shuffle(self) -> None:
        random.shuffle(self.waiting)
