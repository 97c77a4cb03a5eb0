"""Prompt lookup (vLLM's `ngram` method, SGLang's NGRAM worker): find the sequence's last
n tokens earlier in its own prompt + output and propose what followed them there.

Free to compute and deterministic, so it pays wherever the output repeats its input
(code edits, extraction, summaries quoting the source, a looping small model).
"""

from __future__ import annotations

from collections.abc import Sequence as Seq

from reference_engine.sequence import Sequence
from reference_engine.spec_decode.proposer import DraftProposal, Proposer
from reference_engine.spec_decode.tree import build_token_tree


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


def prompt_lookup_branches(
    tokens: Seq[int], k: int, n_min: int, n_max: int, width: int
) -> list[list[int]]:
    """Up to `width` distinct continuations (k tokens at most each) of the suffix, longest
    suffix matches first, most recent occurrence first within a length."""
    total = len(tokens)
    branches: list[list[int]] = []
    for n in range(min(n_max, total - 1), n_min - 1, -1):
        suffix = list(tokens[total - n :])
        for start in range(total - n - 1, -1, -1):
            if list(tokens[start : start + n]) == suffix:
                follow = list(tokens[start + n : start + n + k])
                if follow and not any(b[: len(follow)] == follow for b in branches):
                    branches.append(follow)
                    if len(branches) == width:
                        return branches
    return branches


class NgramProposer(Proposer):
    """`tree_width` > 1 proposes a token tree: the distinct continuations of several earlier
    occurrences, shared prefixes merged (SGLang's n-gram drafter builds such trees too)."""

    def __init__(self, n_min: int, n_max: int, tree_width: int = 1) -> None:
        self.n_min = n_min
        self.n_max = n_max
        self.tree_width = tree_width

    def propose(self, seqs: Seq[Sequence], num_tokens: Seq[int]) -> list[DraftProposal]:
        if self.tree_width == 1:
            return [
                DraftProposal(prompt_lookup(seq.all_token_ids, k, self.n_min, self.n_max))
                for seq, k in zip(seqs, num_tokens, strict=True)
            ]
        out = []
        for seq, k in zip(seqs, num_tokens, strict=True):
            branches = prompt_lookup_branches(
                seq.all_token_ids, k, self.n_min, self.n_max, self.tree_width
            )
            tokens, parents = build_token_tree(branches, k * self.tree_width)
            out.append(DraftProposal(tokens, parents=parents))
        return out
