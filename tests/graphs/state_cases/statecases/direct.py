"""Direct writes: assign, augmented, item stores and deletes, builtin mutators."""

from collections import deque


class Pool:
    def __init__(self, n: int) -> None:
        self.free: deque[int] = deque(range(n))
        self.count = 0
        self.table: dict[int, str] = {}

    def alloc(self) -> int:
        self.count += 1
        return self.free.popleft()

    def release(self, block: int) -> None:
        self.free.append(block)

    def reset(self) -> None:
        self.free = deque()

    def name(self, block: int, text: str) -> None:
        self.table[block] = text

    def forget(self, block: int) -> None:
        del self.table[block]

    def size(self) -> int:
        return len(self.free) + len(self.table)

    def snapshot(self) -> list[int]:
        copy = list(self.free)
        copy.append(-1)  # a copy: the pool is not changed
        return copy
