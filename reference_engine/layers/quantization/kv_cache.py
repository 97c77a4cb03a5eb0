"""KV-cache quantization: int8 or fp8 (e4m3) values with one scale per token per head.

Each cache slot row keeps its head's D quantized values followed by the 4 bytes of its
float32 scale, so a block stays one tensor [num_blocks, block_size, Hkv, D + 4] of one-byte
elements: block copies, swapping and prefix sharing move scales with their values and need
no change. `write_kv` quantizes the new rows as they are stored, `gather_kv` dequantizes
just the gathered context (layers/attention.py); int8 caches are torch.int8, fp8 caches
torch.uint8 holding e4m3 bit patterns (CPU indexing kernels do not take float8 tensors).

Scale = max|row| / 127 (int8) or / 448 (fp8). Per-token-per-head scales adapt to each new
token, so nothing is calibrated ahead of time (vLLM's default fp8 cache uses one scale per
layer; SGLang's and vLLM's newer per-token-head modes are closer to this).
"""

from __future__ import annotations

import torch

KV_CACHE_DTYPES = ("auto", "int8", "fp8")
SCALE_BYTES = 4
_STORAGE = {"int8": torch.int8, "fp8": torch.uint8}
_QMAX = {"int8": 127.0, "fp8": 448.0}


def kv_storage_dtype(kv_cache_dtype: str) -> torch.dtype | None:
    """The cache tensor's dtype for a quantized kind; None for "auto" (the model's dtype)."""
    return _STORAGE.get(kv_cache_dtype)


def kv_row_width(head_dim: int, kv_cache_dtype: str) -> int:
    return head_dim + SCALE_BYTES if kv_cache_dtype in _STORAGE else head_dim


def is_quantized_cache(cache: torch.Tensor) -> bool:
    return cache.dtype in (torch.int8, torch.uint8)


def _kind(cache_dtype: torch.dtype) -> str:
    return "int8" if cache_dtype == torch.int8 else "fp8"


def quantize_kv(x: torch.Tensor, cache_dtype: torch.dtype) -> torch.Tensor:
    """[T, H, D] float -> [T, H, D + 4] rows of `cache_dtype`: values, then the scale."""
    kind = _kind(cache_dtype)
    xf = x.float()
    scale = (xf.abs().amax(dim=-1, keepdim=True) / _QMAX[kind]).clamp(min=1e-12)
    if kind == "int8":
        values = torch.round(xf / scale).clamp(-127, 127).to(torch.int8)
    else:
        values = (xf / scale).to(torch.float8_e4m3fn).view(torch.uint8)
    return torch.cat([values, scale.view(cache_dtype)], dim=-1)


def dequantize_kv(rows: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[..., H, D + 4] quantized rows -> [..., H, D] in `dtype`."""
    values, scale_bytes = rows[..., :-SCALE_BYTES], rows[..., -SCALE_BYTES:]
    scale = scale_bytes.contiguous().view(torch.float32)  # [..., H, 1]
    if rows.dtype == torch.int8:
        floats = values.to(torch.float32)
    else:
        floats = values.contiguous().view(torch.float8_e4m3fn).to(torch.float32)
    return (floats * scale).to(dtype)
