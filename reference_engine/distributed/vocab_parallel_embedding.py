"""Vocabulary-parallel embedding and LM head (vLLM's VocabParallelEmbedding / ParallelLMHead).

Rank r holds vocabulary rows [r*V/tp, (r+1)*V/tp). The embedding looks up the ids that fall
in its range, writes zeros for the others, and one all-reduce assembles every row. The LM
head computes the logits of its own vocabulary slice and an all-gather concatenates the
slices in rank order, so the sampler (on the driver) sees the full vocabulary. A tied model
uses the embedding's shard as its LM head shard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.distributed.parallel_linear import ColumnParallelLinear, divide
from reference_engine.distributed.parallel_state import current_parallel_state

if TYPE_CHECKING:
    from reference_engine.loader import CheckpointTensor


class VocabParallelEmbedding(nn.Module):
    def __init__(self, vocab_size: int, hidden_size: int) -> None:
        super().__init__()
        self.tp = current_parallel_state().tp
        self.vocab_size = vocab_size
        n = divide(vocab_size, self.tp.world_size)
        self.vocab_start, self.vocab_end = self.tp.rank * n, (self.tp.rank + 1) * n
        self.weight = nn.Parameter(torch.empty(n, hidden_size))
        nn.init.normal_(self.weight)  # what nn.Embedding does; a checkpoint overwrites it

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.tp.world_size == 1:
            return F.embedding(input_ids, self.weight)
        mine = (input_ids >= self.vocab_start) & (input_ids < self.vocab_end)
        local = torch.where(mine, input_ids - self.vocab_start, 0)
        x = F.embedding(local, self.weight) * mine[:, None].to(self.weight.dtype)
        return self.tp.all_reduce(x)

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        tensor.expect_shape((self.vocab_size, self.weight.shape[1]))
        self.weight.data.copy_(tensor.read(0, self.vocab_start, self.vocab_end))


class ParallelLMHead(ColumnParallelLinear):
    """The output projection, split by vocabulary rows; `gather` assembles full logits."""

    def __init__(self, hidden_size: int, vocab_size: int) -> None:
        super().__init__(hidden_size, vocab_size, bias=False)


def vocab_parallel_logits(
    hidden: torch.Tensor, embed: VocabParallelEmbedding, lm_head: ParallelLMHead | None
) -> torch.Tensor:
    """[N, H] -> [N, V]: this rank's vocabulary slice, then an all-gather across ranks."""
    local = F.linear(hidden, embed.weight) if lm_head is None else lm_head(hidden)
    return embed.tp.all_gather(local, dim=-1)
