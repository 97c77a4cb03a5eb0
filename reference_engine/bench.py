"""Synthetic workloads and the engine-side measurements shared by `atlas engine bench`
and `benchmarks/engine_bench.py`: throughput, time to first token, per-token latency."""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams


@dataclass(slots=True)
class WorkloadRequest:
    prompt_token_ids: list[int]
    max_tokens: int


def synthetic_workload(
    num_prompts: int,
    prompt_len: tuple[int, int],
    output_len: tuple[int, int],
    vocab_size: int,
    seed: int = 0,
    shared_prefix_len: int = 0,
) -> list[WorkloadRequest]:
    """Random token prompts of varied lengths; with `shared_prefix_len` every prompt
    starts with the same tokens (a system prompt), the rest differs."""
    rng = random.Random(seed)
    # Stay clear of the low ids, where tiny tokenizers keep their special tokens.
    low = min(16, vocab_size - 1)
    prefix = [rng.randrange(low, vocab_size) for _ in range(shared_prefix_len)]
    reqs = []
    for _ in range(num_prompts):
        n = rng.randint(*prompt_len)
        tail = [rng.randrange(low, vocab_size) for _ in range(max(1, n - shared_prefix_len))]
        reqs.append(WorkloadRequest(prefix + tail, rng.randint(*output_len)))
    return reqs


@dataclass(slots=True)
class BenchResult:
    num_requests: int
    num_prompt_tokens: int
    num_output_tokens: int
    seconds: float
    mean_ttft_s: float
    mean_tpot_s: float  # time per output token after the first, averaged over requests
    num_steps: int
    num_preemptions: int
    prefix_cache_hit_rate: float

    @property
    def output_tokens_per_s(self) -> float:
        return self.num_output_tokens / self.seconds

    @property
    def total_tokens_per_s(self) -> float:
        return (self.num_prompt_tokens + self.num_output_tokens) / self.seconds


def run_engine(engine: Engine, reqs: list[WorkloadRequest], tag: str = "") -> BenchResult:
    """All requests arrive at once; greedy, ignore_eos so output lengths are as asked."""
    before = engine.stats()
    start = time.monotonic()
    for i, r in enumerate(reqs):
        params = SamplingParams(temperature=0.0, max_tokens=r.max_tokens, ignore_eos=True)
        engine.add_request(f"{tag}{i}", r.prompt_token_ids, params, arrival_time=start)
    ttft: list[float] = []
    tpot: list[float] = []
    out_tokens = 0
    while engine.has_unfinished_requests():
        for out in engine.step():
            if not out.finished or out.metrics is None:
                continue
            m = out.metrics
            n = len(out.outputs[0].token_ids)
            out_tokens += sum(len(c.token_ids) for c in out.outputs)
            assert m.first_token_time is not None and m.finished_time is not None
            ttft.append(m.first_token_time - m.arrival_time)
            if n > 1:
                tpot.append((m.finished_time - m.first_token_time) / (n - 1))
    seconds = time.monotonic() - start
    after = engine.stats()
    return BenchResult(
        num_requests=len(reqs),
        num_prompt_tokens=sum(len(r.prompt_token_ids) for r in reqs),
        num_output_tokens=out_tokens,
        seconds=seconds,
        mean_ttft_s=statistics.fmean(ttft) if ttft else 0.0,
        mean_tpot_s=statistics.fmean(tpot) if tpot else 0.0,
        num_steps=after.num_steps - before.num_steps,
        num_preemptions=after.num_preemptions - before.num_preemptions,
        prefix_cache_hit_rate=after.prefix_cache_hit_rate,
    )
