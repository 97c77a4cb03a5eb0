"""Tensor parallelism (reference_engine/distributed/): two ranks on gloo against one process.

Random workloads (greedy and seeded sampling, n > 1, aborts, preemption by recompute and
swap, both prefix caches) give every request the tokens it gets alone on a single-process
engine; the float64 checkpoint makes ties impossible, so the partial sums of row-parallel
layers cannot flip a token. Sharded loading is checked slice by slice against the checkpoint,
bad layouts fail before any process starts, and a worker killed with SIGKILL stops the engine
with a clear error, leaving no process behind.
"""

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
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.distributed.executor import WorkerError
from reference_engine.distributed.parallel_state import GroupCoordinator, ParallelState
from reference_engine.loader import iter_checkpoint, load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams

TIMEOUT_S = 60.0  # collectives; generous for a loaded 2-core machine


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"tensor_parallel_size": 3}, r"num_attention_heads \(4\) is not divisible"),
        ({"tensor_parallel_size": 0}, "positive integer"),
        ({"tensor_parallel_size": 2, "expert_parallel_size": 4}, "must equal"),
        ({"expert_parallel_size": 2}, "needs a mixture-of-experts model"),
        ({"context_parallel_size": 2, "tensor_parallel_size": 2}, "combines with no other"),
        ({"pipeline_parallel_size": 3}, r"num_hidden_layers \(2\) is not divisible"),
    ],
)
def test_layouts_that_do_not_fit_fail_before_start(
    random_checkpoint: Any, knobs: dict[str, int], message: str
) -> None:
    model_dir = random_checkpoint("qwen3")
    with pytest.raises(ConfigError, match=message):
        make_engine(model_dir, **knobs)
    assert not dist.is_initialized()


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_each_rank_loads_its_slice_of_the_checkpoint(random_checkpoint: Any, family: str) -> None:
    """qwen3: 2 KV heads split over 2 ranks, tied embedding; llama: 1 KV head replicated,
    biases (q/k/v/o) and an untied LM head."""
    model_dir = random_checkpoint(family)
    full = dict(iter_checkpoint(model_dir))
    cfg = EngineConfig(model=str(model_dir), dtype="float64", num_gpu_blocks=4, block_size=4)
    model_cfg = load_model_config(cfg)
    d, kv_heads = model_cfg.head_dim, model_cfg.num_key_value_heads
    for rank in range(2):
        state = ParallelState(tp=GroupCoordinator(rank, 2))  # loading needs no group
        params = dict(ModelRunner(model_cfg, cfg, state).model.named_parameters())

        def half(t: torch.Tensor, dim: int, r: int = rank) -> torch.Tensor:
            return t.chunk(2, dim=dim)[r]

        p = "model.layers.1."
        q = half(full[p + "self_attn.q_proj.weight"], 0)
        k, v = full[p + "self_attn.k_proj.weight"], full[p + "self_attn.v_proj.weight"]
        if kv_heads >= 2:
            k, v = half(k, 0), half(v, 0)
        assert kv_heads >= 2 or k.shape[0] == d  # one KV head: every rank holds all of it
        assert torch.equal(params[p + "self_attn.qkv_proj.weight"], torch.cat([q, k, v]))
        o = full[p + "self_attn.o_proj.weight"]
        assert torch.equal(params[p + "self_attn.o_proj.weight"], half(o, 1))
        gate, up = full[p + "mlp.gate_proj.weight"], full[p + "mlp.up_proj.weight"]
        assert torch.equal(
            params[p + "mlp.gate_up_proj.weight"], torch.cat([half(gate, 0), half(up, 0)])
        )
        assert torch.equal(
            params[p + "mlp.down_proj.weight"], half(full[p + "mlp.down_proj.weight"], 1)
        )
        embed = full["model.embed_tokens.weight"]
        assert torch.equal(params["model.embed_tokens.weight"], half(embed, 0))
        if "lm_head.weight" in full:
            assert torch.equal(params["lm_head.weight"], half(full["lm_head.weight"], 0))
        if family == "llama":  # o_proj's bias is whole on every rank (added after the sum)
            assert torch.equal(
                params[p + "self_attn.o_proj.bias"], full[p + "self_attn.o_proj.bias"]
            )
        # Norms are replicated.
        assert torch.equal(params["model.norm.weight"], full["model.norm.weight"])


def _workloads(seed: str, count: int) -> list[list[Any]]:
    rng = random.Random(seed)
    return [random_workload(rng) for _ in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "cache", "preemption"), [("qwen3", "hash", "recompute"), ("llama", "radix", "swap")]
)
def test_tp2_tokens_equal_one_process(
    random_checkpoint: Any, family: str, cache: str, preemption: str
) -> None:
    model_dir = random_checkpoint(family)
    workloads = _workloads(f"tp2-{family}-{cache}", 6)
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    blocks = math.ceil(longest / 4) + 1  # barely one long request: preemption is certain
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        tensor_parallel_size=2,
        distributed_timeout_s=TIMEOUT_S,
        num_gpu_blocks=blocks,
        max_num_batched_tokens=8,
        max_num_seqs=4,
        prefix_caching=cache,
        preemption_mode=preemption,
        num_cpu_blocks=blocks if preemption == "swap" else 0,
    )
    try:
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)  # the one pool, on the driver
        stats = engine.stats()
        assert stats.num_preemptions > 0
        assert cache == "none" or stats.prefix_cache_hit_tokens > 0
        assert preemption != "swap" or stats.num_swap_outs > 0
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
    assert all(not p.is_alive() for p in engine.runner.procs)


@pytest.mark.slow
def test_killed_worker_stops_the_engine_with_a_clear_error(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), tensor_parallel_size=2, distributed_timeout_s=TIMEOUT_S
    )
    params = SamplingParams(temperature=0.0, max_tokens=4, ignore_eos=True)
    engine.add_request("a", [5, 6, 7], params)
    engine.step()  # the ranks work together
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=30)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"atlas-rank-1 .* exited with code -9"):
        while engine.has_unfinished_requests():
            engine.step()
    assert time.monotonic() - start < TIMEOUT_S
    assert not dist.is_initialized()
    assert all(not p.is_alive() for p in engine.runner.procs)
    with pytest.raises(WorkerError, match="shut down"):
        engine.step()


@pytest.mark.slow
def test_hung_worker_stops_the_engine_after_the_timeout(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), tensor_parallel_size=2, distributed_timeout_s=4
    )
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGSTOP)  # alive but never answers
    engine.add_request("a", [5, 6, 7], SamplingParams(temperature=0.0, max_tokens=2))
    start = time.monotonic()
    with pytest.raises(WorkerError, match="every rank stopped"):
        engine.step()
    assert time.monotonic() - start < 30
    worker.join(timeout=10)
    assert not worker.is_alive() and not dist.is_initialized()


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"enable_lora": True}, "enable_lora with several ranks is not implemented"),
        ({"quantization": "int8"}, "quantization with several ranks"),
    ],
)
def test_features_not_sharded_yet_say_so(
    random_checkpoint: Any, knobs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        make_engine(random_checkpoint("qwen3"), tensor_parallel_size=2, **knobs)
    assert not dist.is_initialized()
