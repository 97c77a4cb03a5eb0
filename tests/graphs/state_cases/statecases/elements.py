"""Writes on elements fetched from typed containers and mappings."""

from __future__ import annotations

from collections import deque


class Req:
    def __init__(self, rid: str) -> None:
        self.rid = rid
        self.status = 0
        self.num_computed = 0


class Sched:
    def __init__(self) -> None:
        self.requests: dict[str, Req] = {}
        self.running: list[Req] = []
        self.queue = deque()  # unannotated: its elements are what is put into it

    def add(self, req: Req) -> None:
        self.requests[req.rid] = req
        self.queue.append(req)

    def start(self, rid: str) -> None:
        req = self.requests[rid]
        req.status = 1

    def advance(self, rid: str, n: int) -> None:
        req = self.requests.get(rid)
        if req is not None:
            req.num_computed += n

    def finish_all(self) -> None:
        for req in self.running:
            req.status = 2

    def rewind(self) -> None:
        for _rid, req in self.requests.items():
            req.num_computed = 0

    def stop_first(self) -> None:
        for i, req in enumerate(self.running):
            if i == 0:
                req.status = 3

    def drain(self) -> None:
        while self.queue:
            req = self.queue.popleft()
            req.status = 4

    def mark_queued(self) -> None:
        for req in self.queue:
            req.status = 5

    def statuses(self) -> list[int]:
        return [req.status for req in self.running]


def fail_all(reqs: list[Req]) -> None:
    for req in reqs:
        req.status = 6
