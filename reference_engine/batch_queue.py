"""Several scheduler steps in flight at once, over disjoint requests: what keeps the stages of
a pipeline-parallel model busy (vLLM's batch queue, `step_with_batch_queue`; its V0 had one
scheduler per stage, "virtual engines"; SGLang's PP event loop keeps micro-batches too).

With P pipeline stages one step alone leaves P-1 stages idle at any time. So `step()`:

    if fewer than P steps are in flight:
        schedule a step over requests *not* in flight; launch it (stage 0 runs, the
        rest continues down the pipeline while this returns)
    if P steps are in flight, or nothing new could be scheduled:
        wait for the oldest, sample it, update its requests, return their outputs

A request in flight has no sampled token yet, so the scheduler must neither schedule nor
preempt it: it is lifted out of the running queue while the next step is scheduled
(`_schedule`) and put back in its place after. The scheduler's bookkeeping for a step
(computed counts, blocks offered to the prefix cache) runs at launch, as with overlap
scheduling: another step may then read those blocks, reuse a block an aborted request
freed, or copy and swap blocks, all safely, because every stage runs steps in launch order
(pipeline_parallel.py). Each step's outputs are the same as running it alone, so tokens
equal one process (tests/engine/test_dist_pipeline_parallel.py).

Owned by the Engine when its runner can keep more than one step in flight
(DistributedExecutor.max_concurrent_batches > 1); it drives the engine's own phases.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reference_engine.scheduler import SchedulerOutput

if TYPE_CHECKING:
    from reference_engine.distributed.executor import DistributedExecutor, PipelineStep
    from reference_engine.engine import Engine
    from reference_engine.forward_batch import SeqInput
    from reference_engine.outputs import RequestOutput


@dataclass(slots=True)
class _Launched:
    out: SchedulerOutput
    inputs: list[SeqInput]
    logits_rows: list[int] | None  # rows the sampler uses; None: all
    handle: PipelineStep  # the runner's in-flight step: .result() -> logits


class BatchQueue:
    def __init__(self, engine: Engine, depth: int) -> None:
        self.engine = engine
        self.depth = depth  # most steps in flight: one per pipeline stage
        self.queue: deque[_Launched] = deque()
        self.max_in_flight = 0  # most steps ever in flight together (tests, benchmarks)
        self.wait_s = 0.0  # the driver waiting for the oldest step's logits

    @property
    def runner(self) -> DistributedExecutor:
        """The engine's runner: only one that keeps steps in flight makes it build a BatchQueue."""
        return self.engine.runner

    @property
    def in_flight(self) -> int:
        return len(self.queue)

    def step(self) -> list[RequestOutput]:
        e = self.engine
        launched = False
        # The requests a failure in this call touches: the step launched and the one collected.
        e.step_request_ids = set()
        if len(self.queue) < self.depth:
            out = self._schedule()
            e.step_request_ids = {item.seq.request_id for item in out.scheduled}
            if not out.is_empty:
                self._launch(out)
                launched = True
            else:
                # Only preempted: its swap-outs go with the next step, before that step's.
                e.runner.swap_out(out.blocks_to_swap_out)
                if not self.queue and e.scheduler.has_unfinished() and not out.preempted:
                    raise RuntimeError("scheduler made no progress with nothing in flight")
        if self.queue and (len(self.queue) >= self.depth or not launched):
            return self._collect()
        return []

    def _schedule(self) -> SchedulerOutput:
        """The next micro-batch: up to a 1/depth share of the running requests not in
        flight, so steady decoding splits into `depth` steps that keep every stage busy
        (vLLM V0 gave each virtual engine its own requests for the same reason). When that
        share schedules nothing and nothing is in flight, every request is offered."""
        out = self._schedule_share(share=True)
        if out.is_empty and not out.preempted and not self.queue:
            out = self._schedule_share(share=False)
        return out

    def _schedule_share(self, share: bool) -> SchedulerOutput:
        """Run the scheduler on part of the running queue: the others (in flight, or left
        for the next micro-batch) are neither scheduled nor preempted, but still count
        against max_num_seqs; they keep their places in the queue."""
        sched = self.engine.scheduler
        busy = {id(item.seq) for launched in self.queue for item in launched.out.scheduled}
        before = list(sched.running)
        visible = [s for s in before if id(s) not in busy]
        if share:
            visible = visible[: -(-len(before) // self.depth)]
        shown = {id(s) for s in visible}
        config = sched.config
        sched.running[:] = visible
        sched.config = dataclasses.replace(
            config, max_num_seqs=max(0, config.max_num_seqs - (len(before) - len(visible)))
        )
        try:
            out = sched.schedule()
        finally:
            sched.config = config
            after = {id(s) for s in sched.running}
            kept = [s for s in before if id(s) not in shown or id(s) in after]
            known = {id(s) for s in before}
            sched.running[:] = kept + [s for s in sched.running if id(s) not in known]
        return out

    def _launch(self, out: SchedulerOutput) -> None:
        e = self.engine
        busy = {id(item.seq) for launched in self.queue for item in launched.out.scheduled}
        assert not any(id(item.seq) in busy for item in out.scheduled), "a request twice in flight"
        inputs, batch = e._prepare(out)
        e.runner.swap_out(out.blocks_to_swap_out)
        e.runner.swap_in(out.blocks_to_swap_in)
        e.runner.copy_blocks(out.blocks_to_copy)
        handle = self.runner.execute_model_async(batch)
        self.queue.append(_Launched(out, inputs, e._logits_rows(out, inputs, batch), handle))
        self.max_in_flight = max(self.max_in_flight, len(self.queue))
        e.scheduler.on_step_done(out)
        e._num_steps += 1

    def _collect(self) -> list[RequestOutput]:
        """The oldest step: wait for its logits, sample, update the requests still live."""
        e = self.engine
        oldest = self.queue.popleft()
        e.step_request_ids |= {item.seq.request_id for item in oldest.out.scheduled}
        start = time.perf_counter()
        logits = oldest.handle.result()
        self.wait_s += time.perf_counter() - start
        if oldest.logits_rows is not None:
            logits = logits[oldest.logits_rows]
        sampled = e._sample(oldest.out, logits)
        # A request aborted (or finished by a sibling) while its step was in flight: drop it.
        keep = [
            i for i, item in enumerate(oldest.out.scheduled)
            if not item.seq.is_finished and item.seq.request_id in e.requests
        ]  # fmt: skip
        live = SchedulerOutput(scheduled=[oldest.out.scheduled[i] for i in keep])
        sampled.tokens = [sampled.tokens[i] for i in keep]
        sampled.logprobs = [sampled.logprobs[i] for i in keep]
        sampled.prompt_logprobs = [sampled.prompt_logprobs[i] for i in keep]
        return e._update(live, sampled)
