"""Pipeline parallelism (distributed/pipeline_parallel.py, batch_queue.py) on gloo against
one process: two stages (and two stages of two tensor-parallel ranks), consecutive scheduler
steps over disjoint requests in flight, every request's tokens equal to a single-process
engine's."""

from __future__ import annotations

import math
import os
import random
import signal
import time
from typing import Any

import pytest
import torch
import torch.distributed as dist
from test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

from reference_engine.config import EngineConfig
from reference_engine.distributed.executor import WorkerError
from reference_engine.distributed.parallel_state import GroupCoordinator, ParallelState
from reference_engine.distributed.pipeline_parallel import PPMissingLayer
from reference_engine.loader import iter_checkpoint, load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams


def test_a_stage_holds_only_its_layers(random_checkpoint: Any) -> None:
    model_dir = random_checkpoint("qwen3")
    full = dict(iter_checkpoint(model_dir))
    cfg = EngineConfig(model=str(model_dir), dtype="float64", num_gpu_blocks=4, block_size=4)
    runner = ModelRunner(
        load_model_config(cfg), cfg, ParallelState(pp=GroupCoordinator(1, 2, None, (0, 1)))
    )
    layers = runner.model.model.layers
    assert isinstance(layers[0], PPMissingLayer) and not isinstance(layers[1], PPMissingLayer)
    params = dict(runner.model.named_parameters())
    assert not any(name.startswith("model.layers.0.") for name in params)
    q = full["model.layers.1.self_attn.q_proj.weight"]
    assert torch.equal(params["model.layers.1.self_attn.qkv_proj.weight"][: q.shape[0]], q)
    assert runner.kv_caches[0][0].shape[0] == 0 and runner.kv_caches[1][0].shape[0] == 5


def test_a_sliding_window_stage_sets_windows_on_its_own_layers_only(
    random_checkpoint: Any,
) -> None:
    # Mistral: every layer slides; the other stage's layers have no attention to set.
    model_dir = random_checkpoint("mistral")
    cfg = EngineConfig(model=str(model_dir), dtype="float64", num_gpu_blocks=4, block_size=4)
    model_cfg = load_model_config(cfg)
    runner = ModelRunner(model_cfg, cfg, ParallelState(pp=GroupCoordinator(1, 2, None, (0, 1))))
    layers = runner.model.model.layers
    assert isinstance(layers[0], PPMissingLayer)
    assert layers[1].self_attn.attn.sliding_window == model_cfg.sliding_windows[1] == 7


@pytest.mark.slow
@pytest.mark.parametrize("tp", [1, 2])
def test_pp2_tokens_equal_one_process(random_checkpoint: Any, tp: int) -> None:
    model_dir = random_checkpoint("qwen3")
    rng = random.Random(f"pp2-tp{tp}")
    workloads = [random_workload(rng) for _ in range(4)]
    # A prompt prefix the second request finds in the prefix cache.
    greedy = SamplingParams(temperature=0.0, max_tokens=3, ignore_eos=True)
    workloads.append([Req(list(range(40, 52)), greedy, 0), Req(list(range(40, 50)), greedy, 6)])
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    blocks = math.ceil(longest / 4) + 1
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        pipeline_parallel_size=2,
        tensor_parallel_size=tp,
        distributed_timeout_s=90,
        num_gpu_blocks=blocks,
        max_num_batched_tokens=16,
        max_num_seqs=4,
        prefix_caching="hash" if tp == 1 else "radix",
        preemption_mode="swap",
        num_cpu_blocks=blocks,
    )
    try:
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
        stats = engine.stats()
        assert stats.num_preemptions > 0 and stats.prefix_cache_hit_tokens > 0
        # Consecutive steps over disjoint requests were in flight together.
        assert engine.batch_queue is not None and engine.batch_queue.max_in_flight == 2
        times = engine.runner.stage_times
        assert len(times.busy_s) == 2 and times.steps == stats.num_steps
        assert 0.0 <= times.bubble_fraction < 1.0
        print(f"pp=2 tp={tp}: bubble fraction {times.bubble_fraction:.2f} over {times.steps} steps")
    finally:
        engine.shutdown()
    assert not dist.is_initialized()


@pytest.mark.slow
def test_killed_stage_with_steps_in_flight_stops_the_engine(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), pipeline_parallel_size=2, distributed_timeout_s=60
    )
    params = SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True)
    engine.add_request("a", [5, 6, 7], params)
    engine.add_request("b", [8, 9], params)
    assert engine.batch_queue is not None
    for _ in range(4):  # prefill both, then one decode of each in flight
        engine.step()
    assert engine.batch_queue.in_flight >= 1
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=30)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"atlas-rank-1 .* exited with code -9"):
        while engine.has_unfinished_requests():
            engine.step()
    assert time.monotonic() - start < 60
    assert not dist.is_initialized()
    with pytest.raises(WorkerError, match="shut down"):
        engine.step()


@pytest.mark.slow
def test_hung_stage_stops_the_engine_after_the_timeout(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), pipeline_parallel_size=2, distributed_timeout_s=4
    )
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGSTOP)  # alive but never answers
    engine.add_request("a", [5, 6, 7], SamplingParams(temperature=0.0, max_tokens=2))
    start = time.monotonic()
    with pytest.raises(WorkerError, match="every rank stopped"):
        while engine.has_unfinished_requests():
            engine.step()
    assert time.monotonic() - start < 30
    worker.join(timeout=10)
    assert not worker.is_alive() and not dist.is_initialized()
