"""Paged attention against a dense causal reference, and the batch builder's metadata."""

from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.forward_batch import (
    DECODE_GROUP_SIZE,
    SeqInput,
    build_forward_batch,
    decode_groups,
    slot_for,
)
from reference_engine.layers.attention import PagedAttention

DT = torch.float64


def dense_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention over one whole sequence, written out longhand. q [L, Hq, D], k/v [L, Hkv, D]."""
    length, hq, d = q.shape
    group = hq // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(d)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return torch.einsum("hqk,khd->qhd", scores.softmax(-1), v)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    block_size=st.sampled_from([1, 2, 4, 5, 16]),
    heads=st.sampled_from([(4, 4), (4, 2), (6, 1)]),
    num_seqs=st.integers(1, 6),
    steps=st.integers(1, 4),
    group_size=st.sampled_from([1, 2, 3, DECODE_GROUP_SIZE]),
)
def test_paged_attention_equals_dense_causal(
    seed: int, block_size: int, heads: tuple[int, int], num_seqs: int, steps: int, group_size: int
) -> None:
    """Random sequences fed over several steps in random chunk sizes, with scattered block
    tables and decode rows split into length groups of any size: every query row's output
    equals dense causal attention over the whole sequence."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    hq, hkv, d = heads[0], heads[1], 8
    lengths = [rng.randint(1, 20) for _ in range(num_seqs)]
    q_all = [torch.randn(n, hq, d, generator=gen, dtype=DT) for n in lengths]
    k_all = [torch.randn(n, hkv, d, generator=gen, dtype=DT) for n in lengths]
    v_all = [torch.randn(n, hkv, d, generator=gen, dtype=DT) for n in lengths]
    want = [dense_reference(q, k, v) for q, k, v in zip(q_all, k_all, v_all, strict=True)]

    num_blocks = sum(-(-n // block_size) for n in lengths) + 3
    ids = list(range(num_blocks))
    rng.shuffle(ids)  # physical order unrelated to logical order
    tables = []
    for n in lengths:
        need = -(-n // block_size)
        tables.append(ids[:need])
        ids = ids[need:]
    k_cache = torch.zeros(num_blocks, block_size, hkv, d, dtype=DT)
    v_cache = torch.zeros_like(k_cache)
    attn = PagedAttention(hq, hkv, d, scale=d**-0.5)

    done = [0] * num_seqs
    got: list[list[torch.Tensor]] = [[] for _ in range(num_seqs)]
    while any(done[i] < lengths[i] for i in range(num_seqs)):
        chosen = [i for i in range(num_seqs) if done[i] < lengths[i] and rng.random() < 0.8]
        if not chosen:
            continue
        cut = {
            i: rng.randint(1, lengths[i] - done[i]) if steps > 1 else lengths[i] - done[i]
            for i in chosen
        }
        batch = build_forward_batch(
            [SeqInput([0] * cut[i], done[i], tables[i]) for i in chosen],
            block_size,
            decode_group_size=group_size,
        )
        rows = [(i, done[i], done[i] + cut[i]) for i in chosen]
        q = torch.cat([q_all[i][a:b] for i, a, b in rows])
        k = torch.cat([k_all[i][a:b] for i, a, b in rows])
        v = torch.cat([v_all[i][a:b] for i, a, b in rows])
        out = attn(q, k, v, (k_cache, v_cache), batch)
        for j, (i, _a, b) in enumerate(rows):
            lo, hi = batch.query_start_loc[j].item(), batch.query_start_loc[j + 1].item()
            got[i].append(out[lo:hi])
            done[i] = b
    for i in range(num_seqs):
        torch.testing.assert_close(torch.cat(got[i]), want[i], rtol=0, atol=1e-12)


def test_slot_mapping_crosses_block_edges() -> None:
    batch = build_forward_batch(
        [SeqInput([1, 2, 3], 3, [7, 2, 9]), SeqInput([4], 0, [5])], block_size=4
    )
    # positions 3, 4, 5 -> block 7 offset 3, block 2 offsets 0 and 1; position 0 -> block 5
    assert batch.positions.tolist() == [3, 4, 5, 0]
    assert batch.slot_mapping.tolist() == [7 * 4 + 3, 2 * 4, 2 * 4 + 1, 5 * 4]
    assert batch.context_lens.tolist() == [6, 1]
    assert batch.query_start_loc.tolist() == [0, 3, 4]
    # block 9 is allocated ahead but holds no context yet: not part of the table
    assert batch.block_tables.tolist() == [[7, 2], [5, 0]]
    assert batch.logits_indices.tolist() == [2, 3]
    assert (batch.num_prefills, batch.num_decodes) == (1, 1)
    assert slot_for([7, 2, 9], 8, 4) == 9 * 4


def test_prompt_logits_rows_and_fixed_width() -> None:
    batch = build_forward_batch(
        [SeqInput([1], 4, [0, 1]), SeqInput([2, 3, 4], 0, [2], want_prompt_logits=True)],
        block_size=4,
        max_blocks=5,
    )
    assert batch.logits_indices.tolist() == [0, 1, 2, 3]
    assert batch.logits_start_loc == [0, 1, 4]
    assert batch.block_tables.shape == (2, 5)
    assert batch.decode_seq_idx.tolist() == [0] and batch.prefill_seq_idx == [1]


@pytest.mark.parametrize(
    ("seqs", "message"),
    [
        ([], "at least one"),
        ([SeqInput([], 0, [0])], "no new tokens"),
        ([SeqInput([1, 2, 3, 4, 5], 0, [0])], "needing 2 blocks"),
        ([SeqInput([1], 8, [0, 1])], "needing 3 blocks"),
    ],
)
def test_builder_rejects_inconsistent_input(seqs: list[SeqInput], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_forward_batch(seqs, block_size=4)


def test_builder_rejects_table_wider_than_max_blocks() -> None:
    with pytest.raises(ValueError, match="more than max_blocks=2"):
        build_forward_batch([SeqInput([1] * 9, 0, [0, 1, 2])], block_size=4, max_blocks=2)


def test_decode_groups_sort_by_length_and_pad_to_their_own_width() -> None:
    # context lengths 3, 17, 9, 30, 1 with blocks of 4 use 1, 5, 3, 8, 1 blocks
    lens = [3, 17, 9, 30, 1]
    tables = [[10 * i + j for j in range(-(-n // 4))] for i, n in enumerate(lens)]
    groups = decode_groups(tables, lens, block_size=4, group_size=2)
    assert [g.rows.tolist() for g in groups if g.rows is not None] == [[3, 1], [2, 0], [4]]
    assert [tuple(g.block_tables.shape) for g in groups] == [(2, 8), (2, 3), (1, 1)]
    assert groups[0].block_tables[1].tolist() == [10, 11, 12, 13, 14, 0, 0, 0]
    assert groups[1].key_mask.sum(1).tolist() == [9, 3]
    # one group (the batch fits, or a fixed width asks for static shapes): rows stay in order
    (whole,) = decode_groups(tables, lens, block_size=4, group_size=5)
    assert whole.rows is None and whole.block_tables.shape == (5, 8)
    (fixed,) = decode_groups(tables, lens, block_size=4, group_size=2, fixed_width=10)
    assert fixed.rows is None and fixed.key_mask.shape == (5, 40)
    assert decode_groups([], [], block_size=4) == []
    with pytest.raises(ValueError, match="group size must be positive"):
        decode_groups(tables, lens, block_size=4, group_size=0)
