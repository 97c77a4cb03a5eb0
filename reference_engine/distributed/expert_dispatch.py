"""Expert-parallel MoE: dispatch tokens to the ranks holding their experts, combine back.

Every expert-parallel rank enters a MoE layer with the same tokens (attention before it is
tensor-parallel, its output all-reduced, or replicated). So each rank takes its own
contiguous share of the tokens, and for that share:

1. dispatch: every (token, expert) pair goes to the rank holding (a copy of) its expert,
   one all-to-all for the hidden rows and one for the slot ids (counts exchanged first);
2. experts: the received rows are grouped by local slot, one matmul per expert;
3. combine: a second all-to-all sends each result back to the rank that owns the token,
   which weights the k results of each token and sums them;
4. an all-gather of the shares gives every rank every token's output again.

This is the layout of vLLM's all-to-all MoE backends and SGLang's DeepEP path (there with
data-parallel attention, so step 4 is absent); all communication is torch.distributed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from reference_engine.distributed.parallel_state import GroupCoordinator

if TYPE_CHECKING:
    from reference_engine.layers.fused_moe import FusedMoE, TopKRouting


def token_shares(num_tokens: int, world: int) -> list[int]:
    """Contiguous shares of the tokens, as even as possible (earlier ranks get the extra)."""
    base, extra = divmod(num_tokens, world)
    return [base + (r < extra) for r in range(world)]


def gather_shares(ep: GroupCoordinator, share: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """Every rank's share, concatenated in rank order (all_gather needs equal sizes: pad)."""
    width = max(sizes)
    padded = share.new_zeros((width, *share.shape[1:]))
    padded[: share.shape[0]] = share
    full = ep.all_gather(padded, dim=0)
    return torch.cat([full[r * width : r * width + n] for r, n in enumerate(sizes)])


def expert_parallel_moe(moe: FusedMoE, x: torch.Tensor, routing: TopKRouting) -> torch.Tensor:
    if moe.overlap_stats is not None:  # two_batch_overlap.py switched it on
        from reference_engine.distributed.two_batch_overlap import two_batch_moe

        return two_batch_moe(moe, x, routing)
    ep, placement = moe.ep, moe.placement
    assert placement is not None
    sizes = token_shares(x.shape[0], ep.world_size)
    lo = sum(sizes[: ep.rank])
    n, k = sizes[ep.rank], moe.top_k
    mine = x[lo : lo + n]
    ids, weights = routing.ids[lo : lo + n], routing.weights[lo : lo + n]
    token_idx = torch.arange(n, device=x.device).repeat_interleave(k)
    experts = ids.reshape(-1)
    moe.record_load(experts)
    slots = placement.route(experts, token_idx + lo)  # global token index picks the copy
    dest = torch.div(slots, placement.slots_per_rank, rounding_mode="floor")
    order = torch.argsort(dest, stable=True)
    send = torch.bincount(dest, minlength=ep.world_size).tolist()
    recv = ep.all_to_all_counts(send)
    # 1. dispatch
    rows = ep.all_to_all(mine.index_select(0, token_idx[order]), send, recv)
    local_slots = (slots[order] % placement.slots_per_rank)[:, None]
    got_slots = ep.all_to_all(local_slots, send, recv)[:, 0]
    # 2. the experts on what arrived
    from reference_engine.layers.fused_moe import grouped_experts

    arrived = torch.arange(rows.shape[0], device=x.device)
    done = grouped_experts(rows, arrived, got_slots, moe.w13_weight, moe.w2_weight)
    # 3. combine: results return in the order they were sent
    back = ep.all_to_all(done, recv, send)
    per_pair = torch.empty_like(back)
    per_pair[order] = back
    out = torch.zeros_like(mine).index_add_(0, token_idx, per_pair * weights.reshape(-1, 1))
    # 4. every rank gets every token again
    return gather_shares(ep, out, sizes)
