"""User-defined mutating methods, found to a fixed point: their callers write the
attribute holding the receiver."""

from __future__ import annotations

from collections import deque


class FreeList:
    def __init__(self) -> None:
        self._items: deque[int] = deque()

    def popleft_n(self, n: int) -> list[int]:
        return [self._items.popleft() for _ in range(n)]

    def push(self, block: int) -> None:
        self._push_impl(block)

    def _push_impl(self, block: int) -> None:
        self._items.append(block)

    def peek(self) -> int:
        return self._items[0]


class Queue:
    def add(self, req: int) -> None:
        raise NotImplementedError

    def first(self) -> int:
        raise NotImplementedError


class FCFSQueue(Queue):
    def __init__(self) -> None:
        self.items: list[int] = []

    def add(self, req: int) -> None:
        self.items.append(req)

    def first(self) -> int:
        return self.items[0]


class DequeQueue(deque):
    def add_request(self, req: int) -> None:
        self.append(req)

    def peek_request(self) -> int:
        return self[0]


def make_queue() -> Queue:
    return FCFSQueue()


class BlockPool:
    def __init__(self) -> None:
        self.free = FreeList()
        self.waiting: Queue = make_queue()
        self.backlog = DequeQueue()

    def get_blocks(self, n: int) -> list[int]:
        return self.free.popleft_n(n)

    def give_back(self, block: int) -> None:
        self.free.push(block)

    def next_free(self) -> int:
        return self.free.peek()

    def enqueue(self, req: int) -> None:
        self.waiting.add(req)

    def head(self) -> int:
        return self.waiting.first()

    def park(self, req: int) -> None:
        self.backlog.add_request(req)

    def parked(self) -> int:
        return self.backlog.peek_request()
