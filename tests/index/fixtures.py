"""Source files for the index tests. Line numbers in the tests refer to these texts."""

from __future__ import annotations

# Line numbers matter: the tests assert them. Keep the first line right after the quotes.
SCHED = '''"""Scheduler module docstring.

More text."""
from __future__ import annotations

import heapq
import collections.abc as cabc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import block_pool
from . import utils as u

if TYPE_CHECKING:
    from vllm.config import VllmConfig

__all__ = ["Scheduler", "Request"]
__all__ += ["helper"]

MAX_SEQS: int = 256
DEFAULT_NAME = "sched"


@dataclass(frozen=True)
class Request:
    """One request."""

    request_id: str
    prompt: list[int] = field(default_factory=list)
    priority = 0


class Scheduler(Base, metaclass=Meta):
    """Decides what runs next."""

    def __init__(self, config: "VllmConfig", *, pool=None) -> None:
        self.config = config
        self.waiting: list[Request] = []
        self.running = collections.deque()
        self.pool = block_pool.BlockPool(config.num_blocks)
        self.a, self.b = 1, 2

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    async def schedule(self, budget: int = 8, /, *args, flag: bool = False, **kwargs) -> list:
        """Pick requests.

        Longer text."""
        out = []
        while self.waiting:
            req = self.waiting.pop()
            self.running.append(req)
            heapq.heappush(self.queue, req)
            self.pool.free(req.request_id, budget)
        self.stats[req.request_id] = 1
        self.count += 1
        del self.cache
        del self.table[req]
        self.x.y = 3
        self.requests[0].append(req)

        def inner(n):
            self.inner_state = n
            return helper(n)

        with open("f") as fh:
            data = fh.read()
        if (n := len(out)) > 2:
            pass
        return out

    @staticmethod
    def make() -> "Scheduler":
        return Scheduler(None)

    @classmethod
    def build(cls, cfg):
        lazy = cls(cfg)
        import os
        return lazy


def helper(x):
    return x
'''

LATIN1 = '# -*- coding: latin-1 -*-\n"""Caf\xe9."""\nNAME = "\xe9t\xe9"\n\n\ndef f():\n    return NAME.upper()\n'

BROKEN = "def broken(:\n    pass\n"
