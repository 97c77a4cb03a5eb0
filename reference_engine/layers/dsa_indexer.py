"""DeepSeek sparse attention (DSA, DeepSeek-V3.2): a light indexer picks, for every query,
the `index_topk` past tokens its MLA attention may read.

The indexer is a tiny multi-head scorer of its own: a few heads (`index_n_heads`) of width
`index_head_dim` on the query side (projected from MLA's compressed query), ONE key per
token (projected from the hidden state, LayerNorm'ed, RoPE on its first rope dims in the
half-split layout) cached beside the MLA latent in the paged cache, and a per-token,
per-head weight. A query's score for token t is

    score(t) = sum_h  w_h * relu(scale * q_h . k_t)

and the attention keeps the `index_topk` best-scoring tokens it can see (all of them while
it sees fewer). The scores are computed in float32, as transformers computes them (the
released model scores in FP8: the selection is approximate by design).

What it buys: attention reads index_topk latents per query instead of the whole context,
at the price of reading every token's indexer key (index_head_dim, 128 wide against MLA's
576). This engine verifies the selection by masking the dense attention over the gathered
context (tests compare it with transformers' DeepseekV32ForCausalLM), so on a CPU it saves
nothing; a kernel that gathers only the selected rows is where the traffic goes down
(benchmarks/mla_bench.py prints the bytes).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.layers.linear import Linear
from reference_engine.layers.rotary import RopeAngles


class DSAIndexer(nn.Module):
    """Names follow transformers' DeepseekV32Indexer, so checkpoints load 1:1."""

    def __init__(
        self,
        hidden_size: int,
        q_lora_rank: int,
        num_heads: int,
        head_dim: int,
        rope_dim: int,
        topk: int,
    ) -> None:
        super().__init__()
        self.num_heads, self.head_dim, self.rope_dim, self.topk = (
            num_heads,
            head_dim,
            rope_dim,
            topk,
        )
        self.wq_b = Linear(q_lora_rank, num_heads * head_dim, bias=False)
        self.wk = Linear(hidden_size, head_dim, bias=False)
        self.k_norm = nn.LayerNorm(head_dim, eps=1e-6)
        self.weights_proj = Linear(hidden_size, num_heads, bias=False)
        self.scale = head_dim**-0.5

    def project(
        self, x: torch.Tensor, q_resid: torch.Tensor, rope: RopeAngles
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per token: indexer queries [T, H, D], keys [T, D] (to cache), head weights [T, H]."""
        q = self.wq_b(q_resid).view(-1, self.num_heads, self.head_dim)
        k = self.k_norm(self.wk(x))[:, None, :]
        r = self.rope_dim
        q_rot, k_rot = rope.rotate(q[..., :r], k[..., :r])
        q = torch.cat([q_rot, q[..., r:]], dim=-1)
        k = torch.cat([k_rot, k[..., r:]], dim=-1)[:, 0]
        weights = self.weights_proj(x).float() * self.num_heads**-0.5
        return q, k, weights

    def select(
        self,
        q: torch.Tensor,  # [B, n, H, D]
        weights: torch.Tensor,  # [B, n, H]
        keys: torch.Tensor,  # [B, C, D], the gathered indexer keys
        visible: torch.Tensor,  # [B, n, C] bool, what each query may see at all
    ) -> torch.Tensor:  # [B, n, C] bool: visible and among the query's top-k
        scores = F.relu(torch.einsum("bnhd,bcd->bnhc", q.float(), keys.float()) * self.scale)
        index = torch.einsum("bnh,bnhc->bnc", weights, scores)
        index = index.masked_fill(~visible, float("-inf"))
        top = index.topk(min(self.topk, index.shape[-1]), dim=-1).indices
        chosen = torch.zeros_like(visible).scatter_(-1, top, True)
        return visible & chosen
