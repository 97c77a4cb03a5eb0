"""Two-batch overlap (distributed/two_batch_overlap.py) on gloo: the expert-parallel MoE
with each rank's tokens split in two, one half's all-to-all in flight while the other
half's experts compute, generates every request's tokens exactly as one process does, with
preemption and prefix caching, in steps of many tokens and in single-token decodes (where
one micro-batch is empty)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import torch.distributed as dist
from test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

from reference_engine.config import ConfigError, EngineConfig


def test_two_batch_overlap_needs_expert_parallelism() -> None:
    with pytest.raises(ConfigError, match="expert parallelism"):
        EngineConfig(enable_two_batch_overlap=True)


@pytest.mark.slow
@pytest.mark.parametrize("tp", [1, 2])
def test_tbo_ep2_tokens_equal_one_process(random_checkpoint: Any, tp: int) -> None:
    """tp=1: each rank runs the whole attention; tp=2: attention tensor-parallel over the
    same two ranks the experts are split over."""
    model_dir = random_checkpoint("qwen3_moe")
    rng = random.Random(f"tbo-ep2-tp{tp}")
    workloads = [random_workload(rng) for _ in range(3)]
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        tensor_parallel_size=tp,
        expert_parallel_size=2,
        enable_two_batch_overlap=True,
        distributed_timeout_s=60,
        num_gpu_blocks=math.ceil(longest / 4) + 1,
        max_num_batched_tokens=8,
        max_num_seqs=4,
        prefix_caching="radix",
    )
    try:
        moe = engine.runner.model.model.layers[0].mlp.experts
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
        assert engine.stats().num_preemptions > 0
        # The driver's MoE layer ran the overlapped path every step.
        assert moe.overlap_stats.calls == engine.stats().num_steps > 0
        assert 0 <= moe.overlap_stats.wait_s <= moe.overlap_stats.total_s
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
