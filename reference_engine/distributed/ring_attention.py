"""Ring attention: queries stay put, key/value blocks travel around the context-parallel ring.

Each of N ranks holds some queries and one block of keys and values (under context
parallelism, context_parallel.py: its stripe of every sequence's KV cache). N rounds: in
round i a rank attends its queries to the block that started on rank r-i, while that block
is already travelling on to rank r+1 (isend/irecv on the ring, overlapped with the compute).
Each round yields a partial output and the log-sum-exp of its scores; `merge_partials`
folds them with the LSE rule

    lse = log(exp(lse_a) + exp(lse_b)),  out = out_a * exp(lse_a - lse) + out_b * exp(lse_b - lse)

which is exactly softmax attention over the union of the key blocks, so the result equals
standard attention over the whole context (tests/engine/test_dist_ring_attention.py).
Which key of a block a query may see (same sequence, causally earlier) is a boolean mask per
block owner, made once per step by the caller and shared by every layer.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from reference_engine.distributed.parallel_state import GroupCoordinator


def partial_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of q [n, H, D] to one key block [m, Hkv, D] under `visible` [n, m] ->
    (out [n, H, D], lse [n, H]); a query that sees no key of the block gets out 0 and
    lse -inf, so merging it changes nothing."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("nhd,mhd->hnm", q, k) * scale
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
    kv: torch.Tensor,
    block_rows: list[int],
    masks: list[torch.Tensor],
    cp: GroupCoordinator,
    scale: float,
) -> torch.Tensor:
    """This rank's attention output for its queries q [n, H, D], the key/value block of
    every rank visited once around the ring.

    kv [2, m, Hkv, D]: this rank's keys and values (stacked, so one message per hop);
    block_rows[o]: how many rows rank o's block has (every rank knows every size, so a
    receive buffer is sized without a message); masks[o] [n, m_o]: which of rank o's keys
    each of this rank's queries sees."""
    world, rank = cp.world_size, cp.rank
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=q.dtype, device=q.device)
    block = kv.contiguous()
    for step in range(world):
        owner = (rank - step) % world  # where the block we hold now started
        pending, incoming = [], None
        if step < world - 1:  # pass the block on while computing with it
            incoming = block.new_empty((2, block_rows[(owner - 1) % world], *block.shape[2:]))
            dst, src = cp.ranks[(rank + 1) % world], cp.ranks[(rank - 1) % world]
            ops = []  # an empty block is known empty on both sides: nothing to send
            if block.shape[1]:
                ops.append(dist.P2POp(dist.isend, block, dst, cp.group))
            if incoming.shape[1]:
                ops.append(dist.P2POp(dist.irecv, incoming, src, cp.group))
            pending = dist.batch_isend_irecv(ops) if ops else []
        if block.shape[1] and q.shape[0]:
            part, part_lse = partial_attention(q, block[0], block[1], masks[owner], scale)
            out, lse = merge_partials(out, lse, part, part_lse)
        for req in pending:
            req.wait()
        if incoming is not None:
            block = incoming
    return out
