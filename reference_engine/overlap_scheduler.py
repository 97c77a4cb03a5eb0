"""Overlap scheduling (SGLang's overlap scheduler, vLLM's async scheduling): the CPU work of
step N+1 runs while step N's forward pass does.

One `step()` call, with step N's forward running on the worker thread:

    schedule N+1, build its batch        CPU, overlapped with forward N
    wait for N's logits, sample N        (the tokens N+1 needs as input)
    fill N's tokens into N+1's batch     one step late: they were placeholders
    launch forward N+1                   worker thread
    update N: append, detokenize, stop   CPU, overlapped with forward N+1
    return N's outputs

The scheduler plans N+1 before N's tokens exist: a sequence sampling in N counts that
token already (Sequence.num_inflight_tokens), so N+1 schedules it as a decode whose input
is a placeholder (INFLIGHT_TOKEN) patched in before launch. A sequence that stops in N,
or is aborted while N+1 is in flight, still has a row in N+1: that row's token is dropped
when N+1 is collected, and its blocks may be reused at once, since every later block
move or forward pass runs after N+1 on the same worker, and a KV tier copy on this
thread first waits for it (wait_forward). Outputs equal the plain engine's
token for token (tests/engine/test_overlap_scheduler.py).

Owned by the Engine when EngineConfig.async_scheduling is set; it drives the engine's own
phases (_prepare, _forward, _sample, _update) and the scheduler.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.scheduler import SchedulerOutput

if TYPE_CHECKING:
    from reference_engine.engine import Engine, _StepSamples
    from reference_engine.outputs import RequestOutput

INFLIGHT_TOKEN = 0  # a valid id, so a placeholder row could never index out of range


@dataclass(slots=True)
class OverlapStats:
    """Where a step's time went (owned by OverlapScheduler; benchmarks read it)."""

    num_steps: int = 0
    # Steps scheduled while the previous one's forward was launched and not yet collected:
    # the overlap by construction (the timings below depend on the machine's load).
    num_scheduled_in_flight: int = 0
    # Scheduling, batch building and updates, timed per phase: hidden when a forward pass
    # was still running as the phase ended, exposed otherwise.
    cpu_overlapped_s: float = 0.0
    cpu_exposed_s: float = 0.0
    wait_s: float = 0.0  # the main thread waiting for a forward to finish


@dataclass(slots=True)
class _InFlight:
    out: SchedulerOutput
    logits: Future[torch.Tensor]
    moved: threading.Event  # the step's block moves ran: copy sources may be released


class OverlapScheduler:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="atlas-forward")
        self.inflight: _InFlight | None = None
        self.stats = OverlapStats()

    def _cpu(self, seconds: float) -> None:
        busy = self.inflight is not None and not self.inflight.logits.done()
        if busy:
            self.stats.cpu_overlapped_s += seconds
        else:
            self.stats.cpu_exposed_s += seconds

    def step(self) -> list[RequestOutput]:
        e = self.engine
        start = time.perf_counter()
        self.stats.num_scheduled_in_flight += self.inflight is not None
        out = e.scheduler.schedule()
        prepared = e._prepare(out) if not out.is_empty else None
        # Rows whose input is the token the step in flight is sampling.
        placeholders: list[tuple[int, Any]] = []
        if prepared is not None:
            rows = prepared[1].query_start_loc.tolist()
            for i, item in enumerate(out.scheduled):
                known = len(item.seq.prompt_token_ids) + len(item.seq.output_token_ids)
                for pos in range(max(item.start, known), item.end):
                    placeholders.append((rows[i] + pos - item.start, item.seq))
        self._cpu(time.perf_counter() - start)

        prev, self.inflight = self.inflight, None
        # The requests a failure in this call touches: the step collected and the one built.
        e.step_request_ids = {item.seq.request_id for item in out.scheduled}
        if prev is not None:
            e.step_request_ids |= {item.seq.request_id for item in prev.out.scheduled}
        sampled: _StepSamples | None = None
        if prev is not None:
            waited = time.perf_counter()
            logits = prev.logits.result()
            self.stats.wait_s += time.perf_counter() - waited
            sampled = e._sample(prev.out, logits)
            latest = {
                id(item.seq): tokens[-1]
                for item, tokens in zip(prev.out.scheduled, sampled.tokens, strict=True)
                if tokens
            }
            if prepared is not None:
                for row, seq in placeholders:
                    prepared[1].input_ids[row] = latest[id(seq)]
        elif prepared is None:
            if e.scheduler.has_unfinished() and not out.preempted:
                raise RuntimeError("scheduler made no progress with nothing in flight")
            return []

        if prepared is not None:
            moved = threading.Event()
            inputs, batch = prepared

            def forward() -> torch.Tensor:
                e.runner.swap_out(out.blocks_to_swap_out)
                e.runner.swap_in(out.blocks_to_swap_in)
                e.runner.copy_blocks(out.blocks_to_copy)
                moved.set()
                return e._forward(out, inputs, batch, move_blocks=False)

            self.inflight = _InFlight(out, self.worker.submit(forward), moved)
            for item in out.scheduled:
                if item.samples:
                    item.seq.num_inflight_tokens += 1

        start = time.perf_counter()
        outputs = self._update(prev.out, sampled) if prev is not None and sampled else []
        if self.inflight is not None:
            self.inflight.moved.wait()
            # After N's tokens are appended: the cache hashes the tokens it now holds.
            e.scheduler.on_step_done(out)
            e._num_steps += 1
            self.stats.num_steps += 1
        self._cpu(time.perf_counter() - start)
        return outputs

    def _update(self, out: SchedulerOutput, sampled: _StepSamples) -> list[RequestOutput]:
        """The engine's update for the collected step, without rows whose sequence ended
        (stopped or aborted) while the step was in flight."""
        keep = []
        for i, item in enumerate(out.scheduled):
            if item.samples:
                item.seq.num_inflight_tokens -= 1
            if not item.seq.is_finished and item.seq.request_id in self.engine.requests:
                keep.append(i)
        live = SchedulerOutput(scheduled=[out.scheduled[i] for i in keep])
        sampled.tokens = [sampled.tokens[i] for i in keep]
        sampled.logprobs = [sampled.logprobs[i] for i in keep]
        sampled.prompt_logprobs = [sampled.prompt_logprobs[i] for i in keep]
        return self.engine._update(live, sampled)

    def wait_forward(self) -> None:
        """Block until the forward pass in flight is done (its outputs, or its error, stay
        to collect): weight updates must not change the model under it, and KV tier copies
        must not touch blocks it reads or writes (kv_tiers/hierarchy.py)."""
        if self.inflight is not None:
            wait([self.inflight.logits])

    def drain(self) -> list[RequestOutput]:
        """Collect the step in flight without launching another (its outputs, if any)."""
        prev, self.inflight = self.inflight, None
        if prev is None:
            return []
        sampled = self.engine._sample(prev.out, prev.logits.result())
        return self._update(prev.out, sampled)
