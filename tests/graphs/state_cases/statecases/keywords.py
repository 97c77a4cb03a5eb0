"""An attribute passed by keyword to a parameter the callee changes in place."""

from __future__ import annotations

from collections import deque


def drain(limit: int, *, queue: deque[int]) -> list[int]:
    return [queue.popleft() for _ in range(min(limit, len(queue)))]


def peek(*, queue: deque[int]) -> int | None:
    return queue[0] if queue else None


def forward(n: int, queue: deque[int]) -> list[int]:
    return drain(n, queue=queue)  # passes its own parameter on by keyword: forward mutates `queue`


class Budget:
    def charge(self, amount: int, into: list[int]) -> None:
        into.append(amount)

    def total(self, of: list[int]) -> int:
        return sum(of)


class Sched:
    def __init__(self) -> None:
        self.waiting: deque[int] = deque()
        self.spent: list[int] = []
        self.budget = Budget()

    def admit(self) -> list[int]:
        return drain(4, queue=self.waiting)

    def admit_via(self) -> list[int]:
        return forward(2, queue=self.waiting)  # positional parameter bound by keyword

    def head(self) -> int | None:
        return peek(queue=self.waiting)  # reads only

    def pay(self, n: int) -> None:
        self.budget.charge(amount=n, into=self.spent)

    def audit(self) -> int:
        return self.budget.total(of=self.spent)
