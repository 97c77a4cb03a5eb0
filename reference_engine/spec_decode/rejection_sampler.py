"""Verification that keeps the target distribution (Leviathan et al. / Chen et al. 2023).

For draft token x drawn from the drafter's q at position j, with the target's p_j:
accept x with probability min(1, p_j(x) / q_j(x)); on rejection emit a token drawn from
the residual max(0, p_j - q_j), renormalised, and stop. If every draft is accepted, the
target's next distribution p_k gives one more ("bonus") token. Every emitted token is
then distributed exactly as if the target had sampled it alone.

A deterministic drafter (n-gram lookup, a greedy draft model) has q one-hot on x. Then
the rule reduces to: draw y ~ p_j; accept x iff y == x; else emit y (y ~ p_j given y != x
is exactly the residual). `accept_by_sampling` does that with the batched sampler's own
draws, so a deterministic draft needs nothing beyond the ordinary sampler; a greedy row
(p_j one-hot on its argmax) then accepts exactly the drafts the target would have produced.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from reference_engine.sampler import inverse_cdf_sample


def accept_by_sampling(draft_token_ids: Sequence[int], sampled: Sequence[int]) -> list[int]:
    """Deterministic drafts: `sampled[j]` is the target's own draw at draft position j
    (k + 1 of them). Returns the emitted tokens: accepted drafts, then the first
    disagreeing draw or the bonus token."""
    if len(sampled) != len(draft_token_ids) + 1:
        raise ValueError(f"{len(draft_token_ids)} drafts need {len(draft_token_ids) + 1} draws")
    out: list[int] = []
    for draft, target in zip(draft_token_ids, sampled, strict=False):
        out.append(target)
        if target != draft:
            return out
    out.append(sampled[-1])
    return out


def _uniform(generator: torch.Generator | None) -> float:
    return float(torch.rand(1, generator=generator, dtype=torch.float64).item())


def _draw(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    u = torch.tensor([_uniform(generator)], dtype=torch.float64)
    return int(inverse_cdf_sample(probs.to(torch.float64).unsqueeze(0), u).item())


def rejection_sample(
    target_probs: torch.Tensor,  # [k + 1, V]
    draft_token_ids: Sequence[int],  # k
    draft_probs: torch.Tensor,  # [k, V]: q_j, the distribution draft j was drawn from
    generator: torch.Generator | None = None,
) -> list[int]:
    """Stochastic drafts: the emitted tokens (1 to k + 1 of them)."""
    k = len(draft_token_ids)
    if target_probs.shape[0] != k + 1 or draft_probs.shape[0] < k:
        raise ValueError(
            f"{k} drafts need {k + 1} target rows and {k} draft rows, got "
            f"{target_probs.shape[0]} and {draft_probs.shape[0]}"
        )
    p_all = target_probs.to(torch.float64)
    q_all = draft_probs.to(torch.float64)
    out: list[int] = []
    for j, x in enumerate(draft_token_ids):
        p, q = float(p_all[j, x]), float(q_all[j, x])
        # u < p / q, written without the division so q == 0 (never drawn) rejects.
        if _uniform(generator) * q < p:
            out.append(int(x))
            continue
        residual = (p_all[j] - q_all[j]).clamp(min=0.0)
        if float(residual.sum()) <= 0.0:
            residual = p_all[j]  # p == q up to rounding: rejection was a rounding accident
        out.append(_draw(residual, generator))
        return out
    out.append(_draw(p_all[k], generator))
    return out
