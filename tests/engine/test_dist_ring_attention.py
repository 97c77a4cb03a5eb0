"""Context parallelism (distributed/context_parallel.py, ring_attention.py) against standard
attention and against one process: the LSE merge in one process; three gloo ranks, each
holding its stripe of the KV cache, attending a batch of a fresh prompt, a chunk continuing
a cached prefix and decodes exactly as PagedAttention does over the whole cache; and the
engine with CP=2 (and TP=2 x CP=2, PP=2 x CP=2) equal to one process token by token."""

from __future__ import annotations

import math
import os
import random
import tempfile
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

import reference_engine.distributed.context_parallel as cp_module
from reference_engine.config import ConfigError, EngineConfig
from reference_engine.distributed.context_parallel import shard_batch, stripe
from reference_engine.distributed.ring_attention import merge_partials, partial_attention
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.sampling_params import SamplingParams

HEADS, KV_HEADS, DIM, BLOCK, BLOCKS = 4, 2, 8, 6, 24


def test_stripes_cover_positions_and_balance_causal_work() -> None:
    n, world = 37, 3
    shares = [stripe(0, n, r, world) for r in range(world)]
    assert sorted(torch.cat(shares).tolist()) == list(range(n))
    work = [int((s + 1).sum()) for s in shares]  # keys visible to each rank's queries
    assert max(work) - min(work) <= n
    assert stripe(5, 11, 1, 3).tolist() == [7, 10]


def test_lse_merge_of_key_blocks_equals_full_attention() -> None:
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(37, h, DIM, generator=gen, dtype=torch.float64)
               for h in (HEADS, KV_HEADS, KV_HEADS))  # fmt: skip
    pos = torch.arange(37)
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=q.dtype)
    for block in torch.tensor_split(torch.randperm(37, generator=gen), 3):
        visible = pos[block][None, :] <= pos[:, None]
        part, part_lse = partial_attention(q, k[block], v[block], visible, DIM**-0.5)
        out, lse = merge_partials(out, lse, part, part_lse)
    want = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True, enable_gqa=True
    ).transpose(0, 1)
    torch.testing.assert_close(out, want)


def test_block_size_must_divide_by_cp() -> None:
    with pytest.raises(ConfigError, match="divisible by context_parallel_size"):
        EngineConfig(model="x", context_parallel_size=4, block_size=6)
    with pytest.raises(ConfigError, match="not expert parallelism"):
        EngineConfig(model="x", context_parallel_size=2, expert_parallel_size=2)


def _mixed_batch() -> tuple[Any, torch.Tensor, torch.Tensor]:
    """A fresh prompt, a chunk after a 13-token cached prefix, three decodes (one with a
    context of one token); returns the batch and the full caches holding the cached part."""
    gen = torch.Generator().manual_seed(1)
    seqs = [
        SeqInput(list(range(17)), 0, [0, 1, 2]),  # fresh prompt of 17
        SeqInput(list(range(9)), 13, [3, 4, 5, 6]),  # 9 new after 13 cached
        SeqInput([1], 20, [7, 8, 9, 10]),  # decode at position 20
        SeqInput([2], 0, [11]),  # decode with nothing before it
        SeqInput([3], 7, [12, 13]),  # decode at position 7
    ]
    batch = build_forward_batch(seqs, BLOCK)
    k_cache = torch.randn(BLOCKS, BLOCK, KV_HEADS, DIM, generator=gen, dtype=torch.float64)
    v_cache = torch.randn(BLOCKS, BLOCK, KV_HEADS, DIM, generator=gen, dtype=torch.float64)
    return batch, k_cache, v_cache


def _qkv(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(2)
    return tuple(  # type: ignore[return-value]
        torch.randn(n, h, DIM, generator=gen, dtype=torch.float64)
        for h in (HEADS, KV_HEADS, KV_HEADS)
    )


def _stripe_cache(cache: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """A rank's shard of a full cache: row j of its block b is position j * world + rank."""
    return cache[:, rank::world].clone()


def _rank_main(rank: int, world: int, init_file: str, result_file: str) -> None:
    from reference_engine.distributed.context_parallel import context_parallel_attention
    from reference_engine.distributed.parallel_state import GroupCoordinator

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    batch, k_cache, v_cache = _mixed_batch()
    q, k, v = _qkv(batch.num_tokens)
    shard = shard_batch(batch, rank, world)
    caches = (_stripe_cache(k_cache, rank, world), _stripe_cache(v_cache, rank, world))
    group = GroupCoordinator(rank, world, dist.group.WORLD, tuple(range(world)))
    rows = shard.rows
    out = context_parallel_attention(q[rows], k[rows], v[rows], caches, shard, group, DIM**-0.5)
    torch.save({"rows": rows, "out": out, "k_cache": caches[0]}, f"{result_file}.{rank}")
    dist.destroy_process_group()


@pytest.mark.slow
def test_three_ranks_striped_kv_attention_equals_paged_attention() -> None:
    from reference_engine.layers.attention import PagedAttention

    world = 3
    with tempfile.TemporaryDirectory() as tmp:
        init_file, result_file = os.path.join(tmp, "init"), os.path.join(tmp, "out")
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=_rank_main, args=(r, world, init_file, result_file))
            for r in range(world)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        alive = [p for p in procs if p.is_alive()]
        for p in alive:
            p.kill()
        assert not alive and all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
        results: list[Any] = [torch.load(f"{result_file}.{r}") for r in range(world)]
    batch, k_cache, v_cache = _mixed_batch()
    q, k, v = _qkv(batch.num_tokens)
    attn = PagedAttention(HEADS, KV_HEADS, DIM, DIM**-0.5)
    want = attn(q, k, v, (k_cache, v_cache), batch)  # writes the new K/V into the full cache
    assert sorted(torch.cat([r["rows"] for r in results]).tolist()) == list(range(len(q)))
    for rank, res in enumerate(results):
        torch.testing.assert_close(res["out"], want[res["rows"]])
        # Each rank's cache now holds its stripe of every context, new tokens included.
        torch.testing.assert_close(res["k_cache"], _stripe_cache(k_cache, rank, world))


def _logprobs(entries: list[Any] | None) -> list[list[tuple[int, float, int]]]:
    return [
        sorted((t, lp.logprob, lp.rank) for t, lp in entry.items()) if entry else []
        for entry in entries or []
    ]


def _check_prompt_logprobs(engine: Any, solo: Any) -> None:
    """Every prompt row's logits (a 21-token prompt, prefilled in two chunks) reach the
    driver in order: prompt and sample logprobs equal one process."""
    params = SamplingParams(temperature=0.0, max_tokens=3, logprobs=2, prompt_logprobs=2)
    req = Req([(5 * j) % 400 + 3 for j in range(21)], params, 0)
    got, want = drive(engine, [req])["0"], drive(solo, [req])["0"]
    assert got.outputs[0].token_ids == want.outputs[0].token_ids
    assert got.prompt_logprobs is not None and len(got.prompt_logprobs) == 21
    for a, b in [(got.prompt_logprobs, want.prompt_logprobs),
                 (got.outputs[0].logprobs, want.outputs[0].logprobs)]:  # fmt: skip
        for row_a, row_b in zip(_logprobs(a), _logprobs(b), strict=True):
            assert [(t, r) for t, _, r in row_a] == [(t, r) for t, _, r in row_b]
            assert [lp for _, lp, _ in row_a] == pytest.approx([lp for _, lp, _ in row_b])


def _check_engine(model_dir: Any, seed: str, **parallel: Any) -> None:
    rng = random.Random(seed)
    workloads = [random_workload(rng) for _ in range(3)]
    greedy = SamplingParams(temperature=0.0, max_tokens=3, ignore_eos=True)
    workloads.append([Req(list(range(40, 52)), greedy, 0), Req(list(range(40, 50)), greedy, 6)])
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    blocks = math.ceil(longest / 4) + 1
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        distributed_timeout_s=90,
        num_gpu_blocks=blocks,
        max_num_batched_tokens=16,
        max_num_seqs=4,
        prefix_caching="hash",
        preemption_mode="swap",
        num_cpu_blocks=blocks,
        **parallel,
    )
    try:
        # The driver's cache holds its stripe only: half a block's rows per block id.
        assert (
            engine.runner.runner.kv_caches[0][0].shape[1] == 4 // parallel["context_parallel_size"]
        )
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
        _check_prompt_logprobs(engine, solo)
        assert_pool_restored(engine)
        stats = engine.stats()
        assert stats.num_preemptions > 0 and stats.prefix_cache_hit_tokens > 0
        if parallel.get("pipeline_parallel_size", 1) > 1:
            assert engine.batch_queue is not None and engine.batch_queue.max_in_flight == 2
    finally:
        engine.shutdown()
    assert not dist.is_initialized()


@pytest.mark.slow
def test_cp2_engine_tokens_equal_one_process(
    random_checkpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prompts, chunks over cached prefixes and decodes, KV striped over two ranks."""
    calls = {"ring": 0, "decode": 0}
    real_ring, real_decode = cp_module.ring_attention, cp_module.decode_attention

    def ring(*args: Any) -> torch.Tensor:
        calls["ring"] += 1
        return real_ring(*args)

    def decode(*args: Any) -> torch.Tensor:
        calls["decode"] += 1
        return real_decode(*args)

    monkeypatch.setattr(cp_module, "ring_attention", ring)
    monkeypatch.setattr(cp_module, "decode_attention", decode)
    _check_engine(random_checkpoint("qwen3"), "cp2", context_parallel_size=2)
    assert calls["ring"] and calls["decode"], calls  # both paths ran on the driver


@pytest.mark.slow
@pytest.mark.parametrize("other", ["tensor_parallel_size", "pipeline_parallel_size"])
def test_cp2_with_tp2_or_pp2_tokens_equal_one_process(random_checkpoint: Any, other: str) -> None:
    """Four ranks: CP inside tensor-parallel groups, or inside pipeline stages (with steps
    in flight, batch_queue.py)."""
    _check_engine(random_checkpoint("qwen3"), f"cp2-{other}", context_parallel_size=2, **{other: 2})
