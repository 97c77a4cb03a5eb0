"""Fit the step-cost model on this machine: run the real engine over batches that span the
model's features and time every step.

The batches are built to separate the features the model needs (cost_model.py): decode
batches of 1 to max_num_seqs at short and long contexts, prefills from a few tokens to a full
token budget, and staggered arrivals that mix chunks with decodes as serving does. Each
step's features come from the scheduler's own output (its `schedule` is wrapped for the
run), its time from the wall clock around `Engine.step`, so the fitted model includes
scheduling, input preparation, sampling and detokenization: the whole step the server runs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from reference_engine.capacity.cost_model import StepCostModel, StepFeatures
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import SchedulerOutput

# (prompt tokens, output tokens, how many at once, steps between arrivals)
Shape = tuple[int, int, int, int]


def calibration_shapes(max_num_seqs: int, token_budget: int, max_len: int) -> list[Shape]:
    """Workloads covering the feature space, kept within the engine's limits."""
    shapes: list[Shape] = []
    batch = 1
    while batch <= max_num_seqs:
        shapes.append((8, 24, batch, 0))  # decode batches at short context
        batch *= 2
    long_prompt = min(384, max_len // 2)
    shapes.append((long_prompt, 24, max(1, min(8, max_num_seqs)), 0))  # decode at long context
    for prompt in (16, 64, token_budget // 2, token_budget, 2 * token_budget):
        if prompt + 2 < max_len:
            shapes.append((prompt, 2, 2, 0))  # prefill-heavy, chunked past the budget
    shapes.append((48, 32, max_num_seqs, 2))  # staggered: chunks beside decodes
    shapes.append((160, 16, max(1, max_num_seqs // 2), 1))
    return shapes


def measure_steps(
    engine: Engine, shapes: list[Shape], repeats: int = 2, seed: int = 0, warmup_steps: int = 8
) -> list[tuple[StepFeatures, float]]:
    """Run each shape `repeats` times; returns (features, seconds) per non-empty step."""
    rng = random.Random(seed)
    vocab = engine.model_config.vocab_size
    low = min(16, vocab - 1)  # clear of tiny tokenizers' special ids
    samples: list[tuple[StepFeatures, float]] = []
    last: list[SchedulerOutput] = []
    schedule: Callable[[], SchedulerOutput] = engine.scheduler.schedule

    def recording_schedule() -> SchedulerOutput:
        out = schedule()
        last.append(out)
        return out

    engine.scheduler.schedule = recording_schedule  # type: ignore[method-assign]
    counter = 0
    try:
        for _ in range(repeats):
            for prompt_len, out_len, count, gap in shapes:
                pending: list[tuple[int, list[int], SamplingParams]] = []
                for i in range(count):
                    ids = [rng.randrange(low, vocab) for _ in range(prompt_len)]
                    params = SamplingParams(max_tokens=out_len, ignore_eos=True, temperature=0.0)
                    pending.append((i * gap, ids, params))
                step = 0
                while pending or engine.has_unfinished_requests():
                    while pending and pending[0][0] <= step:
                        _, ids, params = pending.pop(0)
                        engine.add_request(f"cal-{counter}", ids, params)
                        counter += 1
                    last.clear()
                    start = time.perf_counter()
                    engine.step()
                    seconds = time.perf_counter() - start
                    step += 1
                    if last and last[0].scheduled:
                        samples.append((StepFeatures.of(last[0]), seconds))
    finally:
        del engine.scheduler.schedule  # back to the class's method
    return samples[warmup_steps:]


def calibrate(engine: Engine, model_name: str, threads: int, **kwargs: Any) -> StepCostModel:
    cfg = engine.config
    shapes = calibration_shapes(cfg.max_num_seqs, cfg.max_num_batched_tokens, engine.max_model_len)
    samples = measure_steps(engine, shapes, **kwargs)
    return StepCostModel.fit(
        samples,
        num_blocks=engine.kv.num_blocks,
        block_size=engine.block_size,
        model=model_name,
        threads=threads,
    )
