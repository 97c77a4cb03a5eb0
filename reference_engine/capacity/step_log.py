"""Record what each engine step held and how long it took, from inside a running engine
(a served one included), so the step-cost model can be fitted on the steps serving runs.

`StepRecorder.attach(engine, path)` wraps the engine instance's `step` and its scheduler's
`schedule` (instance attributes: the classes are untouched and other engines unaffected) and
appends one JSON line per step that ran a forward pass: the step's features, its wall time
from the start of `step` to its end, and the gap since the previous step ended when that step
left work behind (the engine was busy, so the gap is the serving loop's own cost: draining the
command queue, handing outputs to the event loop, waiting for the interpreter lock). A served
engine's clock moves by both, step after step; the simulator's clock moves once per step, so
`read_steps(path)` returns their sum (the busy cycle) for `StepCostModel.fit`. Fitting on the
step alone left the gaps out and under-predicted every served latency. The served time includes
what the engine thread loses to the HTTP event loop sharing the interpreter, which is why
benchmarks/capacity_validate.py fits on these rather than on the engine alone.
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
        self._busy_since: float | None = None  # end of the last step that left work behind
        schedule, step = engine.scheduler.schedule, engine.step

        def recording_schedule() -> SchedulerOutput:
            out = schedule()
            self._last = out
            return out

        def recording_step() -> Any:
            self._last = None
            start = time.perf_counter()
            outputs = step()
            end = time.perf_counter()
            gap = 0.0 if self._busy_since is None else start - self._busy_since
            if self._last is not None and self._last.scheduled:
                f = StepFeatures.of(self._last)
                line = [f.prefill_tokens, f.decode_seqs, f.attention, end - start, gap]
                self.sink.write(json.dumps(line) + "\n")
            # After the last request finishes the engine idles: that wait is not a cost.
            self._busy_since = end if engine.has_unfinished_requests() else None
            return outputs

        engine.scheduler.schedule = recording_schedule
        engine.step = recording_step

    @classmethod
    def attach(cls, engine: Any, path: Path) -> StepRecorder:
        return cls(engine, path.open("a", encoding="utf-8", buffering=1))  # line-buffered


def read_steps(
    path: Path, skip: int = 0, with_gaps: bool = True
) -> list[tuple[StepFeatures, float]]:
    """The recorded steps after the first `skip` lines, each with its busy cycle (the step
    and the busy gap before it; `with_gaps=False`: the step alone)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[skip:]:
        prefill, decode, attention, seconds, *rest = json.loads(line)
        gap = float(rest[0]) if rest and with_gaps else 0.0  # older logs have no gap
        f = StepFeatures(int(prefill), int(decode), float(attention))
        out.append((f, float(seconds) + gap))
    return out
