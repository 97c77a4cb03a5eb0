"""The mixture-of-experts layer (layers/fused_moe.py): routing rules, the expert-grouped
computation against a per-token loop, and Qwen3-MoE in the engine against generating each
request alone (logits against transformers are in test_model_hf_oracle.py)."""

from __future__ import annotations

import random
from pathlib import Path

import torch
import torch.nn.functional as F
from test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.layers.fused_moe import FusedMoE, grouped_experts, select_experts


def test_grouped_experts_equal_a_loop_over_tokens() -> None:
    gen = torch.Generator().manual_seed(0)
    tokens, hidden, inter, experts, k = 23, 16, 12, 5, 2
    x = torch.randn(tokens, hidden, generator=gen, dtype=torch.float64)
    w13 = torch.randn(experts, 2 * inter, hidden, generator=gen, dtype=torch.float64)
    w2 = torch.randn(experts, hidden, inter, generator=gen, dtype=torch.float64)
    routing = select_experts(
        torch.randn(tokens, experts, generator=gen, dtype=torch.float64), k, True
    )
    token_idx = torch.arange(tokens).repeat_interleave(k)
    got = grouped_experts(x, token_idx, routing.ids.reshape(-1), w13, w2)
    for p, (t, e) in enumerate(
        zip(token_idx.tolist(), routing.ids.reshape(-1).tolist(), strict=True)
    ):
        gate, up = (x[t] @ w13[e].T).chunk(2)
        torch.testing.assert_close(got[p], (F.silu(gate) * up) @ w2[e].T)


def test_routing_rules() -> None:
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.0, 3.0, 2.9, 0.0]], dtype=torch.float64)
    plain = select_experts(logits, 2, renormalize=False)
    assert plain.ids.tolist() == [[0, 1], [1, 2]]
    torch.testing.assert_close(plain.weights, torch.softmax(logits, -1).gather(-1, plain.ids))
    normed = select_experts(logits, 2, renormalize=True)
    torch.testing.assert_close(normed.weights.sum(-1), torch.ones(2, dtype=torch.float64))
    # A correction bias changes which experts win, not the weights they get (DeepSeek-V3).
    bias = torch.tensor([0.0, 0.0, 0.0, 5.0], dtype=torch.float64)
    shifted = select_experts(
        logits, 1, False, "sigmoid", correction_bias=bias, routed_scaling_factor=2.5
    )
    assert shifted.ids.tolist() == [[3], [3]]
    torch.testing.assert_close(shifted.weights[:, 0], 2.5 * torch.sigmoid(logits[:, 3]))


def test_checkpoint_names_of_experts() -> None:
    assert FusedMoE.map_checkpoint_name("model.layers.3.mlp.experts.17.down_proj.weight") == (
        "model.layers.3.mlp.experts.w2_weight",
        "17.down",
    )
    assert FusedMoE.map_checkpoint_name("model.layers.3.mlp.gate.weight") is None


def test_qwen3_moe_batched_tokens_equal_solo_tokens(random_checkpoint) -> None:  # type: ignore[no-untyped-def]
    model_dir: Path = random_checkpoint("qwen3_moe", dtype="float64")
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    rng = random.Random("qwen3-moe")
    cache: dict = {}
    preemptions = 0
    for _ in range(4):
        reqs = random_workload(rng)
        engine = tight_engine(model_dir, reqs, rng, "radix", "recompute", "fcfs")
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, cache)
        preemptions += engine.stats().num_preemptions
        assert_pool_restored(engine)
    assert preemptions > 0
    # Every expert of the sparse layer saw tokens: the router really spreads them.
    load = solo.runner.model.model.layers[0].mlp.experts.expert_load
    assert load is not None
    assert (load > 0).all(), load
