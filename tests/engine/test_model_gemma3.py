"""Gemma 3 (text): local sliding-window layers and global layers with their own RoPE.

- logits match transformers' Gemma3ForCausalLM over packed batches mixing prefills,
  chunks and decodes, with a window short enough that early keys leave it;
- random workloads with preemption and prefix caching equal solo runs token by token.
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

GEMMA3_SHAPE: dict[str, Any] = {
    "hidden_size": 48,
    "intermediate_size": 80,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "query_pre_attn_scalar": 24,  # not head_dim: the score scale must come from it
    "sliding_window": 5,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    "max_position_embeddings": 256,
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "rope_theta": 1000000.0, "factor": 4.0},
    },
    "final_logit_softcapping": 8.0,
    "tie_word_embeddings": True,
}


def write_gemma3(folder: Path, vocab: int) -> torch.nn.Module:
    config = transformers.Gemma3TextConfig(vocab_size=vocab, **GEMMA3_SHAPE)
    config.architectures = ["Gemma3ForCausalLM"]
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(config).to(torch.float64).eval()
    spread_weights(model)
    model.save_pretrained(folder)
    return model


def test_logits_match_transformers(tmp_path: Path) -> None:
    hf = write_gemma3(tmp_path, 300)
    cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=40, block_size=4)
    model_cfg = load_model_config(cfg)
    assert model_cfg.sliding_windows == [5, None, 5, None]
    runner = ModelRunner(model_cfg, cfg)
    assert type(runner.model).__name__ == "Gemma3ForCausalLM"
    # Sequences of 19, 11 and 6 tokens: most queries see past the 5-token window. Gemma's
    # norms run in float32 in transformers even in a float64 model (gaps ~5e-6).
    assert_plan_matches(runner, hf)


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory: pytest.TempPathFactory, random_checkpoint: Any) -> Path:
    folder = tmp_path_factory.mktemp("gemma3")
    write_gemma3(folder, 512)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(random_checkpoint("qwen3") / name, folder / name)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(("cache", "preemption"), [("hash", "swap"), ("radix", "recompute")])
def test_gemma3_workloads_equal_solo(gemma3_dir: Path, cache: str, preemption: str) -> None:
    solo = make_engine(gemma3_dir, prefix_caching="none")
    rng = random.Random(f"gemma3-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = 0
    for _ in range(4):
        reqs = random_workload(rng)
        engine = tight_engine(gemma3_dir, reqs, rng, cache, preemption, "fcfs")
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        preemptions += engine.stats().num_preemptions
        assert_pool_restored(engine)
    assert preemptions > 0
