"""H2O ("heavy hitters") KV eviction: keep the blocks attention actually reads.

A request with `SamplingParams.kv_eviction=H2O(budget_blocks, recent_tokens)` accumulates,
for every block of its context, the attention probability mass its queries put on that
block's tokens (summed over heads, layers and queries). Once its prompt is done, after each
step that leaves it holding more than `budget_blocks` blocks, the lowest-scoring full block
outside the last `recent_tokens` positions is evicted: freed from the paged cache, and
invisible to every later query. That is H2O's rule at block granularity (a paged cache
frees blocks, not tokens).

What makes it exact under batching and preemption, like every other path of this engine:

- the record of evictions, block -> first query position that no longer sees it, lives on
  the request (`H2OState`, owned by the Sequence), and attention masks by it
  (`H2OView.narrow`), so a recompute after preemption replays the same visibility;
- scores are added once per query position (`scored_upto`): a recompute re-reads them,
  never re-adds; decisions are made once per position (`decided_upto`), never replayed;
- eviction starts after the prompt, one block per decode step at most, so it does not
  depend on how the prompt was chunked.

Scores come from an explicit softmax over each H2O sequence's visible keys (the fused
kernels do not return probabilities), computed beside the normal attention, so H2O
requests cost extra compute; models on PagedAttention only (not MLA or hybrids). Requests
with a policy bypass the prefix cache, as StreamingLLM ones do.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import torch

from reference_engine.forward_batch import ForwardBatch
from reference_engine.kv_window import FREED_BLOCK, H2O, KVPolicy, visible

if TYPE_CHECKING:
    from reference_engine.kv_cache_manager import KVCacheManager
    from reference_engine.scheduler import ScheduledSeq
    from reference_engine.sequence import Sequence


@dataclass(slots=True)
class H2OState:
    """One request's scores and evictions (owner: its Sequence; the engine adds scores,
    the scheduler decides evictions)."""

    scores: list[float] = field(default_factory=list)  # per block index
    evicted: dict[int, int] = field(default_factory=dict)  # block -> first blind query pos
    scored_upto: int = 0  # query positions below this are already in `scores`
    decided_upto: int = 0  # eviction decided for every step ending at or below this


@dataclass(frozen=True, slots=True)
class H2OView:
    """What a forward pass needs of a request's H2O state: which keys each query sees, and
    from which query position on its probabilities count (SeqInput.kv_policy)."""

    evicted: dict[int, int]
    block_size: int
    scored_upto: int
    wants_scores: ClassVar[bool] = True  # build_forward_batch allocates attention_scores

    def narrow(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """q [..., Q, 1], k [..., 1, K] positions -> keep mask: k's block not yet evicted."""
        if not self.evicted:
            return torch.ones_like(q >= 0) & torch.ones_like(k >= 0)
        blocks = torch.div(k, self.block_size, rounding_mode="floor")
        blind_from = torch.full_like(blocks, torch.iinfo(torch.int64).max)
        for block, pos in self.evicted.items():
            blind_from = torch.where(blocks == block, pos, blind_from)
        return q < blind_from


def view(seq: Sequence, block_size: int) -> KVPolicy | None:
    """The kv_policy a SeqInput carries: the request's own policy, or its H2O view."""
    policy = seq.params.kv_eviction
    if not isinstance(policy, H2O):
        return policy
    if seq.h2o is None:
        seq.h2o = H2OState()
    state: H2OState = seq.h2o
    return H2OView(dict(state.evicted), block_size, state.scored_upto)


def accumulate(
    q: torch.Tensor,  # [T, Hq, D], rotated
    k_cache: torch.Tensor,
    batch: ForwardBatch,
    scale: float,
    layer_window: int | None,
) -> None:
    """Add this layer's attention probabilities of every H2O sequence's new queries (those
    at or past its `scored_upto`) to `batch.attention_scores`, per key position."""
    from reference_engine.layers.attention import _starts, gather_kv  # it imports us

    assert batch.attention_scores is not None
    starts = _starts(batch.query_lens_cpu)
    for i, policy in enumerate(batch.kv_policies):
        if not isinstance(policy, H2OView):
            continue
        n, ctx = batch.query_lens_cpu[i], batch.context_lens_cpu[i]
        used = batch.block_tables[i][: -(-ctx // batch.block_size)]
        keys = gather_kv(k_cache, used)[:ctx]  # [C, Hkv, D]
        q_pos = torch.arange(ctx - n, ctx, device=q.device)
        mask = visible(q_pos, torch.arange(ctx, device=q.device), layer_window, policy)
        mask &= (q_pos >= policy.scored_upto)[:, None]  # a recompute does not count twice
        rows = q[starts[i] : starts[i] + n]  # [n, Hq, D]
        group = rows.shape[1] // keys.shape[1]
        logits = torch.einsum("nhd,chd->nhc", rows, keys.repeat_interleave(group, dim=1))
        logits = (logits * scale).masked_fill(~mask[:, None, :], float("-inf"))
        probs = torch.softmax(logits.float(), dim=-1).nan_to_num(0.0)  # fully masked rows: 0
        batch.attention_scores[i, :ctx] += probs.sum(dim=(0, 1)).to(batch.attention_scores)


def record_scores(scheduled: Seq[ScheduledSeq], batch: ForwardBatch) -> None:
    """After the forward pass: fold each H2O sequence's key scores into per-block totals."""
    assert batch.attention_scores is not None
    bs = batch.block_size
    for i, item in enumerate(scheduled):
        state = item.seq.h2o
        if state is None or not isinstance(batch.kv_policies[i], H2OView):
            continue
        if item.end <= state.scored_upto:
            continue
        ctx = batch.context_lens_cpu[i]
        per_key = batch.attention_scores[i, :ctx]
        blocks = torch.zeros(-(-ctx // bs), dtype=per_key.dtype)
        blocks.index_add_(0, torch.arange(ctx) // bs, per_key.cpu())
        state.scores.extend([0.0] * (len(blocks) - len(state.scores)))
        for b, value in enumerate(blocks.tolist()):
            state.scores[b] += value
        state.scored_upto = item.end


def evict(seq: Sequence, kv: KVCacheManager) -> None:
    """After a decode step past the prompt: drop the lowest-scoring evictable block while
    the request holds more than its budget (at most one per step, H2O's pace)."""
    policy, state = seq.params.kv_eviction, seq.h2o
    if not isinstance(policy, H2O) or state is None:
        return
    n, bs = seq.num_computed_tokens, kv.block_size
    table = kv.block_tables.get(seq.seq_id)
    if table is None:
        return
    # Replay: blocks evicted before a recompute go again once no query may still see them.
    replay = [
        b
        for b, pos in state.evicted.items()
        if pos <= n and b < len(table) and table[b] != FREED_BLOCK
    ]
    kv.evict_blocks(seq.seq_id, replay)
    if n < seq.num_prompt_tokens or n <= state.decided_upto:
        return
    state.decided_upto = n
    held = sum(b != FREED_BLOCK for b in table)
    if held <= policy.budget_blocks:
        return
    last_evictable = (n - policy.recent_tokens) // bs  # blocks fully before the window
    candidates = [
        b
        for b in range(min(last_evictable, len(table)))
        if table[b] != FREED_BLOCK and b not in state.evicted
    ]
    if not candidates:
        return
    victim = min(candidates, key=lambda b: (state.scores[b] if b < len(state.scores) else 0.0, b))
    state.evicted[victim] = n  # queries from position n on no longer see it
    kv.evict_blocks(seq.seq_id, [victim])
