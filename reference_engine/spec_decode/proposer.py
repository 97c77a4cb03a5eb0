"""The drafter interface: given running sequences and how many tokens each may draft,
return the draft tokens (and, for a drafter that samples, the distribution it sampled from).

A drafter owns whatever state it needs between steps (the draft model its KV cache);
`release` is called with the ids of sequences that stopped running, so nothing leaks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence as Seq
from dataclasses import dataclass

import torch

from reference_engine.sequence import Sequence


@dataclass(slots=True)
class DraftProposal:
    """One sequence's drafts. `probs` [k, V] is the distribution each draft token was drawn
    from, or None when the drafter is deterministic (n-gram lookup, a greedy draft):
    verification then treats q as one-hot on the draft token."""

    token_ids: list[int]
    probs: torch.Tensor | None = None
    # Tree drafts (tree.py): the parent row of each draft, 0 being the root (the last sampled
    # token); None for a chain, where draft i follows draft i - 1.
    parents: list[int] | None = None


class Proposer(ABC):
    @abstractmethod
    def propose(self, seqs: Seq[Sequence], num_tokens: Seq[int]) -> list[DraftProposal]:
        """Up to num_tokens[i] drafts for seqs[i], which has exactly one uncomputed token
        (its last sampled one). Fewer (even none) is always allowed."""

    def release(self, seq_ids: Seq[str]) -> None:  # noqa: B027 - stateless drafters keep nothing
        """Forget sequences that no longer run (finished, aborted, preempted)."""
