"""Decode attention formulations side by side, on the shapes `engine_bench.py` produces.

    .venv/bin/python benchmarks/attention_bench.py              # 1 torch thread, fp32
    .venv/bin/python benchmarks/attention_bench.py --threads 2

A decode step attends one query per sequence to that sequence's whole paged context. The
engine gathers each sequence's block table and runs one batched attention; every sequence
is padded to the widest table in its batch (or, since length grouping, in its group). This
prints milliseconds per call of one layer's decode attention (KV write excluded) for:

  * before      - the formulation the engine had: the whole batch at the widest table,
                  q as [B, Hq, 1, D] into SDPA with enable_gqa (kept here for comparison);
  * one group   - the whole batch at the widest table, grouped-query layout (q as
                  [B, Hkv, G, D]: a KV head's G query heads are G query rows); what CUDA
                  graphs run, since they need static shapes;
  * groups of N - rows sorted by context length, N per group, each at its own width
                  (`DecodeGroup`; the engine's default N is DECODE_GROUP_SIZE);
  * matmul      - one group, grouped-query matmuls with a masked float32 softmax instead
                  of SDPA;
  * gather only - the block-table gather of one whole batch alone.

Context lengths follow engine_bench's workload (prompt 16-192 plus 0-96 generated tokens),
plus an equal-length case where grouping cannot cut padding and only adds per-group ops.
Timings are medians over interleaved rounds, so a load change hits every contender alike.
Run alone, a big gather pays page faults for fresh memory whenever glibc has handed its
heap top back to the kernel, so timings jumped between runs with the heap's state. By
default the script therefore asks glibc (mallopt) to keep freed memory, as a long-running
engine's heap does anyway; `--plain-heap` skips that. Inside a whole engine run
(engine_bench's workload) decode attention fell from ~1.2-1.4 s to ~0.7-0.8 s.
"""

from __future__ import annotations

import argparse
import ctypes
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from reference_engine.forward_batch import (  # noqa: E402
    DECODE_GROUP_SIZE,
    DecodeGroup,
    SeqInput,
    build_forward_batch,
    decode_groups,
)
from reference_engine.layers.attention import PagedAttention, gather_kv  # noqa: E402

HQ, HKV, HEAD_DIM, BLOCK_SIZE = 8, 4, 64, 16  # engine_bench's model: hidden 512


def previous_decode(
    attn: PagedAttention,
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    g: DecodeGroup,
) -> torch.Tensor:
    """The engine's decode attention before length groups and the grouped-query layout."""
    keys = gather_kv(k_cache, g.block_tables)  # [B, L, Hkv, D]
    values = gather_kv(v_cache, g.block_tables)
    out = torch.nn.functional.scaled_dot_product_attention(
        q.unsqueeze(2),
        keys.transpose(1, 2),
        values.transpose(1, 2),
        attn_mask=g.key_mask[:, None, None, :],
        scale=attn.scale,
        enable_gqa=True,
    )
    return out.squeeze(2)


def matmul_decode(
    attn: PagedAttention,
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    g: DecodeGroup,
) -> torch.Tensor:
    """Grouped-query batched matmuls: the candidate SDPA was measured against."""
    b = q.shape[0]
    keys = gather_kv(k_cache, g.block_tables).transpose(1, 2)  # [B, Hkv, L, D]
    values = gather_kv(v_cache, g.block_tables).transpose(1, 2)
    qg = q.view(b, HKV, HQ // HKV, HEAD_DIM)
    scores = torch.matmul(qg, keys.transpose(-1, -2)).float() * attn.scale  # [B, Hkv, G, L]
    scores = scores.masked_fill(~g.key_mask[:, None, None, :], float("-inf"))
    probs = scores.softmax(-1).to(q.dtype)
    return torch.matmul(probs, values).reshape(b, HQ, HEAD_DIM)


def median_ms(fn: Callable[[], object], rounds: list[list[float]], slot: int) -> None:
    t0 = time.perf_counter()
    fn()
    rounds[slot].append(1000 * (time.perf_counter() - t0))


def run_case(label: str, context_lens: list[int], num_rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    num_blocks = sum(-(-c // BLOCK_SIZE) for c in context_lens) + 8
    ids = list(range(num_blocks))
    rng.shuffle(ids)  # scattered physical blocks, as after a while of serving
    tables = []
    for c in context_lens:
        need = -(-c // BLOCK_SIZE)
        tables.append(ids[:need])
        ids = ids[need:]
    gen = torch.Generator().manual_seed(seed)
    k_cache = torch.randn(num_blocks, BLOCK_SIZE, HKV, HEAD_DIM, generator=gen)
    v_cache = torch.randn(num_blocks, BLOCK_SIZE, HKV, HEAD_DIM, generator=gen)
    q = torch.randn(len(context_lens), HQ, HEAD_DIM, generator=gen)
    attn = PagedAttention(HQ, HKV, HEAD_DIM, scale=HEAD_DIM**-0.5)
    batch = build_forward_batch(
        [SeqInput([0], c - 1, t) for c, t in zip(context_lens, tables, strict=True)], BLOCK_SIZE
    )
    n = len(context_lens)
    one = decode_groups(tables, context_lens, BLOCK_SIZE, group_size=n)

    def grouped(size: int) -> Callable[[], torch.Tensor]:
        groups = decode_groups(tables, context_lens, BLOCK_SIZE, group_size=size)
        return lambda: attn._decode_groups(q, k_cache, v_cache, groups)

    contenders: dict[str, Callable[[], object]] = {
        "before": lambda: previous_decode(attn, q, k_cache, v_cache, one[0]),
        "one group": grouped(n),
        **{f"groups of {s}": grouped(s) for s in (4, 8, 16) if s < n},
        "matmul, one group": lambda: matmul_decode(attn, q, k_cache, v_cache, one[0]),
        "gather only": lambda: (
            gather_kv(k_cache, one[0].block_tables),
            gather_kv(v_cache, one[0].block_tables),
        ),
    }
    want = previous_decode(attn, q, k_cache, v_cache, one[0])
    engine_default = attn._decode_groups(q, k_cache, v_cache, batch.decode_groups)
    torch.testing.assert_close(engine_default, want, rtol=1e-5, atol=1e-5)
    for name, fn in contenders.items():
        if not name.startswith("gather"):
            torch.testing.assert_close(fn(), want, rtol=1e-4, atol=1e-4)

    rounds: list[list[float]] = [[] for _ in contenders]
    for _ in range(num_rounds):
        for slot, fn in enumerate(contenders.values()):
            median_ms(fn, rounds, slot)
    width = max(-(-c // BLOCK_SIZE) for c in context_lens) * BLOCK_SIZE
    print(
        f"\n{label}: {n} decodes, context {min(context_lens)}-{max(context_lens)} "
        f"({sum(context_lens)} real slots, {n * width} gathered at one width)"
    )
    base = statistics.median(rounds[0])
    for name, times in zip(contenders, rounds, strict=True):
        ms = statistics.median(times)
        print(f"  {name:24s} {ms:8.3f} ms   {base / ms:5.2f}x")


def keep_freed_memory() -> bool:
    """glibc: never trim the heap top, never mmap big blocks (each would fault in afresh)."""
    m_trim_threshold, m_mmap_threshold = -1, -3
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False  # not glibc: leave the allocator alone
    return bool(libc.mallopt(m_trim_threshold, 1 << 30) and libc.mallopt(m_mmap_threshold, 1 << 30))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--plain-heap", action="store_true", help="leave glibc's malloc as it is")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    steady = not args.plain_heap and keep_freed_memory()
    print(
        f"decode attention, Hq {HQ}, Hkv {HKV}, head_dim {HEAD_DIM}, block {BLOCK_SIZE}, float32, "
        f"torch threads {torch.get_num_threads()}; engine groups of {DECODE_GROUP_SIZE}; "
        f"heap {'kept (mallopt)' if steady else 'as is'}"
    )
    rng = random.Random(1)
    with torch.inference_mode():
        for n in (8, 16, 32):
            lens = [rng.randint(16, 192) + rng.randint(0, rng.randint(8, 96)) for _ in range(n)]
            run_case(f"engine_bench-like, batch {n}", lens, args.rounds, seed=n)
        run_case("equal lengths, batch 32", [256] * 32, args.rounds, seed=0)


if __name__ == "__main__":
    main()
