"""Record what each engine step held and how long it took, from inside a running engine
(a served one included), so the step-cost model can be fitted on the steps serving runs.

`StepRecorder.attach(engine, path)` wraps the engine instance's `step` and its scheduler's
`schedule` (instance attributes: the classes are untouched and other engines unaffected) and
appends one JSON line per step that ran a forward pass: the step's features and its wall time
from the start of `step` to its end. `read_steps(path)` reads them back for
`StepCostModel.fit`. The served time of a step includes what the engine thread loses to the
HTTP event loop sharing the interpreter, which is why benchmarks/capacity_validate.py fits on
these rather than on the engine alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from reference_engine.capacity.cost_model import StepFeatures
from reference_engine.scheduler import SchedulerOutput


class StepRecorder:
    """Owner of one engine's step log (the file it appends to)."""

    def __init__(self, engine: Any, sink: IO[str]) -> None:
        self.engine = engine
        self.sink = sink
        self._last: SchedulerOutput | None = None
        schedule, step = engine.scheduler.schedule, engine.step

        def recording_schedule() -> SchedulerOutput:
            out = schedule()
            self._last = out
            return out

        def recording_step() -> Any:
            self._last = None
            start = time.perf_counter()
            outputs = step()
            seconds = time.perf_counter() - start
            if self._last is not None and self._last.scheduled:
                f = StepFeatures.of(self._last)
                line = [f.prefill_tokens, f.decode_seqs, f.attention, seconds]
                self.sink.write(json.dumps(line) + "\n")
            return outputs

        engine.scheduler.schedule = recording_schedule
        engine.step = recording_step

    @classmethod
    def attach(cls, engine: Any, path: Path) -> StepRecorder:
        return cls(engine, path.open("a", encoding="utf-8", buffering=1))  # line-buffered


def read_steps(path: Path, skip: int = 0) -> list[tuple[StepFeatures, float]]:
    """The recorded steps after the first `skip` lines."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[skip:]:
        prefill, decode, attention, seconds = json.loads(line)
        out.append((StepFeatures(int(prefill), int(decode), float(attention)), float(seconds)))
    return out
