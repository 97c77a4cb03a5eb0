"""Multi-head latent attention (MLA, DeepSeek-V2/V3) over a paged latent cache.

Each token caches ONE vector per layer, not K and V per head: the compressed KV latent
c (kv_lora_rank wide, after its RMSNorm) and the decoupled RoPE key k_rope
(qk_rope_head_dim wide, shared by all heads), side by side in a [num_blocks, block_size, 1,
rank + rope] tensor. Head h's key and value are up-projections of c by kv_b_proj:

    k_h = [W_UK_h c ; k_rope]        v_h = W_UV_h c

Two ways to attend, same numbers (tests check both against transformers):

- plain: expand every cached latent into per-head K and V, then ordinary attention with
  head dim nope + rope. Expanding costs context x heads x (nope + v) x rank multiply-adds.
- absorbed: fold W_UK into the query (q_h' = W_UK_h^T q_nope_h, rank wide) and W_UV into the
  output, so attention runs straight over the cached latents, one shared "KV head" of width
  rank + rope (values: its first `rank` columns), as multi-query attention.

Why decode takes the absorbed path: a decode step has one query per sequence, so expanding
the whole context's K/V for it (the plain path) costs context x heads x (nope+v) x rank
per step, every step, while absorbing costs heads x nope x rank once per query; decode is
bound by reading the cache, and the absorbed path reads each latent once for all heads.
Prefill has many queries sharing one expansion, and the expanded per-head dot products
(nope + rope wide, 192 in DeepSeek-V3) are three times narrower than absorbed ones
(rank + rope, 576), so prefill chunks take the plain path. vLLM's MLACommonImpl and
SGLang's DeepseekV2AttentionMLA make the same split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.forward_batch import ForwardBatch
from reference_engine.kv_window import visible
from reference_engine.layers.attention import _starts, gather_kv
from reference_engine.layers.dsa_indexer import DSAIndexer
from reference_engine.layers.linear import Linear
from reference_engine.layers.norm import RMSNorm
from reference_engine.layers.rotary import RopeAngles

Path = Literal["plain", "absorbed"]


class MLAAttention(nn.Module):
    """Projections keep transformers' DeepseekV3Attention names, so checkpoints map 1:1."""

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        q_lora_rank: int | None,
        kv_lora_rank: int,
        qk_nope_head_dim: int,
        qk_rope_head_dim: int,
        v_head_dim: int,
        rms_norm_eps: float,
        bias: bool = False,
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.rank, self.nope, self.rope_dim, self.v_dim = (
            kv_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
        )
        q_dim = num_heads * (qk_nope_head_dim + qk_rope_head_dim)
        if q_lora_rank is None:
            self.q_proj: Linear | None = Linear(hidden_size, q_dim, bias=False)
        else:  # DeepSeek-V3 compresses the query too (saves activation memory in training)
            self.q_proj = None
            self.q_a_proj = Linear(hidden_size, q_lora_rank, bias=bias)
            self.q_a_layernorm = RMSNorm(q_lora_rank, rms_norm_eps)
            self.q_b_proj = Linear(q_lora_rank, q_dim, bias=False)
        self.kv_a_proj_with_mqa = Linear(hidden_size, kv_lora_rank + qk_rope_head_dim, bias=bias)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank, rms_norm_eps)
        self.kv_b_proj = Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), False)
        self.o_proj = Linear(num_heads * v_head_dim, hidden_size, bias=bias)
        self.scale = (qk_nope_head_dim + qk_rope_head_dim) ** -0.5
        # DeepSeek-V3.2's sparse attention (layers/dsa_indexer.py); None: dense MLA.
        self.indexer: DSAIndexer | None = None
        # Which path each kind of row takes (see the module docstring); tests force both.
        self.prefill_path: Path = "plain"
        self.decode_path: Path = "absorbed"

    def forward(
        self,
        rope: RopeAngles,
        x: torch.Tensor,
        kv_cache: tuple[torch.Tensor, ...],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        cache = kv_cache[0]  # [N, block_size, 1, rank + rope]
        q_resid = None
        if self.q_proj is not None:
            q = self.q_proj(x)
        else:
            q_resid = self.q_a_layernorm(self.q_a_proj(x))
            q = self.q_b_proj(q_resid)
        q = q.view(-1, self.num_heads, self.nope + self.rope_dim)
        q_nope, q_rope = q.split([self.nope, self.rope_dim], dim=-1)
        latent, k_rope = self.kv_a_proj_with_mqa(x).split([self.rank, self.rope_dim], dim=-1)
        latent = self.kv_a_layernorm(latent)
        # DeepSeek checkpoints pair RoPE dimensions as (0,1), (2,3)...: regroup them as
        # evens then odds, the "neox" halves our rotary rotates (transformers does the same).
        q_rope, k_rope = rope.rotate(_deinterleave(q_rope), _deinterleave(k_rope)[:, None, :])
        entry = torch.cat([latent, k_rope[:, 0]], dim=-1)  # what one token caches
        cache.view(-1, entry.shape[-1]).index_copy_(0, batch.slot_mapping, entry)
        sparse: _Sparse | None = None
        if self.indexer is not None:  # DSA: the indexer key is the cache's second tensor
            assert q_resid is not None, "DSA needs the compressed query (q_lora_rank)"
            index_q, index_k, index_w = self.indexer.project(x, q_resid, rope)
            kv_cache[1].view(-1, index_k.shape[-1]).index_copy_(0, batch.slot_mapping, index_k)
            sparse = _Sparse(self.indexer, index_q, index_w, kv_cache[1])

        out = q.new_empty(q.shape[0], self.num_heads, self.v_dim)
        if batch.num_decodes:
            rows = batch.query_start_loc[batch.decode_seq_idx]
            out[rows] = self._decode(q_nope[rows], q_rope[rows], cache, batch, sparse, rows)
        starts = _starts(batch.query_lens_cpu)
        for i in batch.prefill_seq_idx:
            lo, n = starts[i], batch.query_lens_cpu[i]
            ctx = batch.context_lens_cpu[i]
            used = batch.block_tables[i][: -(-ctx // batch.block_size)]
            context = gather_kv(cache, used)[:ctx, 0]  # [C, rank + rope]
            q_pos = torch.arange(ctx - n, ctx, device=q.device)
            policy = batch.kv_policies[i] if batch.kv_policies else None
            mask = visible(q_pos, torch.arange(ctx, device=q.device), None, policy)
            tree = batch.tree_masks.get(i)
            if tree is not None:  # speculative tree drafts: new rows see their ancestors only
                mask = mask.clone()
                mask[:, ctx - n :] &= tree
            span = slice(lo, lo + n)
            if sparse is not None:
                mask = sparse.narrow(
                    span, gather_kv(sparse.cache, used)[None, :ctx, 0], mask[None]
                )[0]
            attend = self._plain if self.prefill_path == "plain" else self._absorbed
            out[span] = attend(q_nope[None, span], q_rope[None, span], context[None], mask[None])[0]
        return self.o_proj(out.flatten(1))

    # --- the two paths, each over a batch of sequences' gathered latents ---------------
    def _weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """kv_b_proj as W_UK [H, nope, rank] and W_UV [H, v, rank]."""
        w = self.kv_b_proj.weight.view(self.num_heads, self.nope + self.v_dim, self.rank)
        return w[:, : self.nope], w[:, self.nope :]

    def _plain(
        self, q_nope: torch.Tensor, q_rope: torch.Tensor, context: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """q [B, n, H, *], context [B, C, rank + rope] (each sequence's gathered latents),
        mask [B, n, C] -> [B, n, H, v]: expand K/V per head, then attention."""
        kv = self.kv_b_proj(context[..., : self.rank])  # [B, C, H * (nope + v)]
        kv = kv.view(*kv.shape[:2], self.num_heads, self.nope + self.v_dim)
        k_nope, v = kv.split([self.nope, self.v_dim], dim=-1)
        k_rope = context[..., None, self.rank :].expand(*k_nope.shape[:3], self.rope_dim)
        k = torch.cat([k_nope, k_rope], dim=-1)
        q = torch.cat([q_nope, q_rope], dim=-1)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2),
            k.transpose(1, 2),
            v.transpose(1, 2),
            attn_mask=mask[:, None],
            scale=self.scale,
        )  # [B, H, n, v]
        return out.transpose(1, 2)

    def _absorbed(
        self, q_nope: torch.Tensor, q_rope: torch.Tensor, context: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Same contract as `_plain`, attending over the latents themselves."""
        w_uk, w_uv = self._weights()
        q_latent = torch.einsum("bnhd,hdr->bnhr", q_nope, w_uk)
        q = torch.cat([q_latent, q_rope], dim=-1)  # [B, n, H, rank + rope]
        keys = context[:, None]  # [B, 1, C, rank + rope]: one KV head shared by all heads
        # Queries of all heads at all positions as rows of that one head: [B, 1, n*H, D].
        b, n = q.shape[:2]
        rows = q.reshape(b, 1, n * self.num_heads, q.shape[-1])
        row_mask = mask.repeat_interleave(self.num_heads, dim=1)  # [B, n*H, C]
        out = F.scaled_dot_product_attention(
            rows, keys, keys[..., : self.rank], attn_mask=row_mask[:, None], scale=self.scale
        )  # [B, 1, n*H, rank]
        out = out.view(b, n, self.num_heads, self.rank)
        return torch.einsum("bnhr,hvr->bnhv", out, w_uv)

    def _decode(
        self,
        q_nope: torch.Tensor,
        q_rope: torch.Tensor,
        cache: torch.Tensor,
        batch: ForwardBatch,
        sparse: _Sparse | None = None,
        batch_rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """One query per decode row, attended in the batch's decode groups."""
        out = q_nope.new_empty(q_nope.shape[0], self.num_heads, self.v_dim)
        attend = self._absorbed if self.decode_path == "absorbed" else self._plain
        for g in batch.decode_groups:
            rows = torch.arange(q_nope.shape[0], device=q_nope.device) if g.rows is None else g.rows
            context = gather_kv(cache, g.block_tables)[:, :, 0]  # [n, L, rank + rope]
            mask = g.key_mask[:, None]
            if sparse is not None and batch_rows is not None:
                keys = gather_kv(sparse.cache, g.block_tables)[:, :, 0]
                mask = sparse.narrow(batch_rows[rows][:, None], keys, mask)
            part = attend(q_nope[rows, None], q_rope[rows, None], context, mask)
            out[rows] = part[:, 0]
        return out


@dataclass(slots=True)
class _Sparse:
    """One forward pass's indexer outputs, for narrowing each query's visible keys."""

    indexer: DSAIndexer
    q: torch.Tensor  # [T, H_index, D_index]
    weights: torch.Tensor  # [T, H_index]
    cache: torch.Tensor  # the indexer key cache [N, block_size, 1, D_index]

    def narrow(
        self, rows: slice | torch.Tensor, keys: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """rows: the queries' token rows, shaped like mask's [B, n]; keys [B, C, D_index]."""
        q, w = self.q[rows], self.weights[rows]
        if q.dim() == 3:  # one sequence's slice of rows
            q, w = q[None], w[None]
        return self.indexer.select(q, w, keys, mask)


def _deinterleave(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([x[..., 0::2], x[..., 1::2]], dim=-1)
