"""Paged attention in plain PyTorch.

The KV cache of one layer is two tensors laid out [num_blocks, block_size, num_kv_heads,
head_dim]. A step first writes its new K/V rows at `slot_mapping`, then every sequence reads
its whole context back *through its block table*: no sequence owns a dense KV copy between
steps, which is what lets blocks be shared (prefix caching, n > 1) and recycled.

Two read paths:
- prefill rows (a sequence with several new tokens) loop over sequences; query token i of a
  chunk that starts at position p sees every key at position <= p + i;
- single-token rows (decodes) are batched: block tables are gathered at once, padding masked
  by `context_lens`, so a decode step is a few batched attentions rather than a Python loop:
  one per `DecodeGroup` (rows of similar context length, see forward_batch.py), so a short
  context does not pay for the longest one's padding and, on a CPU, a group's gathered K/V
  is still in cache when attention reads it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.batch_invariant import batch_invariant_attention
from reference_engine.distributed.context_parallel import context_parallel_attention
from reference_engine.distributed.parallel_state import current_parallel_state
from reference_engine.forward_batch import DecodeGroup, ForwardBatch, VerifyGroup
from reference_engine.heavy_hitters import accumulate
from reference_engine.kv_window import KVPolicy, needs_mask, visible
from reference_engine.layers.quantization.kv_cache import (
    dequantize_kv,
    is_quantized_cache,
    quantize_kv,
)


def write_kv(
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Store each new token's K/V at its flat slot (block_id * block_size + offset), and
    return the K/V attention must use: as given, or, for a quantized cache (rows stored
    quantized with their scale, quantization/kv_cache.py), the values the cache now holds,
    so a prompt attends to the same numbers however it was chunked or cached."""
    quantized = is_quantized_cache(k_cache)
    rows_k = quantize_kv(k, k_cache.dtype) if quantized else k
    rows_v = quantize_kv(v, v_cache.dtype) if quantized else v
    num_kv_heads, head_dim = k_cache.shape[-2:]
    k_cache.view(-1, num_kv_heads, head_dim).index_copy_(0, slot_mapping, rows_k)
    v_cache.view(-1, num_kv_heads, head_dim).index_copy_(0, slot_mapping, rows_v)
    if quantized:
        return dequantize_kv(rows_k, k.dtype), dequantize_kv(rows_v, v.dtype)
    return k, v


def gather_kv(
    cache: torch.Tensor, block_tables: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """[..., W] block ids -> [..., W * block_size, Hkv, D]: the sequence's context in order
    (dequantized to `dtype` when the cache is quantized: only the gathered blocks are)."""
    num_kv_heads, head_dim = cache.shape[2:]
    # index_select on the flat id list is several times faster on CPU than cache[block_tables]
    blocks = cache.index_select(0, block_tables.reshape(-1))
    blocks = blocks.view(*block_tables.shape[:-1], -1, num_kv_heads, head_dim)
    if is_quantized_cache(cache):
        return dequantize_kv(blocks, dtype or torch.float32)
    return blocks


class PagedAttention(nn.Module):
    def __init__(
        self,
        num_heads: int,
        num_kv_heads: int,
        head_dim: int,
        scale: float,
        sliding_window: int | None = None,
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.scale = scale
        # Query q sees keys q-W+1 .. q only (kv_window.py); None: the whole context.
        self.sliding_window = sliding_window
        self.batch_invariant = False  # set by the ModelRunner in deterministic mode
        # Context parallelism: the ranks every sequence's tokens and KV are striped over
        # (distributed/context_parallel.py); a group of one in a single process.
        self.cp = current_parallel_state().cp

    def forward(
        self,
        q: torch.Tensor,  # [T, Hq, D]
        k: torch.Tensor,  # [T, Hkv, D]
        v: torch.Tensor,  # [T, Hkv, D]
        kv_cache: tuple[torch.Tensor, torch.Tensor],
        batch: ForwardBatch,
    ) -> torch.Tensor:  # [T, Hq, D]
        if batch.context_parallel is not None:  # this rank's stripe of every sequence
            return context_parallel_attention(
                q, k, v, kv_cache, batch.context_parallel, self.cp, self.scale
            )
        k_cache, v_cache = kv_cache
        k, v = write_kv(k_cache, v_cache, k, v, batch.slot_mapping)
        if batch.attention_scores is not None:  # H2O requests: where attention goes
            accumulate(q, k_cache, batch, self.scale, self.sliding_window)
        if self.batch_invariant:  # deterministic mode: one call per token (batch_invariant.py)
            return batch_invariant_attention(
                q, k_cache, v_cache, batch, self.num_kv_heads, self.scale, self.sliding_window
            )
        if batch.decode_only:
            return self._decode_groups(q, k_cache, v_cache, batch.decode_groups)
        out = torch.empty_like(q)
        if batch.num_decodes:
            rows = batch.query_start_loc[batch.decode_seq_idx]  # a decode sequence's only row
            out[rows] = self._decode_groups(q[rows], k_cache, v_cache, batch.decode_groups)
        batched: set[int] = set()
        if batch.verify is not None and self.sliding_window is None:
            group = batch.verify
            out[group.rows] = self._verify(q, k_cache, v_cache, group)
            batched = set(group.seq_idx)
        starts = _starts(batch.query_lens_cpu)
        for i in batch.prefill_seq_idx:
            if i in batched:
                continue
            lo, n = starts[i], batch.query_lens_cpu[i]
            policy = batch.kv_policies[i] if batch.kv_policies else None
            tree = batch.tree_masks.get(i)
            if (
                batch.context_lens_cpu[i] == n
                and tree is None
                and not needs_mask(self.sliding_window, [policy])
            ):
                # Nothing cached before this chunk: its own K/V are the whole context, so
                # skip reading them back and let the kernel apply the causal mask itself.
                out[lo : lo + n] = self._causal(q[lo : lo + n], k[lo : lo + n], v[lo : lo + n])
                continue
            out[lo : lo + n] = self._prefill_one(
                q[lo : lo + n],
                k_cache,
                v_cache,
                batch.block_tables[i],
                batch.context_lens_cpu[i],
                batch.block_size,
                policy,
                tree,
            )
        return out

    def _causal(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = F.scaled_dot_product_attention(
            q.transpose(0, 1).unsqueeze(0),
            k.transpose(0, 1).unsqueeze(0),
            v.transpose(0, 1).unsqueeze(0),
            is_causal=True,
            scale=self.scale,
            enable_gqa=self.num_heads != self.num_kv_heads,
        )[0]
        return out.transpose(0, 1)

    def _prefill_one(
        self,
        q: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        block_table: torch.Tensor,
        context_len: int,
        block_size: int,
        policy: KVPolicy | None = None,
        tree: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """`tree` [n, n]: speculative tree drafts, each new row sees only its ancestors
        among the new rows (and the whole cached context)."""
        n = q.shape[0]
        used = block_table[: -(-context_len // block_size)]
        keys = gather_kv(k_cache, used, q.dtype)[:context_len]  # [C, Hkv, D]
        values = gather_kv(v_cache, used, q.dtype)[:context_len]
        # Row i of the chunk sits at position context_len - n + i and sees keys up to there.
        q_pos = torch.arange(context_len - n, context_len, device=q.device)
        k_pos = torch.arange(context_len, device=q.device)
        mask = visible(q_pos, k_pos, self.sliding_window, policy)  # [n, C]
        if tree is not None:
            mask = mask.clone()
            mask[:, context_len - n :] &= tree
        # 4-D inputs (a batch of one): 3-D ones miss PyTorch's fused CPU kernel, ~2.5x slower.
        out = F.scaled_dot_product_attention(
            q.transpose(0, 1).unsqueeze(0),
            keys.transpose(0, 1).unsqueeze(0),
            values.transpose(0, 1).unsqueeze(0),
            attn_mask=mask,
            scale=self.scale,
            enable_gqa=self.num_heads != self.num_kv_heads,
        )[0]  # [Hq, n, D]
        return out.transpose(0, 1)

    def _verify(
        self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, group: VerifyGroup
    ) -> torch.Tensor:
        """The group's query rows -> their outputs [R, Hq, D], in one attention call."""
        num_seqs, max_rows, _ = group.mask.shape
        padded = q.new_zeros(num_seqs * max_rows, self.num_heads, self.head_dim)
        padded[group.slots] = q[group.rows]
        keys = gather_kv(k_cache, group.block_tables, q.dtype)  # [S, L, Hkv, D]
        values = gather_kv(v_cache, group.block_tables, q.dtype)
        out = F.scaled_dot_product_attention(
            padded.view(num_seqs, max_rows, self.num_heads, self.head_dim).transpose(1, 2),
            keys.transpose(1, 2),
            values.transpose(1, 2),
            attn_mask=group.mask[:, None],
            scale=self.scale,
            enable_gqa=self.num_heads != self.num_kv_heads,
        )  # [S, Hq, max_rows, D]
        return out.transpose(1, 2).reshape(-1, self.num_heads, self.head_dim)[group.slots]

    def _decode_groups(
        self,
        q: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        groups: list[DecodeGroup],
    ) -> torch.Tensor:
        """q [B, Hq, D], the decode rows in batch order -> [B, Hq, D]."""
        if len(groups) == 1 and groups[0].rows is None:  # every row, in order: no shuffling
            return self._decode(q, k_cache, v_cache, groups[0].block_tables, self._mask(groups[0]))
        out = torch.empty_like(q)
        for g in groups:
            assert g.rows is not None  # only a lone group may leave its rows implicit
            part = self._decode(
                q.index_select(0, g.rows), k_cache, v_cache, g.block_tables, self._mask(g)
            )
            out.index_copy_(0, g.rows, part)
        return out

    def _mask(self, group: DecodeGroup) -> torch.Tensor:
        """The group's key mask (context, request policies), narrowed to this layer's window."""
        if self.sliding_window is None:
            return group.key_mask
        # Gathered slot j holds position j; the query sits at context_len - 1.
        slots = torch.arange(group.key_mask.shape[1], device=group.key_mask.device)
        ctx = group.key_mask.sum(-1) if group.context_lens is None else group.context_lens
        return group.key_mask & (slots[None, :] > ctx[:, None] - 1 - self.sliding_window)

    def _decode(
        self,
        q: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        block_tables: torch.Tensor,
        key_mask: torch.Tensor,
    ) -> torch.Tensor:
        """q [B, Hq, D], one query per sequence at its last position -> [B, Hq, D];
        key_mask [B, L] marks the real context among the L gathered slots."""
        b = q.shape[0]
        keys = gather_kv(k_cache, block_tables, q.dtype)  # [B, L, Hkv, D], L = W * block_size
        values = gather_kv(v_cache, block_tables, q.dtype)
        # Grouped-query layout: the G query heads sharing a KV head become G query rows of
        # that head ([B, Hkv, G, D]), so each KV head's keys are read once, not G times
        # (~1.2x faster on CPU than SDPA's enable_gqa for a group of 8 rows, no gain for
        # 32; see benchmarks/attention_bench.py).
        group = self.num_heads // self.num_kv_heads
        out = F.scaled_dot_product_attention(
            q.reshape(b, self.num_kv_heads, group, self.head_dim),
            keys.transpose(1, 2),
            values.transpose(1, 2),
            attn_mask=key_mask[:, None, None, :],  # [B, 1, 1, L]: same keys for all G rows
            scale=self.scale,
        )  # [B, Hkv, G, D]
        return out.reshape(b, self.num_heads, self.head_dim)


def _starts(query_lens: list[int]) -> list[int]:
    starts, total = [], 0
    for n in query_lens:
        starts.append(total)
        total += n
    return starts
