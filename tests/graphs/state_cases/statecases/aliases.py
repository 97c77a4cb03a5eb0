"""Local aliases and methods that hand out an attribute."""


class Sched:
    def __init__(self) -> None:
        self.waiting: list[int] = []
        self.swapped: list[int] = []
        self.running: list[int] = []
        self.limit = 8

    def _pick(self, prefer_swapped: bool) -> list[int]:
        return self.swapped if prefer_swapped else self.waiting

    def admit(self) -> int:
        queue = self._pick(False)
        return queue.pop()

    def push_front(self, req: int) -> None:
        q = self.waiting
        q.insert(0, req)

    def replace_head(self, req: int) -> None:
        q = self.running
        q[0] = req

    def finish(self, req: int) -> None:
        for queue in (self.running, self.waiting):
            if req in queue:
                queue.remove(req)

    def count(self) -> int:
        q = self.waiting
        return len(q)

    def spend(self, n: int) -> int:
        budget = self.limit
        budget -= n  # rebinds the local int: `limit` is unchanged
        return budget
