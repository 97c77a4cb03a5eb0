"""`atlas engine serve --profile TRACE`: profile the first steps a served engine runs.

The profiler (profiler.py) has to run on the thread that runs the steps, and a server's steps
run on its engine thread, which nothing outside it should touch mid-step. So the engine
instance's `step` is wrapped before the server starts: the wrapper opens the profiling window
at the first step the traffic causes (on the engine thread), counts `num_steps` steps in it,
then closes it, writes the Chrome/Perfetto trace, prints the breakdown of step time, and puts
the plain `step` back. Unprofiled steps before and after cost nothing extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch.autograd.profiler import record_function

from reference_engine.profiler import PREFIX, StepProfiler


class ServedStepProfiler:
    """Owner of one profiling window over a served engine's steps (engine thread only)."""

    def __init__(self, engine: Any, trace: Path, num_steps: int) -> None:
        if num_steps < 1:
            raise ValueError(f"--profile-steps must be at least 1, got {num_steps}")
        self.engine, self.trace, self.num_steps = engine, trace, num_steps
        self.profiler = StepProfiler(engine)  # refuses several ranks / async scheduling now
        self.done = False
        self._plain = engine.step
        self._open = False
        engine.step = self.step

    def step(self) -> list[Any]:
        if not self._open:
            self.profiler.__enter__()
            self._open = True
        try:
            with record_function(PREFIX + "step"):
                outputs = self._plain()
        finally:
            self.profiler.num_steps += 1
            if self.profiler.num_steps >= self.num_steps:
                self._close()
        return outputs

    def _close(self) -> None:
        from rich.console import Console

        from reference_engine.profile_cli import print_breakdown

        self.engine.step = self._plain
        self.profiler.__exit__(None, None, None)
        self.profiler.export(self.trace)
        self.done = True
        print_breakdown(Console(stderr=True), self.profiler, self.trace)
