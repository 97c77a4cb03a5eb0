"""StructuredOutputManager (vLLM's name): one GrammarMatcher per constrained sequence.

Each step, for every sampling row of a constrained sequence, the row's matcher state
fills one row of a packed token bitmask (32 tokens per int32); the mask is applied to
that row's logits in place, before the batched sampler, so every knob (temperature,
top-k/p, penalties, logprobs) works on the constrained distribution and unconstrained
rows are untouched. A speculative row j sees the sequence as if drafts 1..j were already
generated: the matcher advances through them, fills the row, and rolls back. Only the
tokens the engine finally emits advance a matcher for good (`accept`).

Owned by the Engine. Matchers of finished or aborted sequences are dropped at the next
step (`apply`), so nothing needs a release hook.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass
from typing import Any

import torch

from reference_engine.sequence import Sequence
from reference_engine.structured_output.params import StructuredOutputsParams
from reference_engine.structured_output.xgrammar_backend import XgrammarBackend


@dataclass(slots=True)
class ConstrainedRow:
    """One logits row to constrain: `seq`'s state after also generating `extra` tokens."""

    logits_row: int
    seq: Sequence
    extra: Seq[int] = ()


def unpack_bitmask(bitmask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """[R, ceil(V / 32)] int32 -> [R, V] bool, bit j of word w allowing token 32 w + j."""
    shifts = torch.arange(32, dtype=torch.int32, device=bitmask.device)
    bits = (bitmask.unsqueeze(-1) >> shifts) & 1
    return bits.reshape(bitmask.shape[0], -1)[:, :vocab_size].bool()


class StructuredOutputManager:
    def __init__(self, tokenizer: Any, vocab_size: int, stop_token_ids: Seq[int]) -> None:
        self._tokenizer = tokenizer
        self.vocab_size = vocab_size
        self._stop_token_ids = list(stop_token_ids)
        self._backend: XgrammarBackend | None = None
        self._matchers: dict[str, tuple[Sequence, Any]] = {}

    @property
    def backend(self) -> XgrammarBackend:
        if self._backend is None:
            self._backend = XgrammarBackend(self._tokenizer, self.vocab_size, self._stop_token_ids)
        return self._backend

    def compile(self, params: StructuredOutputsParams) -> Any:
        """Compile (or fetch) the constraint; raises GrammarError with a clear message."""
        return self.backend.compile(params)

    def add(self, seq: Sequence, compiled: Any) -> None:
        self._matchers[seq.seq_id] = (seq, self.backend.matcher(compiled))

    def _matcher(self, seq: Sequence) -> Any | None:
        # By identity: a finished request's id may be reused before its entry is dropped.
        entry = self._matchers.get(seq.seq_id)
        return entry[1] if entry is not None and entry[0] is seq else None

    def is_constrained(self, seq: Sequence) -> bool:
        return self._matcher(seq) is not None

    @torch.inference_mode()  # the runner's logits are inference tensors
    def apply(self, logits: torch.Tensor, rows: list[ConstrainedRow]) -> None:
        """Mask disallowed tokens of each row to -inf, in place."""
        for seq_id in [k for k, (s, _) in self._matchers.items() if s.is_finished]:
            del self._matchers[seq_id]
        if not rows:
            return
        bitmask = self.backend.allocate_bitmask(len(rows))
        for i, row in enumerate(rows):
            matcher = self._matcher(row.seq)
            if matcher is None:  # ended while its step was in flight: the row is dropped
                bitmask[i] = -1
                continue
            advanced = 0
            for token in row.extra:
                if not matcher.accept_token(token):
                    break  # a draft the grammar forbids: this row is never reached
                advanced += 1
            if advanced == len(row.extra):
                matcher.fill_next_token_bitmask(bitmask, i)
            else:
                bitmask[i] = -1  # all bits set: no constraint on an unreachable row
            if advanced:
                matcher.rollback(advanced)
        allowed = unpack_bitmask(bitmask.to(logits.device), logits.shape[1])
        index = torch.tensor([r.logits_row for r in rows], dtype=torch.long, device=logits.device)
        logits[index] = logits[index].masked_fill(~allowed, float("-inf"))

    def accept(self, seq: Sequence, token: int) -> bool:
        """Advance the sequence's matcher by an emitted token. False when the grammar is
        complete (terminated) or refuses the token: the sequence must end here."""
        matcher = self._matcher(seq)
        if matcher is None:
            return True
        return bool(matcher.accept_token(token)) and not matcher.is_terminated()
