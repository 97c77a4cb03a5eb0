"""GPT-OSS in the engine: random workloads (preemption, prefix caching, StreamingLLM requests
mixed in) equal solo runs token by token, with its sinks, alternating windows and biased
MoE; logits against transformers are checked in test_model_hf_oracle.py ("gpt-oss")."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from test_model_hf_oracle import _gpt_oss, spread_weights
from test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.kv_window import StreamingLLM

transformers = pytest.importorskip("transformers")


@pytest.mark.slow
def test_gpt_oss_workloads_equal_solo(tmp_path: Path, random_checkpoint: Any) -> None:
    config = _gpt_oss()
    config.vocab_size = 512
    torch.manual_seed(0)
    model = transformers.GptOssForCausalLM(config).to(torch.float64).eval()
    spread_weights(model)
    model.save_pretrained(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(random_checkpoint("qwen3") / name, tmp_path / name)
    solo = make_engine(tmp_path, prefix_caching="none", max_num_seqs=8)
    rng = random.Random("gpt-oss")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = hits = 0
    for cache, preemption in (("hash", "swap"), ("radix", "recompute"), ("hash", "recompute")):
        reqs = random_workload(rng)
        for r in reqs:
            if rng.random() < 0.3:
                r.params.kv_eviction = StreamingLLM(2, 6)
        engine = tight_engine(tmp_path, reqs, rng, cache, preemption, "fcfs")
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        preemptions += engine.stats().num_preemptions
        hits += engine.stats().prefix_cache_hit_tokens
        assert_pool_restored(engine)
    assert preemptions > 0 and hits > 0
