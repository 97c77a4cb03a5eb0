"""The CUDA paths: graph capture and replay, pinned-memory swap, the whole engine on a GPU.

Everything here needs a CUDA device and is skipped (with that reason) elsewhere; the
same bucketing and padding logic is tested eagerly on the CPU in test_model_cuda_graph.py.
Run on a GPU machine with `pytest -m cuda tests/engine`.

The strongest check is the cross-device one: requests batched on the GPU, decoded
through captured CUDA graphs, under preemption and both prefix caches, produce exactly
the tokens each request gets when generated alone on the CPU (float64 on both sides,
so rounding differences between devices stay far below any argmax margin).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from test_model_cuda_graph import _decode_batch, _prefilled
from test_verify_random_workloads import (
    CONFIGS,
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.cuda_graph import DecodeGraphRunner
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def model_dir(random_checkpoint: Callable[..., Path]) -> Path:
    return random_checkpoint("qwen3", dtype="float64")


@pytest.fixture(scope="module")
def cpu_solo_engine(model_dir: Path) -> Engine:
    return make_engine(model_dir, prefix_caching="none", max_num_seqs=8, device="cpu")


def test_graph_replay_equals_eager(tiny_model_path: Path, make_runner: Callable) -> None:
    """Decode steps through real CUDA graphs match the plain runner step by step, as the
    batch shrinks from one captured size into a smaller one: exactly (to float64 rounding)
    against eager runs on the same GPU, and closely against the CPU. Across devices the
    float32 RoPE angles (kept float32 to agree with transformers) differ by an ulp, ~1e-7."""
    lengths = [6, 13, 3]
    runners = [
        make_runner(tiny_model_path, num_blocks=24, max_model_len=32, device=device)
        for device in ("cpu", "cuda", "cuda")
    ]
    cpu, gpu_eager, gpu = runners
    for r in runners:
        tokens, tables = _prefilled(r, lengths, room=4)
    graphs = DecodeGraphRunner(gpu, batch_sizes=(2, 4))
    assert graphs.use_graphs
    graphs.capture_all()
    assert graphs.captured_sizes == [2, 4]
    for step in range(4):
        live = [0, 1, 2] if step < 2 else [0, 1]
        seq_tokens = [tokens[i] for i in live]
        live_tables = [tables[i] for i in live]
        on_cpu = cpu.execute_model(_decode_batch(cpu, seq_tokens, live_tables))
        eager = gpu_eager.execute_model(_decode_batch(gpu_eager, seq_tokens, live_tables))
        got = graphs.execute(_decode_batch(gpu, seq_tokens, live_tables))
        assert got.device.type == "cuda"
        torch.testing.assert_close(got, eager, rtol=0, atol=1e-12)
        torch.testing.assert_close(got.cpu(), on_cpu, rtol=0, atol=1e-5)
        for i in live:
            tokens[i].append(int(on_cpu[live.index(i)].argmax()))
    assert graphs.stats.graph_replays == 4 and graphs.stats.fallbacks == 0


def test_swap_round_trip_through_pinned_host_memory(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    runner = make_runner(tiny_model_path, num_blocks=8, num_cpu_blocks=4, device="cuda")
    assert all(k.is_pinned() and v.is_pinned() for k, v in runner.cpu_kv_caches)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for k, v in runner.kv_caches:
        k.copy_(torch.randn(k.shape, generator=gen, device="cuda", dtype=k.dtype))
        v.copy_(torch.randn(v.shape, generator=gen, device="cuda", dtype=v.dtype))
    before = [(k[[1, 2]].clone(), v[[1, 2]].clone()) for k, v in runner.kv_caches]
    runner.swap_out([(1, 3), (2, 0)])
    runner.swap_in([(3, 6), (0, 5)])  # back into other device blocks
    for (k, v), (k_old, v_old) in zip(runner.kv_caches, before, strict=True):
        assert torch.equal(k[[6, 5]], k_old) and torch.equal(v[[6, 5]], v_old)


@pytest.mark.parametrize(("cache", "preemption", "policy"), CONFIGS)
def test_gpu_batches_equal_cpu_solo_runs(
    model_dir: Path, cpu_solo_engine: Engine, cache: str, preemption: str, policy: str
) -> None:
    rng = random.Random(f"cuda-{cache}-{preemption}-{policy}")
    solo_cache: dict[Any, list[list[int]]] = {}
    replays = preemptions = 0
    for _ in range(8):
        reqs = random_workload(rng)
        engine = tight_engine(model_dir, reqs, rng, cache, preemption, policy, device="cuda")
        assert engine.graph_runner is not None and engine.graph_runner.use_graphs
        assert_tokens_equal_solo(drive(engine, reqs), reqs, cpu_solo_engine, solo_cache)
        replays += engine.graph_runner.stats.graph_replays
        preemptions += engine.stats().num_preemptions
        assert_pool_restored(engine)
    assert replays > 0, "decode steps were meant to replay captured graphs"
    assert preemptions > 0, "the KV budgets were meant to force preemption"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_graphs_and_eager_agree_on_gpu(model_dir: Path, dtype: str) -> None:
    """Same requests, one engine replaying graphs and one running eagerly: same greedy
    tokens. Requests run one at a time, so both sides see batches of one and the GEMM
    shapes (hence the rounding) match even in low precision."""
    params = SamplingParams(temperature=0.0, max_tokens=12, ignore_eos=True)
    prompts = [[5, 6, 7, 8, 9], list(range(20, 47)), [300, 301]]
    results = []
    for eager in (False, True):
        engine = make_engine(
            model_dir, device="cuda", dtype=dtype, enforce_eager=eager, prefix_caching="none"
        )
        tokens = [drive(engine, [Req(p, params, 0)])["0"].outputs[0].token_ids for p in prompts]
        results.append(tokens)
        if not eager:
            assert engine.graph_runner is not None and engine.graph_runner.stats.graph_replays
    assert results[0] == results[1]
