"""Ring attention (distributed/ring_attention.py) against standard causal attention: the LSE
merge in one process, and two gloo ranks each holding a balanced share of one prompt."""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

import reference_engine.layers.attention as attention_module
from reference_engine.distributed.ring_attention import (
    balanced_chunks,
    merge_partials,
    partial_attention,
)

SEQ, HEADS, KV_HEADS, DIM = 37, 4, 2, 8


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)

    def rand(h: int) -> torch.Tensor:
        return torch.randn(SEQ, h, DIM, generator=gen, dtype=torch.float64)

    return rand(HEADS), rand(KV_HEADS), rand(KV_HEADS)


def _reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True, enable_gqa=True
    )
    return out.transpose(0, 1)


def test_balanced_chunks_pair_early_and_late_tokens() -> None:
    shares = [balanced_chunks(SEQ, 2, r) for r in range(2)]
    assert sorted(torch.cat(shares).tolist()) == list(range(SEQ))
    # Causal work (keys visible per query) is even: rank 0 has the first and last chunks.
    work = [int((s + 1).sum()) for s in shares]
    assert abs(work[0] - work[1]) <= SEQ


def test_lse_merge_of_key_blocks_equals_full_attention() -> None:
    q, k, v = _inputs()
    pos = torch.arange(SEQ)
    scale = DIM**-0.5
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=q.dtype)
    for block in torch.tensor_split(
        torch.randperm(SEQ, generator=torch.Generator().manual_seed(1)), 3
    ):
        part, part_lse = partial_attention(q, k[block], v[block], pos, pos[block], scale)
        out, lse = merge_partials(out, lse, part, part_lse)
    torch.testing.assert_close(out, _reference(q, k, v))


def _rank_main(rank: int, world: int, init_file: str, result_file: str) -> None:
    import torch.distributed as dist

    from reference_engine.distributed.parallel_state import GroupCoordinator
    from reference_engine.distributed.ring_attention import ring_attention

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    q, k, v = _inputs()
    pos = balanced_chunks(SEQ, world, rank)
    cp = GroupCoordinator(rank, world, dist.group.WORLD, tuple(range(world)))
    out = ring_attention(q[pos], k[pos], v[pos], pos, cp, SEQ, DIM**-0.5)
    torch.save({"pos": pos, "out": out}, f"{result_file}.{rank}")
    dist.destroy_process_group()


@pytest.mark.slow
def test_two_ranks_ring_attention_equals_standard_attention() -> None:
    world = 2
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
        want = _reference(*_inputs())
        results: list[Any] = [torch.load(f"{result_file}.{r}") for r in range(world)]
        for res in results:
            torch.testing.assert_close(res["out"], want[res["pos"]])


@pytest.mark.slow
def test_cp2_engine_tokens_equal_one_process(
    random_checkpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fresh prompts' attention as ring attention over two ranks, in the engine."""
    calls: list[int] = []
    real = attention_module.context_parallel_attention

    def counted(q: torch.Tensor, *args: Any) -> torch.Tensor:
        calls.append(q.shape[0])
        return real(q, *args)

    monkeypatch.setattr(attention_module, "context_parallel_attention", counted)
    model_dir = random_checkpoint("qwen3")
    rng = random.Random("cp2")
    workloads = [random_workload(rng) for _ in range(4)]
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        context_parallel_size=2,
        distributed_timeout_s=60,
        num_gpu_blocks=8,
        max_num_batched_tokens=64,
        max_num_seqs=4,
        prefix_caching="hash",
    )
    try:
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)
        stats = engine.stats()
        assert stats.num_preemptions > 0 and stats.prefix_cache_hit_tokens > 0
        assert calls, "no prompt went through ring attention (on the driver)"
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
