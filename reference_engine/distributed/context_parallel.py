"""Context parallelism: every sequence's tokens, and its KV cache, split over N ranks.

Tokens are striped: position p belongs to CP rank p % N (vLLM's decode context parallelism
interleaves the KV cache the same way; Brandon et al.'s "striped attention" uses the same
split for prefill). Under a causal mask an early token sees few keys and a late one many;
striping gives every rank an equal mix of both, so causal work is balanced without the
zigzag reordering of contiguous chunks.

What each rank holds and does in a step (`run_context_parallel`, on every CP rank):
- the whole model (or, with TP, its tensor-parallel shard; with PP, its stage's layers, the
  stage passing this rank's rows on: pipeline_parallel.run_stage) runs on this rank's
  tokens only: embeddings, projections, MLP, norms; nothing is replicated across CP ranks;
- the KV cache of a rank holds its stripe of every sequence: one logical block of the
  driver's `block_size` tokens is, on each rank, a physical block of block_size / N rows
  under the *same* block id, so the driver's block tables, prefix cache, swap and
  copy-on-write address every rank's shard unchanged;
- attention (`context_parallel_attention`) needs keys from every rank:
  * sequences with several new tokens (fresh prompts, chunks continuing a cached prefix):
    ring attention (ring_attention.py): this rank's stripe of the sequence's context (cached
    prefix and new tokens alike) travels around the ring, partials merged by LSE;
  * decodes: moving a long context for one query is wasteful, so the queries move instead
    (vLLM's DCP): decode queries are all-gathered, every rank attends them to its own
    stripe, and the partial outputs and LSEs are all-gathered and merged;
- the logits rows each rank computed are all-gathered back into the batch's order.

Who owns what: the driver still owns block tables and the block pool (one table for all
ranks); `ContextParallelShard` is made by every rank from the broadcast ForwardBatch and
read by every attention layer of that step.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.distributed.parallel_state import GroupCoordinator
from reference_engine.distributed.ring_attention import merge_partials, ring_attention

if TYPE_CHECKING:
    from reference_engine.forward_batch import ForwardBatch
    from reference_engine.model_runner import ModelRunner


@dataclass(slots=True)
class ContextParallelShard:
    """One CP rank's share of one step, made by `shard_batch` on every rank from the same
    ForwardBatch (so every rank can size every other rank's messages); read-only after."""

    rank: int
    world: int
    rows: torch.Tensor  # [n] rows of the batch's token axis this rank computes, in order
    slot_mapping: torch.Tensor  # [n] where those rows' K/V go in this rank's cache
    # Ring attention (sequences with several new tokens):
    ring_rows: torch.Tensor  # [nq] indices into `rows` of those sequences' queries
    ring_kv_slots: torch.Tensor  # [m] this rank's cache slots of their contexts' stripes
    ring_block_rows: list[int]  # rows of every rank's stripe block
    ring_masks: list[torch.Tensor]  # per owner rank: [nq, m_owner] which keys each query sees
    # Decode attention (sequences with one new token), in the batch's decode order:
    decode_rows: torch.Tensor  # [d_local] indices into `rows` of this rank's decode queries
    decode_gather: torch.Tensor  # [D] where decode j sits in the all-gathered [N * pad] rows
    decode_pad: int  # most decode queries one rank holds (0: no decode this step)
    decode_kv_slots: torch.Tensor  # [D, L] this rank's cache slots of each decode's stripe
    decode_key_mask: torch.Tensor  # [D, L] which of those slots are real
    decode_mine: torch.Tensor  # [d_local] this rank's decodes among the D
    # Logits: this rank's rows among `rows`, and where every logits row sits once gathered.
    logits_local: torch.Tensor  # [l_local] indices into `rows`
    logits_gather: torch.Tensor  # [L] positions in the all-gathered [N * pad] logits rows
    logits_pad: int

    def to(self, device: torch.device) -> ContextParallelShard:
        def move(v: Any) -> Any:  # any field: a tensor, a list of tensors, an int
            if isinstance(v, torch.Tensor):
                return v.to(device)
            if isinstance(v, list) and v and isinstance(v[0], torch.Tensor):
                return [t.to(device) for t in v]
            return v

        return ContextParallelShard(
            **{f.name: move(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


def stripe(start: int, end: int, rank: int, world: int) -> torch.Tensor:
    """Positions in [start, end) that rank `rank` of `world` holds (p % world == rank)."""
    first = start + (rank - start) % world
    return torch.arange(first, max(first, end), world, dtype=torch.int64)


def local_slots(
    block_table: torch.Tensor, positions: torch.Tensor, block_size: int, world: int
) -> torch.Tensor:
    """Cache slots, in a rank's block_size / world-row blocks, of positions that rank holds."""
    local_block = block_size // world
    return block_table[positions // block_size] * local_block + (positions % block_size) // world


def _gather_layout(owner: list[int], world: int) -> tuple[torch.Tensor, int]:
    """Items owned by ranks, in order -> each item's row in an all-gather of per-rank lists
    padded to the longest, and that padding."""
    counts = [0] * world
    where = []
    for o in owner:
        where.append(counts[o])
        counts[o] += 1
    pad = max(counts)
    return torch.tensor([o * pad + w for o, w in zip(owner, where, strict=True)]), pad


def shard_batch(batch: ForwardBatch, rank: int, world: int) -> ContextParallelShard:
    """This rank's rows, local slots, ring masks and decode layout for one step."""
    if batch.kv_policies and any(p is not None for p in batch.kv_policies):
        raise NotImplementedError("KV eviction policies do not run with context parallelism")
    if batch.tree_masks or batch.attention_scores is not None:
        raise NotImplementedError("tree drafts and H2O scores do not run with context parallelism")
    if batch.block_size % world:
        raise ValueError(f"block_size {batch.block_size} is not divisible by the CP size {world}")
    positions = batch.positions.cpu()
    owner_of_row = positions % world
    mine = owner_of_row == rank
    rows = mine.nonzero().squeeze(1)
    bs = batch.block_size
    slots = batch.slot_mapping.cpu()[rows]
    local_index = torch.full((len(positions),), -1, dtype=torch.int64)
    local_index[rows] = torch.arange(len(rows))
    query_lens = torch.tensor(batch.query_lens_cpu, dtype=torch.int64)
    seq_of_row = torch.repeat_interleave(torch.arange(len(query_lens)), query_lens)

    # Ring: this rank's queries of multi-token sequences, every rank's stripe of their contexts.
    q_rows = (mine & (query_lens[seq_of_row] > 1)).nonzero().squeeze(1)
    ring_kv_slots, block_rows, masks = _ring_layout(
        batch, rank, world, seq_of_row[q_rows], positions[q_rows]
    )
    decode_seqs, decode_gather, decode_pad, decode_slots, decode_mask, decode_mine = _decode_layout(
        batch, rank, world
    )

    logits_rows = batch.logits_indices.cpu()
    logits_gather, logits_pad = _gather_layout(owner_of_row[logits_rows].tolist(), world)
    return ContextParallelShard(
        rank=rank,
        world=world,
        rows=rows,
        slot_mapping=(slots // bs) * (bs // world) + (slots % bs) // world,
        ring_rows=local_index[q_rows],
        ring_kv_slots=ring_kv_slots,
        ring_block_rows=block_rows,
        ring_masks=masks,
        decode_rows=local_index[batch.query_start_loc.cpu()[decode_seqs]],
        decode_gather=decode_gather,
        decode_pad=decode_pad,
        decode_kv_slots=decode_slots,
        decode_key_mask=decode_mask,
        decode_mine=decode_mine,
        logits_local=local_index[logits_rows[mine[logits_rows]]],
        logits_gather=logits_gather,
        logits_pad=logits_pad,
    )


def _ring_layout(
    batch: ForwardBatch, rank: int, world: int, q_seq: torch.Tensor, q_pos: torch.Tensor
) -> tuple[torch.Tensor, list[int], list[torch.Tensor]]:
    """For the multi-token sequences: this rank's cache slots of their stripes, the rows of
    every rank's stripe block, and per block which keys each of this rank's queries sees
    (same sequence, not after the query)."""
    ring = [i for i, n in enumerate(batch.query_lens_cpu) if n > 1]
    ctx, tables = batch.context_lens_cpu, batch.block_tables.cpu()
    own_slots = torch.zeros(0, dtype=torch.int64)
    block_rows, masks = [], []
    for o in range(world):
        k_pos = [stripe(0, ctx[i], o, world) for i in ring]
        k_seq = torch.repeat_interleave(
            torch.tensor(ring, dtype=torch.int64),
            torch.tensor([len(p) for p in k_pos], dtype=torch.int64),
        )
        k_pos_t = torch.cat(k_pos) if k_pos else torch.zeros(0, dtype=torch.int64)
        block_rows.append(len(k_pos_t))
        masks.append((q_seq[:, None] == k_seq[None, :]) & (k_pos_t[None, :] <= q_pos[:, None]))
        if o == rank and ring:
            own_slots = torch.cat(
                [local_slots(tables[i], p, batch.block_size, world) for i, p in zip(ring, k_pos, strict=True)]
            )  # fmt: skip
    return own_slots, block_rows, masks


def _decode_layout(
    batch: ForwardBatch, rank: int, world: int
) -> tuple[torch.Tensor, torch.Tensor, int, torch.Tensor, torch.Tensor, torch.Tensor]:
    """For the one-token sequences (in batch order): those whose query is here (it lives on
    the rank holding its position), where each sits in the all-gathered queries and the
    padding, this rank's cache slots of each one's stripe with their mask, and which of
    the decodes are this rank's."""
    decodes = [i for i, n in enumerate(batch.query_lens_cpu) if n == 1]
    ctx, tables = batch.context_lens_cpu, batch.block_tables.cpu()
    owner = [(ctx[i] - 1) % world for i in decodes]
    gather, pad = (
        _gather_layout(owner, world) if decodes else (torch.zeros(0, dtype=torch.int64), 0)
    )
    mine = [j for j, o in enumerate(owner) if o == rank]
    key_pos = [stripe(0, ctx[i], rank, world) for i in decodes]
    width = max([1, *(len(p) for p in key_pos)])
    slots = torch.zeros(len(decodes), width, dtype=torch.int64)
    key_mask = torch.zeros(len(decodes), width, dtype=torch.bool)
    for j, (i, p) in enumerate(zip(decodes, key_pos, strict=True)):
        slots[j, : len(p)] = local_slots(tables[i], p, batch.block_size, world)
        key_mask[j, : len(p)] = True
    seqs_here = torch.tensor([decodes[j] for j in mine], dtype=torch.int64)
    return seqs_here, gather, pad, slots, key_mask, torch.tensor(mine, dtype=torch.int64)


def _flat(cache: torch.Tensor) -> torch.Tensor:
    return cache.view(-1, *cache.shape[2:])


def _all_gather_rows(cp: GroupCoordinator, x: torch.Tensor, pad: int) -> torch.Tensor:
    """Every rank's rows of x, each padded to `pad` rows, concatenated in rank order."""
    padded = x.new_zeros((pad, *x.shape[1:]))
    padded[: x.shape[0]] = x
    return cp.all_gather(padded, dim=0)


def decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    shard: ContextParallelShard,
    cp: GroupCoordinator,
    scale: float,
) -> torch.Tensor:
    """This rank's decode queries q [d_local, H, D] -> their outputs: all queries gathered,
    attended to this rank's stripe, partials gathered and merged by LSE."""
    queries = _all_gather_rows(cp, q, shard.decode_pad)[shard.decode_gather]  # [D, H, Dh]
    keys = _flat(k_cache)[shard.decode_kv_slots].to(q.dtype)  # [D, L, Hkv, Dh]
    values = _flat(v_cache)[shard.decode_kv_slots].to(q.dtype)
    group = q.shape[1] // keys.shape[2]
    keys = keys.repeat_interleave(group, dim=2)
    values = values.repeat_interleave(group, dim=2)
    scores = torch.einsum("bhd,blhd->bhl", queries, keys) * scale
    scores = scores.masked_fill(~shard.decode_key_mask[:, None, :], float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # [D, H]; -inf where this rank holds no key yet
    probs = torch.exp(scores - lse[..., None]).nan_to_num(0.0)
    out = torch.einsum("bhl,blhd->bhd", probs, values)
    # One all-gather for both: each partial's LSE rides as one more column of its output.
    parts = cp.all_gather(torch.cat([out, lse[..., None]], dim=-1)[None], dim=0)
    outs, lses = parts[..., :-1], parts[..., -1]  # [N, D, H, Dh], [N, D, H]
    merged, merged_lse = outs[0], lses[0]
    for r in range(1, cp.world_size):
        merged, merged_lse = merge_partials(merged, merged_lse, outs[r], lses[r])
    return merged[shard.decode_mine]


def context_parallel_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    kv_cache: tuple[torch.Tensor, torch.Tensor],
    shard: ContextParallelShard,
    cp: GroupCoordinator,
    scale: float,
) -> torch.Tensor:
    """Attention of this rank's rows (q [n, H, D], k/v [n, Hkv, D]) over whole contexts
    whose KV is striped over the CP ranks. Every rank calls it in every layer, with or
    without rows of its own: the collectives inside meet the other ranks'."""
    k_cache, v_cache = kv_cache
    _flat(k_cache).index_copy_(0, shard.slot_mapping, k.to(k_cache.dtype))
    _flat(v_cache).index_copy_(0, shard.slot_mapping, v.to(v_cache.dtype))
    out = torch.zeros_like(q)
    if any(shard.ring_block_rows):  # the same on every rank: all join the ring or none
        kv = torch.stack(
            [_flat(k_cache)[shard.ring_kv_slots], _flat(v_cache)[shard.ring_kv_slots]]
        ).to(q.dtype)
        out[shard.ring_rows] = ring_attention(
            q[shard.ring_rows], kv, shard.ring_block_rows, shard.ring_masks, cp, scale
        )
    if shard.decode_pad:
        out[shard.decode_rows] = decode_attention(
            q[shard.decode_rows], k_cache, v_cache, shard, cp, scale
        )
    return out


def with_shard(batch: ForwardBatch, cp: GroupCoordinator, device: torch.device) -> ForwardBatch:
    """The batch carrying this CP rank's shard (unchanged without context parallelism)."""
    if cp.world_size == 1:
        return batch
    shard = shard_batch(batch, cp.rank, cp.world_size).to(device)
    return dataclasses.replace(batch, context_parallel=shard)


def gather_logits(
    cp: GroupCoordinator, logits: torch.Tensor, shard: ContextParallelShard
) -> torch.Tensor:
    """Every CP rank's logits rows -> the batch's, in its order, on every CP rank."""
    return _all_gather_rows(cp, logits, shard.logits_pad)[shard.logits_gather]


def run_context_parallel(runner: ModelRunner, batch: ForwardBatch) -> torch.Tensor:
    """One step on this CP rank -> the whole batch's logits (on every CP rank)."""
    cp = runner.parallel.cp
    batch = with_shard(batch, cp, runner.device)
    shard = batch.context_parallel
    assert shard is not None
    with torch.inference_mode():
        rows = shard.rows
        hidden = runner.model(batch.input_ids[rows], batch.positions[rows], runner.kv_caches, batch)
        logits = runner.model.compute_logits(hidden[shard.logits_local])
        logits = logits.to(torch.promote_types(runner.dtype, torch.float32))
        return gather_logits(cp, logits, shard)
