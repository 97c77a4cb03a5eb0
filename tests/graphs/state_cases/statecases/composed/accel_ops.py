"""The real mixin for an accelerator, imported by `engine` on that platform only."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statecases.composed.engine import Engine


class AccelLoopMixin:
    def accel_loop(self: Engine) -> None:
        self.running = []
        self.steps += 1
