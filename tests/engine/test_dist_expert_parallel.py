"""Expert parallelism (distributed/expert_dispatch.py, expert_placement.py) on gloo against
one process: Qwen3-MoE with its experts split over two ranks, tokens dispatched and combined
with all-to-all, generates every request's tokens exactly as a single process does."""

from __future__ import annotations

import math
import random
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

from reference_engine.config import EngineConfig
from reference_engine.distributed.expert_placement import ExpertPlacement
from reference_engine.distributed.parallel_state import GroupCoordinator, ParallelState
from reference_engine.loader import iter_checkpoint, load_model_config
from reference_engine.model_runner import ModelRunner


def test_balanced_placement_spreads_hot_experts() -> None:
    load = [100.0, 5.0, 5.0, 5.0, 60.0, 5.0, 5.0, 5.0]
    plain = ExpertPlacement.contiguous(8, 2)
    assert plain.local_experts(0) == [0, 1, 2, 3]
    balanced = ExpertPlacement.balanced(load, num_ranks=2, num_redundant=2)
    assert len(balanced.physical_to_logical) == 10 and balanced.slots_per_rank == 5
    assert sorted(set(balanced.physical_to_logical)) == list(range(8))  # every expert kept
    assert len(balanced.replicas()[0]) == 2  # the hottest expert got a copy
    assert balanced.max_rank_load(load) < plain.max_rank_load(load)
    # Routing sends each pair to a slot that holds its expert.
    experts = torch.tensor([0, 0, 4, 1, 0, 7])
    slots = balanced.route(experts, torch.arange(6))
    assert [balanced.physical_to_logical[s] for s in slots.tolist()] == experts.tolist()
    with pytest.raises(ValueError, match="do not divide"):
        ExpertPlacement.balanced(load, num_ranks=2, num_redundant=1)


def test_each_rank_loads_only_its_experts(random_checkpoint: Any) -> None:
    model_dir = random_checkpoint("qwen3_moe")
    full = dict(iter_checkpoint(model_dir))
    cfg = EngineConfig(model=str(model_dir), dtype="float64", num_gpu_blocks=4, block_size=4)
    model_cfg = load_model_config(cfg)
    for rank in range(2):
        state = ParallelState(ep=GroupCoordinator(rank, 2))
        moe = ModelRunner(model_cfg, cfg, state).model.model.layers[0].mlp.experts
        assert moe.local_experts == list(range(rank * 4, rank * 4 + 4))
        for slot, e in enumerate(moe.local_experts):
            p = f"model.layers.0.mlp.experts.{e}."
            gate_up = torch.cat([full[p + "gate_proj.weight"], full[p + "up_proj.weight"]])
            assert torch.equal(moe.w13_weight[slot], gate_up)
            assert torch.equal(moe.w2_weight[slot], full[p + "down_proj.weight"])


@pytest.mark.slow
@pytest.mark.parametrize("tp", [1, 2])
def test_ep2_tokens_equal_one_process(random_checkpoint: Any, tp: int) -> None:
    """tp=1: each rank runs the whole attention, experts split; tp=2: attention
    tensor-parallel, experts split over the same two ranks."""
    model_dir = random_checkpoint("qwen3_moe")
    rng = random.Random(f"ep2-tp{tp}")
    workloads = [random_workload(rng) for _ in range(4)]
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    blocks = math.ceil(longest / 4) + 1
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        tensor_parallel_size=tp,
        expert_parallel_size=2,
        distributed_timeout_s=60,
        num_gpu_blocks=blocks,
        max_num_batched_tokens=8,
        max_num_seqs=4,
        prefix_caching="radix",
    )
    try:
        moe = engine.runner.model.model.layers[0].mlp.experts
        assert moe.local_experts == [0, 1, 2, 3]  # rank 0 holds half the experts
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
        assert engine.stats().num_preemptions > 0
    finally:
        engine.shutdown()
    assert not dist.is_initialized()


@pytest.mark.slow
def test_eplb_replan_keeps_outputs(random_checkpoint: Any) -> None:
    """Measured load -> redundant copies of hot experts on both ranks; tokens unchanged."""
    model_dir = random_checkpoint("qwen3_moe")
    rng = random.Random("eplb")
    workloads = [random_workload(rng) for _ in range(4)]
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir, expert_parallel_size=2, distributed_timeout_s=60, prefix_caching="hash"
    )
    try:
        for reqs in workloads[:2]:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        report = engine.runner.rebalance_experts(num_redundant=2)
        assert report.layers == ["model.layers.0.mlp.experts"]  # layer 1 is dense
        assert report.max_rank_load_after[0] <= report.max_rank_load_before[0]
        moe = engine.runner.model.model.layers[0].mlp.experts
        assert len(moe.local_experts) == 5 and moe.placement.slots_per_rank == 5
        assert len(moe.placement.physical_to_logical) == 10
        for slot, e in enumerate(moe.local_experts):  # reloaded from the checkpoint
            p = f"model.layers.0.mlp.experts.{e}."
            down = dict(iter_checkpoint(model_dir))[p + "down_proj.weight"]
            assert torch.equal(moe.w2_weight[slot], down)
        for reqs in workloads[2:]:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
