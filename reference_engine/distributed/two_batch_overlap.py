"""Two-batch overlap (TBO) for expert parallelism: one micro-batch's all-to-all in flight
while the other's experts compute.

Expert-parallel MoE (expert_dispatch.py) is compute and communication in strict turns:
dispatch, experts, combine. With the rank's share of tokens split into two micro-batches
A and B, the turns interleave, so the wire and the cores work at the same time:

    dispatch A, dispatch B   (both started, asynchronous)
    wait A  -> experts A  -> start combine A     (B's dispatch travels meanwhile)
    wait B  -> experts B  -> start combine B     (A's combine travels meanwhile)
    wait combine A, combine B -> weight and sum each token's k results

SGLang (`--enable-two-batch-overlap`) splits the whole forward pass into two micro-batches
and interleaves them layer by layer around DeepEP's asynchronous dispatch and combine; here
the split is inside each MoE layer, which is where the all-to-all happens, and the
asynchronous exchanges are torch.distributed point-to-point operations (gloo) or
`all_to_all_single(async_op=True)` (NCCL). Every rank splits in two, even a share of 0 or 1
token (a micro-batch may be empty), so all ranks post the same exchanges in the same order.
A token's result does not depend on its micro-batch, so outputs equal the non-overlapped
path's (tests/engine/test_dist_two_batch_overlap.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

from reference_engine.distributed.expert_dispatch import gather_shares, token_shares
from reference_engine.distributed.parallel_state import GroupCoordinator

if TYPE_CHECKING:
    from reference_engine.layers.fused_moe import FusedMoE, TopKRouting


@dataclass(slots=True)
class TwoBatchOverlapStats:
    """Per MoE layer, what the overlapped path waited for (owner: that layer's forward).
    `wait_s` is time blocked on exchanges that had not finished: the communication the
    overlap failed to hide."""

    calls: int = 0
    wait_s: float = 0.0
    total_s: float = 0.0


class PendingExchange:
    """An all-to-all started and not yet waited for: `out` is valid after `wait()`."""

    def __init__(
        self, ep: GroupCoordinator, x: torch.Tensor, send: list[int], recv: list[int]
    ) -> None:
        self.out = x.new_empty((sum(recv), *x.shape[1:]))
        self.works: list[Any] = []
        x = x.contiguous()
        if dist.get_backend(ep.group) != "gloo":
            self.works.append(
                dist.all_to_all_single(self.out, x, recv, send, ep.group, async_op=True)
            )
            return
        parts_in, parts_out = list(x.split(send)), list(self.out.split(recv))
        ops = []
        for peer in range(ep.world_size):
            if peer == ep.rank:
                parts_out[peer].copy_(parts_in[peer])
                continue
            if send[peer]:
                ops.append(dist.P2POp(dist.isend, parts_in[peer], ep.ranks[peer], ep.group))
            if recv[peer]:
                ops.append(dist.P2POp(dist.irecv, parts_out[peer], ep.ranks[peer], ep.group))
        if ops:
            self.works = dist.batch_isend_irecv(ops)

    def wait(self, stats: TwoBatchOverlapStats) -> torch.Tensor:
        start = time.perf_counter()
        for work in self.works:
            work.wait()
        stats.wait_s += time.perf_counter() - start
        return self.out


@dataclass(slots=True)
class _MicroBatch:
    """One half of this rank's tokens through dispatch, experts and combine."""

    lo: int  # global index of its first token
    token_idx: torch.Tensor  # [P] local token of each (token, expert) pair
    weights: torch.Tensor  # [P] routing weight of each pair
    order: torch.Tensor  # pairs sorted by destination rank
    send: list[int]
    recv: list[int]
    num_tokens: int
    exchanges: list[PendingExchange] = field(default_factory=list)


def _plan(moe: FusedMoE, routing: TopKRouting, lo: int, n: int) -> tuple[_MicroBatch, torch.Tensor]:
    ep, placement = moe.ep, moe.placement
    assert placement is not None
    k = moe.top_k
    ids, weights = routing.ids[lo : lo + n], routing.weights[lo : lo + n]
    device = routing.ids.device
    token_idx = torch.arange(n, device=device).repeat_interleave(k)
    experts = ids.reshape(-1)
    moe.record_load(experts)
    slots = placement.route(experts, token_idx + lo)  # the same copy as the plain path picks
    dest = torch.div(slots, placement.slots_per_rank, rounding_mode="floor")
    order = torch.argsort(dest, stable=True)
    send = torch.bincount(dest, minlength=ep.world_size).tolist()
    recv = ep.all_to_all_counts(send)
    local_slots = (slots[order] % placement.slots_per_rank)[:, None]
    mb = _MicroBatch(lo, token_idx, weights.reshape(-1, 1), order, send, recv, n)
    return mb, local_slots


def two_batch_moe(moe: FusedMoE, x: torch.Tensor, routing: TopKRouting) -> torch.Tensor:
    from reference_engine.layers.fused_moe import grouped_experts

    start = time.perf_counter()
    ep = moe.ep
    stats = moe.overlap_stats
    if stats is None:
        raise RuntimeError("two_batch_moe needs enable_two_batch_overlap first")
    sizes = token_shares(x.shape[0], ep.world_size)
    lo = sum(sizes[: ep.rank])
    halves = token_shares(sizes[ep.rank], 2)
    # Counts for both halves first (small blocking exchanges), then both dispatches started.
    planned = [_plan(moe, routing, lo + sum(halves[:i]), n) for i, n in enumerate(halves)]
    micro: list[_MicroBatch] = []
    for mb, local_slots in planned:
        rows = x[mb.lo : mb.lo + mb.num_tokens].index_select(0, mb.token_idx[mb.order])
        mb.exchanges = [
            PendingExchange(ep, rows, mb.send, mb.recv),
            PendingExchange(ep, local_slots, mb.send, mb.recv),
        ]
        micro.append(mb)
    combines = []
    for mb in micro:
        rows = mb.exchanges[0].wait(stats)
        got_slots = mb.exchanges[1].wait(stats)[:, 0]
        arrived = torch.arange(rows.shape[0], device=x.device)
        done = grouped_experts(rows, arrived, got_slots, moe.w13_weight, moe.w2_weight)
        combines.append(PendingExchange(ep, done, mb.recv, mb.send))  # results go home
    parts = []
    for mb, combine in zip(micro, combines, strict=True):
        back = combine.wait(stats)
        per_pair = torch.empty_like(back)
        per_pair[mb.order] = back
        mine = x.new_zeros((mb.num_tokens, x.shape[1]))
        parts.append(mine.index_add_(0, mb.token_idx, per_pair * mb.weights))
    stats.calls += 1
    stats.total_s += time.perf_counter() - start
    return gather_shares(ep, torch.cat(parts), sizes)


def enable_two_batch_overlap(model: torch.nn.Module) -> int:
    """Switch every expert-parallel MoE layer of `model` to the overlapped path; returns how
    many layers (0: the model has no expert-parallel layer, nothing to overlap)."""
    from reference_engine.layers.fused_moe import FusedMoE

    count = 0
    for module in model.modules():
        if isinstance(module, FusedMoE) and module.placement is not None:
            module.overlap_stats = TwoBatchOverlapStats()
            count += 1
    return count
