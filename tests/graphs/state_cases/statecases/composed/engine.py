"""An engine composed of plain-named helpers; one base is a stub on most platforms and
the real mixin (accel_ops) on one: both may run on its instances."""

from __future__ import annotations

import os

if os.environ.get("ACCEL"):
    from statecases.composed.accel_ops import AccelLoopMixin
else:

    class AccelLoopMixin:  # the stub: nothing to run
        pass


class QueueOps:
    """No constructor, never made on its own: its methods run on the engine's instances."""

    def enqueue(self, req: int) -> None:
        self.waiting.append(req)

    def reset_counters(self) -> None:
        self.steps = 0


class Stats:
    """A constructor-less helper made on its own (not a base of anything): it owns its state."""

    def bump(self) -> None:
        self.hits = getattr(self, "hits", 0) + 1


class LoggingMixin:
    """Named like a mixin but sets up its own state in a constructor: a base."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, line: str) -> None:
        self.lines.append(line)


class Engine(QueueOps, LoggingMixin, AccelLoopMixin):
    def __init__(self) -> None:
        super().__init__()
        self.waiting: list[int] = []
        self.running: list[int] = []
        self.steps = 0
        self.stats = Stats()

    def step(self) -> None:
        self.steps += 1
        self.stats.bump()
        self.log("step")


class CounterOps:
    """A single constructor-less base, plainly named: its methods run on Worker's
    instances only, so the counter it resets is Worker's state, not its own."""

    def reset(self) -> None:
        self.done = 0


class Worker(CounterOps):
    def __init__(self) -> None:
        self.done = 0

    def work(self) -> None:
        self.done += 1
