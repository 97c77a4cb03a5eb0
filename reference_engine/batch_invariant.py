"""Batch-invariant (deterministic) mode: a request's logits are bitwise identical whether it
runs alone or in any batch, whatever the chunk sizes and prefix-cache hits.

Ordinary kernels pick their reduction order from the problem's shape: a matmul over 37
rows may sum each row's products in another order than one over 1 row, attention's
tiling depends on how many keys a chunk reads, so a token's numbers change with its
batch mates (vLLM and SGLang replace aten ops with batch-invariant kernels for this).
Here every computation a token takes part in gets a shape that depends on that token
alone:

- matmuls (`F.linear`, `matmul`, `mm` on 2-D operands) run in tiles of exactly TILE rows,
  the last one padded with zeros. A row's result then depends only on the row: the kernel
  sees the same shape, and (measured, float32 and bfloat16, CPU) neither the row's place
  in the tile nor its tile mates change it. `BatchInvariantMode`, a TorchFunctionMode the
  ModelRunner enters around the forward pass, reroutes those calls wherever a model makes
  them (projections, tied logits, MoE experts).
- attention (`batch_invariant_attention`): each query token attends, in one call of its
  own, to exactly the keys it may see, gathered in position order and unmasked. Decode,
  prefill chunk, speculative row or prefix-cache hit, the call is the same.
- RMSNorm, softmax, log_softmax reduce along one row's last dimension: already invariant.

The cost is throughput (one attention call per token and layer, padded matmul tiles, no
prepacked weights, no CUDA graphs); benchmarks/deterministic_bench.py prints it. Models
whose token mixing is not PagedAttention (MLA, gated delta nets) are refused.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from reference_engine.forward_batch import ForwardBatch
from reference_engine.kv_window import visible

TILE = 8  # rows per matmul call
_MATMULS = {"matmul", "__matmul__", "mm"}


def tiled_rows(fn: Any, x: torch.Tensor, *rest: Any) -> torch.Tensor:
    """fn(x_tile, *rest) over tiles of TILE rows of x (leading dims flattened), padded."""
    lead, k = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, k)
    n = flat.shape[0]
    pad = (-n) % TILE
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad, k)])
    out = torch.cat([fn(flat[i : i + TILE], *rest) for i in range(0, n + pad, TILE)])
    return out[:n].reshape(*lead, -1)


class BatchInvariantMode(TorchFunctionMode):
    """Inside `with BatchInvariantMode():` matmuls with a 2-D right operand run in tiles.
    (Torch disables the mode while its handler runs, so the tiles call the real ops.)"""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func is F.linear:
            x, weight = args[0], args[1]
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            if x.dim() >= 2 and weight.dim() == 2:
                return tiled_rows(F.linear, x, weight, bias)
        elif getattr(func, "__name__", None) in _MATMULS and len(args) == 2 and not kwargs:
            a, b = args
            if (
                isinstance(a, torch.Tensor)
                and isinstance(b, torch.Tensor)
                and a.dim() >= 2
                and b.dim() == 2
            ):
                return tiled_rows(torch.mm, a, b)
        return func(*args, **kwargs)


def batch_invariant_attention(
    q: torch.Tensor,  # [T, Hq, D]
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    batch: ForwardBatch,
    num_kv_heads: int,
    scale: float,
    sliding_window: int | None,
) -> torch.Tensor:
    """Each query token attends alone to its visible keys, in position order (the new K/V
    are already in the cache)."""
    from reference_engine.layers.attention import gather_kv  # attention.py imports this module

    num_heads, head_dim = q.shape[1:]
    group = num_heads // num_kv_heads
    out = torch.empty_like(q)
    lo = 0
    for i, (n, ctx) in enumerate(zip(batch.query_lens_cpu, batch.context_lens_cpu, strict=True)):
        used = batch.block_tables[i][: -(-ctx // batch.block_size)]
        keys = gather_kv(k_cache, used, q.dtype)[:ctx]  # [C, Hkv, D], slot order
        values = gather_kv(v_cache, used, q.dtype)[:ctx]
        policy = batch.kv_policies[i] if batch.kv_policies else None
        q_pos = torch.arange(ctx - n, ctx, device=q.device)
        mask = visible(q_pos, torch.arange(ctx, device=q.device), sliding_window, policy)
        tree = batch.tree_masks.get(i)
        if tree is not None:
            mask = mask.clone()
            mask[:, ctx - n :] &= tree
        for r in range(n):
            seen = mask[r].nonzero().squeeze(1)
            k = keys.index_select(0, seen).transpose(0, 1).unsqueeze(0)  # [1, Hkv, L, D]
            v = values.index_select(0, seen).transpose(0, 1).unsqueeze(0)
            token = q[lo + r].reshape(1, num_kv_heads, group, head_dim)
            att = F.scaled_dot_product_attention(token, k, v, scale=scale)  # [1, Hkv, G, D]
            out[lo + r] = att.reshape(num_heads, head_dim)
        lo += n
    return out


def check_supported(model: torch.nn.Module) -> None:
    """Refuse models with token mixing this mode does not cover."""
    from reference_engine.config import ConfigError

    for module in model.modules():
        name = type(module).__name__
        if name in ("MLAAttention", "GatedDeltaNet"):
            raise ConfigError(
                f"deterministic (batch-invariant) mode is not implemented for {name} layers; "
                "it covers models whose attention is PagedAttention"
            )
