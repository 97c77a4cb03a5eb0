"""MLA (DeepSeek-V3) against transformers' DeepseekV3ForCausalLM, path against path, and
batched workloads against solo runs.

The tiny configs keep DeepSeek-V3's shape (compressed query, latent KV, decoupled and
interleaved RoPE, nope/rope/v head dims all different) at toy sizes.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from test_model_hf_oracle import assert_plan_matches, spread_weights
from test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.config import EngineConfig
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner

transformers = pytest.importorskip("transformers")

MLA_SHAPE: dict[str, Any] = {
    "hidden_size": 48,
    "intermediate_size": 80,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,  # transformers' default (128) would break its own eager path
    "kv_lora_rank": 16,
    "q_lora_rank": 24,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 12,
    "v_head_dim": 10,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
    # Layer 0 dense, layer 1 MoE: 8 routed experts in 4 groups, tokens keep their best 2
    # groups and pick 3 experts there, plus one shared expert.
    "first_k_dense_replace": 1,
    "n_routed_experts": 8,
    "num_experts_per_tok": 3,
    "n_group": 4,
    "topk_group": 2,
    "moe_intermediate_size": 20,
    "n_shared_experts": 1,
    "routed_scaling_factor": 2.5,
}


def write_deepseek(folder: Path, vocab: int, **overrides: Any) -> torch.nn.Module:
    config = transformers.DeepseekV3Config(vocab_size=vocab, **{**MLA_SHAPE, **overrides})
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # the grouped-mm kernel has no float64
    torch.manual_seed(0)
    model = transformers.DeepseekV3ForCausalLM(config).to(torch.float64).eval()
    spread_weights(model)
    model.save_pretrained(folder)
    return model


def _runner(folder: Path) -> ModelRunner:
    cfg = EngineConfig(model=str(folder), dtype="float64", num_gpu_blocks=40, block_size=4)
    return ModelRunner(load_model_config(cfg), cfg)


@pytest.mark.parametrize("q_lora_rank", [24, None])
def test_logits_match_transformers_on_both_paths(tmp_path: Path, q_lora_rank: int | None) -> None:
    hf = write_deepseek(tmp_path, 300, q_lora_rank=q_lora_rank)
    runner = _runner(tmp_path)
    # One latent per token per layer: kv_lora_rank + qk_rope_head_dim wide, no head axis.
    assert [tuple(t.shape[1:]) for t in runner.kv_caches[0]] == [(4, 1, 16 + 8)]
    assert runner.kv_bytes_per_token == 2 * (16 + 8) * 8
    results = {}
    for prefill, decode in [("plain", "absorbed"), ("absorbed", "plain"), ("plain", "plain")]:
        runner.model.set_attention_paths(prefill, decode)
        results[prefill, decode] = assert_plan_matches(runner, hf)
    # Absorbed and plain are the same function: agreement to float64 rounding.
    for a, b in zip(results["plain", "absorbed"], results["absorbed", "plain"], strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory, random_checkpoint: Any) -> dict[str, Path]:
    folders = {}
    for name, write in (("v3", write_deepseek), ("v32", lambda f, v: write_deepseek_v32(f, v))):
        folder = tmp_path_factory.mktemp(f"deepseek-{name}")
        write(folder, 512)
        for file in ("tokenizer.json", "tokenizer_config.json"):
            src = random_checkpoint("qwen3") / file
            if src.is_file():
                shutil.copy(src, folder / file)
        folders[name] = folder
    return folders


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "cache", "preemption"),
    [("v3", "hash", "recompute"), ("v3", "radix", "swap"), ("v32", "hash", "swap")],
)
def test_mla_workloads_equal_solo(
    model_dirs: dict[str, Path], family: str, cache: str, preemption: str
) -> None:
    mla_dir = model_dirs[family]
    solo = make_engine(mla_dir, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"mla-{family}-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = hits = 0
    for _ in range(5):
        reqs = random_workload(rng)
        engine = tight_engine(mla_dir, reqs, rng, cache, preemption, "fcfs")
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        preemptions += engine.stats().num_preemptions
        hits += engine.stats().prefix_cache_hit_tokens
        assert_pool_restored(engine)
    assert preemptions > 0 and hits > 0


# DeepSeek-V3.2: the same MLA shape plus a sparse-attention indexer keeping 6 tokens per
# query, fewer than most queries in the plan see, so the selection matters.
DSA_SHAPE: dict[str, Any] = {"index_n_heads": 8, "index_head_dim": 16, "index_topk": 6}


def write_deepseek_v32(folder: Path, vocab: int) -> torch.nn.Module:
    config = transformers.DeepseekV32Config(vocab_size=vocab, **{**MLA_SHAPE, **DSA_SHAPE})
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.DeepseekV32ForCausalLM(config).to(torch.float64).eval()
    spread_weights(model)
    model.save_pretrained(folder)
    return model


def test_yarn_rope_matches_transformers(tmp_path: Path) -> None:
    """DeepSeek-V3's published RoPE: YaRN with mscale_all_dim, whose temperature goes into
    the softmax scale."""
    yarn = {
        "rope_type": "yarn",
        "rope_theta": 10000.0,
        "factor": 8.0,
        "original_max_position_embeddings": 16,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    }
    hf = write_deepseek(tmp_path, 300, rope_parameters=yarn)
    runner = _runner(tmp_path)
    assert runner.model_config.rope_scaling["rope_type"] == "yarn"
    assert_plan_matches(runner, hf)


def test_sparse_attention_matches_transformers(tmp_path: Path) -> None:
    """DSA: logits equal transformers' DeepseekV32ForCausalLM (the same top-k chosen), on
    both MLA paths; the indexer key is cached beside the latent; dense MLA differs."""
    hf = write_deepseek_v32(tmp_path, 300)
    runner = _runner(tmp_path)
    assert [tuple(t.shape[2:]) for t in runner.kv_caches[0]] == [(1, 16 + 8), (1, 16)]
    for prefill, decode in [("plain", "absorbed"), ("absorbed", "plain")]:
        runner.model.set_attention_paths(prefill, decode)
        assert_plan_matches(runner, hf)
    for layer in runner.model.model.layers:
        layer.self_attn.indexer.topk = 10**6  # keep everything: dense attention
    with pytest.raises(AssertionError):
        assert_plan_matches(runner, hf)  # without the selection the logits move


def test_h2o_is_refused_on_latent_attention(model_dirs: dict[str, Path]) -> None:
    """H2O scores come from paged attention's probabilities; MLA does not produce them."""
    from reference_engine.engine import RequestError
    from reference_engine.kv_window import H2O
    from reference_engine.sampling_params import SamplingParams

    engine = make_engine(model_dirs["v3"], prefix_caching="none")
    with pytest.raises(RequestError, match="H2O"):
        engine.add_request("r", [5, 6, 7], SamplingParams(max_tokens=2, kv_eviction=H2O(2, 4)))
    assert not engine.has_unfinished_requests()
