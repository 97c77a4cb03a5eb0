"""Ring attention for context parallelism: one long prompt's tokens split over ranks.

Rank r of N holds the queries, keys and values of two chunks of the prompt: chunk r and
chunk 2N-1-r of 2N equal chunks (`balanced_chunks`). Under a causal mask an early chunk
sees few keys and a late one many; pairing them gives every rank the same amount of work
(the "zigzag" split of Llama 3's and Megatron's context parallelism).

N rounds: in round i a rank attends its queries to the key/value block that started on rank
r-i, while that block is already travelling on to rank r+1 (isend/irecv on the ring,
overlapped with the compute). Each round yields a partial output and the log-sum-exp of its
scores; `merge_partials` folds them with the LSE rule

    lse = log(exp(lse_a) + exp(lse_b)),  out = out_a * exp(lse_a - lse) + out_b * exp(lse_b - lse)

which is exactly softmax attention over the union of the key blocks, so the result equals
standard causal attention over the whole prompt (tests/engine/test_dist_ring_attention.py).

In the engine (`context_parallel_attention`, called by PagedAttention for a prompt with
nothing cached before it): every CP rank holds the whole batch, runs ring attention for its
balanced share of the prompt's queries, and an all-gather reassembles the full output. Only
that attention is split: projections, MLP and the KV cache stay replicated on every rank,
and chunks that continue a cached context, and decodes, run as in one process.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from reference_engine.distributed.parallel_state import GroupCoordinator


def balanced_chunks(seq_len: int, world: int, rank: int) -> torch.Tensor:
    """Positions rank `rank` holds: chunks rank and 2*world-1-rank of 2*world."""
    bounds = torch.linspace(0, seq_len, 2 * world + 1).round().long().tolist()
    first = range(bounds[rank], bounds[rank + 1])
    second = range(bounds[2 * world - 1 - rank], bounds[2 * world - rank])
    return torch.tensor([*first, *second], dtype=torch.long)


def partial_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_pos: torch.Tensor,
    k_pos: torch.Tensor,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention of q [n, H, D] to one key block [m, Hkv, D] -> (out [n, H, D],
    lse [n, H]); a query that sees no key of the block gets out 0 and lse -inf."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("nhd,mhd->hnm", q, k) * scale
    visible = k_pos[None, :] <= q_pos[:, None]  # [n, m]
    scores = scores.masked_fill(~visible[None], float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # [H, n]
    probs = torch.exp(scores - lse[..., None]).nan_to_num(0.0)  # all-masked rows: 0
    out = torch.einsum("hnm,mhd->nhd", probs, v)
    return out, lse.transpose(0, 1)


def merge_partials(
    out_a: torch.Tensor, lse_a: torch.Tensor, out_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two partial attentions over disjoint key sets -> the attention over both."""
    lse = torch.logaddexp(lse_a, lse_b)
    # A side that saw no key (-inf) weighs 0; guard -inf - -inf = nan where both did.
    wa = torch.exp(lse_a - lse).nan_to_num(0.0)[..., None]
    wb = torch.exp(lse_b - lse).nan_to_num(0.0)[..., None]
    return out_a * wa + out_b * wb, lse


def ring_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    positions: torch.Tensor,
    cp: GroupCoordinator,
    seq_len: int,
    scale: float,
) -> torch.Tensor:
    """This rank's causal attention output for its positions (`balanced_chunks`), the keys
    and values of every rank visited once around the ring."""
    world, rank = cp.world_size, cp.rank
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=q.dtype)
    block_k, block_v = k.contiguous(), v.contiguous()
    for step in range(world):
        owner = (rank - step) % world  # where the block we hold now started
        pending = []
        if step < world - 1:  # pass the block on while computing with it
            # The next block started on rank owner-1; shares differ by a token or so.
            rows = len(balanced_chunks(seq_len, world, (owner - 1) % world))
            next_k = block_k.new_empty((rows, *block_k.shape[1:]))
            next_v = block_v.new_empty((rows, *block_v.shape[1:]))
            dst, src = cp.ranks[(rank + 1) % world], cp.ranks[(rank - 1) % world]
            ops = [
                dist.P2POp(dist.isend, block_k, dst, cp.group),
                dist.P2POp(dist.isend, block_v, dst, cp.group),
                dist.P2POp(dist.irecv, next_k, src, cp.group),
                dist.P2POp(dist.irecv, next_v, src, cp.group),
            ]
            pending = dist.batch_isend_irecv(ops)
        k_pos = balanced_chunks(seq_len, world, owner)
        part, part_lse = partial_attention(q, block_k, block_v, positions, k_pos, scale)
        out, lse = merge_partials(out, lse, part, part_lse)
        for req in pending:
            req.wait()
        if step < world - 1:
            block_k, block_v = next_k, next_v
    return out


def context_parallel_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cp: GroupCoordinator, scale: float
) -> torch.Tensor:
    """Causal attention over one whole prompt (q [n, H, D], k/v [n, Hkv, D], held by every
    CP rank), computed as ring attention on balanced shares and gathered back."""
    n, world = q.shape[0], cp.world_size
    mine = balanced_chunks(n, world, cp.rank)
    local = ring_attention(q[mine], k[mine], v[mine], mine, cp, n, scale)
    shares = [balanced_chunks(n, world, r) for r in range(world)]
    width = max(len(s) for s in shares)
    padded = local.new_zeros((width, *local.shape[1:]))
    padded[: len(mine)] = local
    gathered = cp.all_gather(padded, dim=0)
    out = torch.empty_like(q)
    for r, pos in enumerate(shares):
        out[pos] = gathered[r * width : r * width + len(pos)]
    return out
