"""Sliding-window layers and StreamingLLM eviction in the engine.

- numerics: a StreamingLLM request's logits equal transformers' model run with the same
  sink + recent mask as a custom 4-D attention mask (sliding-window families are checked in
  test_model_hf_oracle.py against transformers' own sliding layers);
- memory: blocks that slide out of every layer's window are freed while the request runs,
  so what it holds stays bounded by the window, not its length;
- scheduling: random workloads mixing policies, preemption and both prefix caches produce
  the same tokens as each request alone, and leave no block behind.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch
from test_model_hf_oracle import spread_weights
from test_verify_random_workloads import (
    BLOCK_SIZE,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.kv_window import FREED_BLOCK, StreamingLLM, dead_blocks, visible
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams

transformers = pytest.importorskip("transformers")


def test_dead_blocks_follow_the_widest_window() -> None:
    # Mistral-like: every layer slides over 7, blocks of 4. The next query at 20 sees 14..20.
    assert dead_blocks(20, 4, [7, 7], None) == range(0, 3)  # blocks 0-2 hold 0..11
    assert dead_blocks(20, 4, [7, None], None) == range(0)  # a full layer keeps all
    assert dead_blocks(20, 4, [None], StreamingLLM(2, 5)) == range(1, 4)  # block 0: sinks
    assert dead_blocks(3, 4, [7], None) == range(0)


def test_visible_is_causal_window_and_sinks() -> None:
    q, k = torch.arange(10), torch.arange(10)
    mask = visible(q, k, None, StreamingLLM(sink_tokens=2, recent_tokens=3))
    assert mask[9].nonzero().flatten().tolist() == [0, 1, 7, 8, 9]
    assert mask[3].nonzero().flatten().tolist() == [0, 1, 2, 3]
    mask = visible(q, k, 4, StreamingLLM(sink_tokens=2, recent_tokens=3))
    assert mask[9].nonzero().flatten().tolist() == [7, 8, 9]  # the window hides the sinks


def test_streaming_llm_logits_equal_dense_attention_with_its_mask(tmp_path: Path) -> None:
    """Engine with sinks + recent window vs transformers' Llama given the same mask."""
    config = transformers.LlamaConfig(
        vocab_size=300,
        hidden_size=48,
        intermediate_size=80,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(config).to(torch.float64).eval()
    spread_weights(hf)
    hf.save_pretrained(tmp_path)
    policy = StreamingLLM(sink_tokens=3, recent_tokens=5)
    rng = random.Random(3)
    tokens = [rng.randrange(300) for _ in range(23)]
    pos = torch.arange(len(tokens))
    allowed = visible(pos, pos, None, policy)
    bias = torch.zeros(allowed.shape, dtype=torch.float64)
    bias[~allowed] = torch.finfo(torch.float64).min
    with torch.no_grad():
        want = hf(torch.tensor([tokens]), attention_mask=bias[None, None]).logits[0]
        dense = hf(torch.tensor([tokens])).logits[0]
    assert not torch.allclose(want[10:], dense[10:], atol=1e-3)  # the mask matters

    cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=16, block_size=4)
    runner = ModelRunner(load_model_config(cfg), cfg)
    # Block 1 (positions 4-7) is dead once the query reaches 12: leave a hole there, as the
    # KV manager does after freeing it. A hole reads block 0, filled with garbage here.
    table = [3, 9, 4, 7, 1, 2]
    for k_cache, v_cache in runner.kv_caches:
        k_cache[0].fill_(1e6)
        v_cache[0].fill_(1e6)
    plan = [(0, 9), (9, 12), (12, 13), (13, 14), (14, 21), (21, 22), (22, 23)]
    for a, b in plan:
        live = [FREED_BLOCK if i == 1 and a >= 12 else blk for i, blk in enumerate(table)]
        batch = build_forward_batch(
            [SeqInput(tokens[a:b], a, live, want_prompt_logits=True, kv_policy=policy)], 4
        )
        got = runner.execute_model(batch)
        torch.testing.assert_close(got, want[a:b], rtol=1e-5, atol=2e-5)


def _blocks_held_each_step(engine: Engine, prompt: list[int], params: SamplingParams) -> list[int]:
    engine.add_request("r", prompt, params)
    held = []
    while engine.has_unfinished_requests():
        engine.step()
        held.append(engine.kv.num_blocks_held("r"))
        engine.check_integrity()
    return held


def test_sliding_window_frees_blocks_while_running(random_checkpoint: Any) -> None:
    """Mistral, window 7, blocks of 4: a 70-token request holds at most 4 blocks at a time
    (window + the block being written), and its tokens equal transformers' greedy choice."""
    folder = random_checkpoint("mistral")
    engine = make_engine(folder, prefix_caching="none", max_num_batched_tokens=8)
    rng = random.Random(5)
    prompt = [rng.randrange(3, 500) for _ in range(20)]
    params = SamplingParams(temperature=0.0, max_tokens=50, ignore_eos=True)
    held = _blocks_held_each_step(engine, prompt, params)
    assert max(held) <= 7 // BLOCK_SIZE + 2, held
    assert engine.kv.pool.num_free == engine.kv.num_blocks

    out = drive(make_engine(folder, prefix_caching="none"), [_req(prompt, params)])["0"]
    tokens = prompt + out.outputs[0].token_ids
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float64)
    with torch.no_grad():
        logits = hf(torch.tensor([tokens[:-1]])).logits[0]
    assert logits[len(prompt) - 1 :].argmax(-1).tolist() == out.outputs[0].token_ids


def test_sliding_model_serves_sequences_longer_than_its_pool(random_checkpoint: Any) -> None:
    """Mistral (window 7) on a pool of 8 blocks of 4 (32 tokens): a 100-token sequence runs,
    freeing as it slides, with the tokens of a run on a pool that never frees anything."""
    folder = random_checkpoint("mistral")
    small = make_engine(folder, num_gpu_blocks=8, max_num_batched_tokens=8, prefix_caching="hash")
    assert small.max_model_len == small.runner.max_model_len > 8 * BLOCK_SIZE
    rng = random.Random(9)
    prompt = [rng.randrange(3, 500) for _ in range(20)]
    params = SamplingParams(temperature=0.0, max_tokens=80, ignore_eos=True)
    got = drive(small, [_req(prompt, params)])["0"].outputs[0].token_ids
    big = make_engine(folder, max_num_batched_tokens=8, prefix_caching="none")
    assert got == drive(big, [_req(prompt, params)])["0"].outputs[0].token_ids
    assert len(got) == 80
    assert_pool_restored(small)
    # A full-attention model's sequences stay capped by its pool.
    capped = make_engine(random_checkpoint("qwen3"), num_gpu_blocks=8)
    assert capped.max_model_len == 8 * BLOCK_SIZE


def test_streaming_llm_bounds_a_full_attention_request(random_checkpoint: Any) -> None:
    engine = make_engine(random_checkpoint("qwen3"), prefix_caching="hash")
    rng = random.Random(6)
    prompt = [rng.randrange(3, 500) for _ in range(30)]
    policy = StreamingLLM(sink_tokens=4, recent_tokens=8)
    params = SamplingParams(temperature=0.0, max_tokens=40, ignore_eos=True, kv_eviction=policy)
    held = _blocks_held_each_step(engine, prompt, params)
    assert max(held[1:]) <= 1 + 8 // BLOCK_SIZE + 2, held  # sinks' block, window, new block
    assert engine.stats().prefix_cache_hit_tokens == 0
    assert_pool_restored(engine)


def _req(prompt: list[int], params: SamplingParams) -> Any:
    from test_verify_random_workloads import Req

    return Req(prompt, params, 0)


CONFIGS = [
    ("mistral", "hash", "recompute", "fcfs"),
    ("mistral", "radix", "swap", "priority"),
    ("qwen3", "radix", "recompute", "fcfs"),
    ("qwen3", "hash", "swap", "fcfs"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("family", "cache", "preemption", "policy"), CONFIGS)
def test_windowed_workloads_equal_solo(
    random_checkpoint: Any, family: str, cache: str, preemption: str, policy: str
) -> None:
    """Random workloads, a third of the requests with a StreamingLLM policy: batched tokens
    equal solo ones, blocks are freed mid-request, nothing leaks."""
    folder = random_checkpoint(family)
    solo = make_engine(folder, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"window-{family}-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    freed = 0
    for _ in range(6):
        reqs = random_workload(rng)
        for r in reqs:
            r.params.max_tokens = rng.randrange(4, 24)  # long enough to slide
            if rng.random() < 0.35:
                r.params.kv_eviction = StreamingLLM(rng.choice([0, 1, 4]), rng.choice([3, 6]))
        engine = tight_engine(folder, reqs, rng, cache, preemption, policy)
        before = _count_frees(engine)
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        freed += before()
        assert_pool_restored(engine)
    assert freed > 0


def _count_frees(engine: Engine) -> Any:
    """Wrap the manager's release so the test sees blocks freed mid-request."""
    count = [0]
    release = engine.kv.release_unseen_blocks

    def counting(*args: Any, **kwargs: Any) -> int:
        n = release(*args, **kwargs)
        count[0] += n
        return n

    engine.kv.release_unseen_blocks = counting  # type: ignore[method-assign]
    return lambda: count[0]


def test_combinations_without_an_implementation_are_refused(random_checkpoint: Any) -> None:
    """Speculative decoding rolls back by trimming blocks, which a window that already freed
    them cannot undo: refused up front. KV eviction with it is refused per request."""
    from reference_engine.config import ConfigError
    from reference_engine.engine import RequestError

    spec = {"method": "ngram", "num_speculative_tokens": 2}
    with pytest.raises(ConfigError, match="sliding-window"):
        make_engine(random_checkpoint("mistral"), speculative_config=spec)
    engine = make_engine(random_checkpoint("qwen3"), speculative_config=spec)
    params = SamplingParams(max_tokens=2, kv_eviction=StreamingLLM(2, 4))
    with pytest.raises(RequestError, match="speculative"):
        engine.add_request("r", [5, 6, 7], params)
    assert not engine.has_unfinished_requests()
