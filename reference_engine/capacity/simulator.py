"""A discrete-event simulation of the engine under a load generator's traffic.

No model runs: the real Scheduler and KVCacheManager decide each step exactly as in the
engine (admission, chunked prefill, prefix-cache hits, preemption), the step-cost model says
how long the step took, and the clock jumps by that much. Arrivals follow the load generator:
a Poisson process with the same seeded exponential gaps as `atlas engine loadtest --rate`
(open loop), or a fixed pool of clients each sending its next request when the last one
finishes (closed loop). Requests that arrive during a step join at the next step, as they do
when the server's engine thread drains its queue between steps.

Each request's timings become the load generator's own RequestResult, so the simulated run
is summarised by the same code as a measured one (loadtest/report.py).
"""

from __future__ import annotations

import heapq
import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reference_engine.capacity.cost_model import StepCostModel, StepFeatures
from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.loadtest.client import RequestResult
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import Scheduler, SchedulerConfig, SchedulerOutput
from reference_engine.sequence import Sequence, SequenceStatus


@dataclass(frozen=True, slots=True)
class SimRequest:
    prompt_token_ids: list[int]
    max_tokens: int


@dataclass(frozen=True, slots=True)
class Traffic:
    """The load generator's plan (loadtest/runner.py's LoadPlan), in token ids."""

    requests: list[SimRequest]  # cycled through when the run outlasts the list
    rate: float | None = None  # open loop: mean arrivals per second
    concurrency: int | None = None  # closed loop
    num_requests: int | None = None
    duration_s: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.rate is None) == (self.concurrency is None):
            raise ValueError("give exactly one of rate (open loop) or concurrency (closed loop)")
        if self.rate is not None and not self.rate > 0:
            raise ValueError(f"rate must be positive, got {self.rate}")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.num_requests is None and self.duration_s is None:
            raise ValueError("give a number of requests, a duration, or both")
        if not self.requests:
            raise ValueError("the workload is empty")


@dataclass(slots=True)
class SimResult:
    results: list[RequestResult]
    wall_s: float  # simulated seconds from the first arrival to the last token
    cpu_s: float  # what simulating it cost
    num_steps: int
    num_preemptions: int
    prefix_cache_hit_rate: float

    @property
    def cpu_s_per_simulated_hour(self) -> float:
        return self.cpu_s * 3600.0 / max(self.wall_s, 1e-9)


@dataclass(slots=True)
class _Tracked:
    """One simulated request's timeline (owner: the simulation loop)."""

    seq: Sequence
    arrival: float
    max_tokens: int  # the request's (SimRequest's) length, always set here
    token_times: list[float] = field(default_factory=list)


class Simulator:
    def __init__(
        self,
        cost: StepCostModel,
        scheduler_config: SchedulerConfig,
        prefix_caching: str = "hash",
        vocab_size: int = 1 << 16,
        num_blocks: int | None = None,
        noise: bool = False,
    ) -> None:
        """`noise`: each step's time is the cost model's mean times a ratio drawn (seeded by
        the traffic's seed) from the calibration's measured / predicted distribution."""
        self.cost = cost
        self.noise = noise
        self.scheduler_config = scheduler_config
        self.prefix_caching = prefix_caching if scheduler_config.prefix_caching else "none"
        self.vocab_size = vocab_size
        self.num_blocks = num_blocks or cost.num_blocks

    def run(
        self,
        traffic: Traffic,
        max_steps: int = 5_000_000,
        on_step: Callable[[float, SchedulerOutput], None] | None = None,
    ) -> SimResult:
        """Simulate `traffic` to its last token; `on_step(now, out)` sees every step's
        scheduler output with the clock at the step's end."""
        cpu_start = time.process_time()
        kv = KVCacheManager(self.num_blocks, self.cost.block_size, self.prefix_caching)
        sched = Scheduler(self.scheduler_config, kv)
        arrivals = _ArrivalProcess(traffic)
        tracked: dict[str, _Tracked] = {}
        done: list[_Tracked] = []
        now = 0.0
        steps = 0
        noise = random.Random(f"steps-{traffic.seed}") if self.noise else None
        while True:
            if not sched.has_unfinished():
                next_at = arrivals.next_time()
                if next_at is None:
                    break
                now = max(now, next_at)
            for index, at, req in arrivals.pop_until(now):
                seq = Sequence(
                    seq_id=str(index),
                    request_id=str(index),
                    index=0,
                    prompt_token_ids=list(req.prompt_token_ids),
                    params=SamplingParams(max_tokens=req.max_tokens, ignore_eos=True),
                    arrival_time=at,
                    order=index,
                )
                tracked[seq.seq_id] = _Tracked(seq, at, req.max_tokens)
                sched.add(seq)
            out = sched.schedule()
            steps += 1
            if steps > max_steps:
                raise RuntimeError(f"the simulation ran past {max_steps} steps")
            if out.is_empty:
                if not out.preempted:
                    raise RuntimeError("the scheduler made no progress (the KV pool is too small?)")
                continue
            now += self.cost.predict(StepFeatures.of(out), noise)
            if on_step is not None:
                on_step(now, out)
            sched.on_step_done(out)
            for item in out.scheduled:
                if not item.samples:
                    continue
                seq = item.seq
                # A distinct token per request and position: outputs never match another
                # request's prefix, as real sampled text (almost) never does.
                seq.output_token_ids.append(self._token(seq))
                t = tracked[seq.seq_id]
                t.token_times.append(now)
                if len(seq.output_token_ids) >= t.max_tokens:
                    sched.finish(seq, SequenceStatus.FINISHED_LENGTH)
                    done.append(tracked.pop(seq.seq_id))
                    arrivals.on_finish(now)
        stats = kv.cache.stats
        first = min((t.arrival for t in done), default=0.0)
        return SimResult(
            results=[
                _result(t, self.cost.request_overhead_s)
                for t in sorted(done, key=lambda t: (t.arrival, t.seq.order))
            ],
            wall_s=now - first + self.cost.request_overhead_s,
            cpu_s=time.process_time() - cpu_start,
            num_steps=steps,
            num_preemptions=sched.num_preemptions,
            prefix_cache_hit_rate=stats.hit_rate,
        )

    def _token(self, seq: Sequence) -> int:
        low = min(16, self.vocab_size - 1)
        h = hash((seq.order, len(seq.output_token_ids))) % (self.vocab_size - low)
        return low + h


def _result(t: _Tracked, overhead_s: float) -> RequestResult:
    """The client's view: each token reaches it `overhead_s` after the engine's (the cost
    model's request_overhead_s), so TTFT and latency move and the gaps between tokens don't."""
    times = t.token_times
    return RequestResult(
        ok=True,
        start=t.arrival,
        latency_s=times[-1] - t.arrival + overhead_s,
        ttft_s=times[0] - t.arrival + overhead_s,
        itl_s=[b - a for a, b in itertools.pairwise(times)],
        prompt_tokens=t.seq.num_prompt_tokens,
        output_tokens=len(times),
    )


class _ArrivalProcess:
    """When requests arrive: Poisson (open loop) or on a client's previous finish (closed)."""

    def __init__(self, traffic: Traffic) -> None:
        self.traffic = traffic
        self.rng = random.Random(traffic.seed)
        self.sent = 0
        self.heap: list[tuple[float, int]] = []
        if traffic.rate is not None:
            self._push(0.0)  # the open loop sends its first request at once
        else:
            assert traffic.concurrency is not None
            for _ in range(traffic.concurrency):
                self._push(0.0)

    def _allowed(self, at: float) -> bool:
        t = self.traffic
        if t.num_requests is not None and self.sent >= t.num_requests:
            return False
        return t.duration_s is None or at < t.duration_s

    def _push(self, at: float) -> None:
        if self._allowed(at):
            heapq.heappush(self.heap, (at, self.sent))
            self.sent += 1

    def next_time(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def pop_until(self, now: float) -> list[tuple[int, float, SimRequest]]:
        ready = []
        while self.heap and self.heap[0][0] <= now:
            at, index = heapq.heappop(self.heap)
            reqs = self.traffic.requests
            ready.append((index, at, reqs[index % len(reqs)]))
            if self.traffic.rate is not None:
                self._push(at + self.rng.expovariate(self.traffic.rate))
        return ready

    def on_finish(self, now: float) -> None:
        if self.traffic.concurrency is not None:
            self._push(now)  # that client sends its next request
