"""Prompt lookup (vLLM's `ngram` method, SGLang's NGRAM worker): find the sequence's last
n tokens earlier in its own prompt + output and propose what followed them there.

Free to compute and deterministic, so it pays wherever the output repeats its input
(code edits, extraction, summaries quoting the source, a looping small model).
"""

from __future__ import annotations

from collections.abc import Sequence as Seq

from reference_engine.sequence import Sequence
from reference_engine.spec_decode.proposer import DraftProposal, Proposer


def prompt_lookup(tokens: Seq[int], k: int, n_min: int, n_max: int) -> list[int]:
    """Up to k tokens that followed an earlier occurrence of the longest suffix of `tokens`
    with n_min <= n <= n_max tokens; [] when no such suffix recurs. Among occurrences the
    most recent one with k tokens after it wins (recent context predicts best; in a loop
    the latest occurrence sits right before the end and has too short a tail)."""
    total = len(tokens)
    if k <= 0:
        return []
    for n in range(min(n_max, total - 1), n_min - 1, -1):
        suffix = list(tokens[total - n :])
        best: list[int] = []
        for start in range(total - n - 1, -1, -1):
            if list(tokens[start : start + n]) == suffix:
                follow = list(tokens[start + n : start + n + k])
                if len(follow) > len(best):
                    best = follow
                if len(best) == k:
                    break
        if best:
            return best
    return []


class NgramProposer(Proposer):
    def __init__(self, n_min: int, n_max: int) -> None:
        self.n_min = n_min
        self.n_max = n_max

    def propose(self, seqs: Seq[Sequence], num_tokens: Seq[int]) -> list[DraftProposal]:
        return [
            DraftProposal(prompt_lookup(seq.all_token_ids, k, self.n_min, self.n_max))
            for seq, k in zip(seqs, num_tokens, strict=True)
        ]
