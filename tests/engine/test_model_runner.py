"""ModelRunner over the paged KV cache: however a sequence's tokens are split across steps and
batched with others, its logits equal those of one full forward pass over it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.model_runner import ModelRunner

FAMILIES = ("qwen3", "llama", "qwen2")


def full_logits(runner: ModelRunner, tokens: list[int], block_table: list[int]) -> torch.Tensor:
    """Logits at every position from one prefill of the whole sequence."""
    batch = build_forward_batch(
        [SeqInput(tokens, 0, block_table, want_prompt_logits=True)], runner.block_size
    )
    return runner.execute_model(batch)


def test_tiny_model_runs_in_float32(tiny_model_path: Path, make_runner: Callable) -> None:
    runner = make_runner(tiny_model_path, dtype="float32", num_blocks=16, block_size=16)
    assert runner.model_config.random_weights
    batch = build_forward_batch([SeqInput([5, 6, 7, 8], 0, [3])], runner.block_size)
    logits = runner.execute_model(batch)
    assert logits.shape == (1, runner.model_config.vocab_size)
    assert logits.dtype == torch.float32
    assert torch.isfinite(logits).all()
    # Peaked, not flat: the winner stands clear of the runner-up.
    top2 = logits[0].topk(2).values
    assert float(top2[0] - top2[1]) > 1e-3


@pytest.mark.parametrize("family", FAMILIES)
def test_chunked_prefill_then_decode_matches_full_forward(
    family: str, random_checkpoint: Callable, make_runner: Callable
) -> None:
    runner = make_runner(random_checkpoint(family), num_blocks=32, block_size=4)
    rng = random.Random(0)
    tokens = [rng.randrange(3, 512) for _ in range(23)]
    table = [9, 2, 17, 5, 30, 11]  # deliberately scattered physical blocks
    reference = full_logits(runner, tokens, table)

    other = make_runner(random_checkpoint(family), num_blocks=32, block_size=4)
    got: list[torch.Tensor] = []
    # chunks of 6 and 5 (crossing block edges mid-block), then one token per step
    for start, end in [(0, 6), (6, 11), *[(i, i + 1) for i in range(11, 23)]]:
        batch = build_forward_batch(
            [SeqInput(tokens[start:end], start, table, want_prompt_logits=True)], 4
        )
        got.append(other.execute_model(batch))
    torch.testing.assert_close(torch.cat(got), reference, rtol=0, atol=1e-10)


@pytest.mark.parametrize("family", FAMILIES)
def test_mixed_batch_equals_each_sequence_alone(
    family: str, random_checkpoint: Callable, make_runner: Callable
) -> None:
    ckpt = random_checkpoint(family)
    rng = random.Random(1)
    seqs = [[rng.randrange(3, 512) for _ in range(n)] for n in (13, 9, 17, 6)]
    tables = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9, 10, 11], [12, 13]]
    solo = [full_logits(make_runner(ckpt), s, t) for s, t in zip(seqs, tables, strict=True)]

    runner = make_runner(ckpt)
    # Step 1: prefill everything except each sequence's last 1-3 tokens, all in one batch.
    cut = [10, 8, 14, 4]
    step1 = [SeqInput(s[:c], 0, t) for s, c, t in zip(seqs, cut, tables, strict=True)]
    logits = runner.execute_model(build_forward_batch(step1, 4))
    for i, c in enumerate(cut):
        torch.testing.assert_close(logits[i], solo[i][c - 1], rtol=0, atol=1e-10)
    # Step 2: a mix: seq 2 prefills a 3-token chunk, seqs 0 and 1 decode; seq 3 idles.
    step2 = [
        SeqInput(seqs[2][14:17], 14, tables[2], want_prompt_logits=True),
        SeqInput(seqs[0][10:11], 10, tables[0]),
        SeqInput(seqs[1][8:9], 8, tables[1]),
    ]
    batch = build_forward_batch(step2, 4)
    assert (batch.num_prefills, batch.num_decodes) == (1, 2)
    logits = runner.execute_model(batch)
    assert batch.logits_start_loc == [0, 3, 4, 5]
    torch.testing.assert_close(logits[0:3], solo[2][14:17], rtol=0, atol=1e-10)
    torch.testing.assert_close(logits[3], solo[0][10], rtol=0, atol=1e-10)
    torch.testing.assert_close(logits[4], solo[1][8], rtol=0, atol=1e-10)
    # Step 3: decode-only fast path, with unequal context lengths.
    step3 = [SeqInput(seqs[0][11:12], 11, tables[0]), SeqInput(seqs[3][4:5], 4, tables[3])]
    batch = build_forward_batch(step3, 4)
    assert batch.decode_only
    logits = runner.execute_model(batch)
    torch.testing.assert_close(logits[0], solo[0][11], rtol=0, atol=1e-10)
    torch.testing.assert_close(logits[1], solo[3][4], rtol=0, atol=1e-10)


def test_shared_prefix_blocks_are_read_not_copied(
    random_checkpoint: Callable, make_runner: Callable
) -> None:
    """Two sequences whose first two blocks are the same physical blocks (prefix caching):
    the second computes only its own suffix and still gets exact logits."""
    ckpt = random_checkpoint("qwen3")
    prefix = list(range(40, 48))  # two full blocks of 4
    a, b = [*prefix, 60, 61, 62], [*prefix, 70, 71]
    runner = make_runner(ckpt)
    runner.execute_model(build_forward_batch([SeqInput(a, 0, [3, 7, 1])], 4))
    # b reuses blocks 3 and 7 and computes from position 8 on, into its own block 12.
    batch = build_forward_batch([SeqInput(b[8:], 8, [3, 7, 12], want_prompt_logits=True)], 4)
    got = runner.execute_model(batch)
    want = full_logits(make_runner(ckpt), b, [0, 1, 2])[8:]
    torch.testing.assert_close(got, want, rtol=0, atol=1e-10)


def test_copy_blocks_and_swap_round_trip(tiny_model_path: Path, make_runner: Callable) -> None:
    runner = make_runner(tiny_model_path, num_blocks=8, num_cpu_blocks=4, preemption_mode="swap")
    tokens = [10, 11, 12, 13, 14, 15]
    want = full_logits(runner, tokens, [2, 5])
    runner.swap_out([(2, 0), (5, 3)])
    for k, v in runner.kv_caches:  # clobber the device copies
        k[2].zero_(), k[5].zero_(), v[2].zero_(), v[5].zero_()
    runner.swap_in([(0, 6), (3, 1)])
    runner.copy_blocks([(6, 4)])
    batch = build_forward_batch([SeqInput(tokens[-1:], 5, [4, 1], want_prompt_logits=True)], 4)
    torch.testing.assert_close(runner.execute_model(batch)[0], want[-1], rtol=0, atol=1e-10)


def test_step_bytes_counts_weights_and_context(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    runner = make_runner(tiny_model_path, dtype="float32", num_blocks=16)
    cfg = runner.model_config
    weights = sum(p.numel() for p in runner.model.parameters()) * 4
    assert runner.weight_bytes == weights
    per_token = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.head_dim * 4
    assert runner.kv_bytes_per_token == per_token
    batch = build_forward_batch([SeqInput([1], 6, [0, 1]), SeqInput([2], 2, [2])], 4)
    assert runner.step_bytes(batch) == weights + (7 + 3) * per_token + 2 * per_token


def test_random_init_is_seeded_and_leaves_global_rng_alone(
    random_checkpoint: Callable,
) -> None:
    from reference_engine.config import EngineConfig, ModelConfig

    cfg = ModelConfig.from_pretrained(random_checkpoint("qwen3"))
    cfg.model_dir = None  # no weights: random init from EngineConfig.seed
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    a = ModelRunner(cfg, EngineConfig(dtype="float64", num_gpu_blocks=4, seed=5))
    assert torch.equal(torch.rand(3), expected_next)  # caller's stream untouched
    b = ModelRunner(cfg, EngineConfig(dtype="float64", num_gpu_blocks=4, seed=5))
    c = ModelRunner(cfg, EngineConfig(dtype="float64", num_gpu_blocks=4, seed=6))
    wa, wb, wc = (r.model.model.layers[0].mlp.down_proj.weight for r in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)
