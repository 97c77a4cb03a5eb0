"""A scheduler assembled from mixins (SGLang style): their methods run on its instances."""

from __future__ import annotations


class QueueMixin:
    def requeue(self: Sched, req: int) -> None:
        self.waiting.append(req)

    def drop_all(self) -> None:
        self.waiting = []  # a mixin rebinding the composite's queue


class StatsMixin:
    def reset_stats(self) -> None:
        self.num_steps = 0

    def report(self) -> int:
        return self.num_steps + len(self.waiting)


class Sched(QueueMixin, StatsMixin):
    def __init__(self) -> None:
        self.waiting: list[int] = []
        self.num_steps = 0

    def step(self) -> None:
        self.num_steps += 1
        self.requeue(1)  # only calls a method of self: requeue is the writer
