"""CPU matrix multiplies on prepacked weights (oneDNN).

A linear layer computes x @ W.T with W stored [out, in]. On a CPU PyTorch's default path hands
that to a BLAS (MKL) call, which re-lays W out into its kernel's blocked format on every call.
oneDNN can do that relayout once, when the model is loaded ("prepacking", what vLLM's CPU
backend and torch.compile's CPU weight freezing do), and then streams the packed copy. On the
benchmark model (float32, 1 thread) benchmarks/linear_bench.py measured the projections
1.1-1.3x faster at hundreds of rows and up to 1.8x at a few decode rows (a single row
through the smaller projections ran 0.8-1.0x); engine_bench's engine run got ~20% faster.

Costs and limits, which is why this is a switchable detail and not the model's code path:
- the packed copy sits beside the original weight, so weight memory doubles;
- oneDNN has no float64 kernels (tests compare float64 models with transformers, and those
  keep the plain path), and its bf16/fp16 speed depends on the CPU, so only float32 packs;
- the packed tensor is an opaque oneDNN layout: it lives on the CPU and is never saved.
"""

from __future__ import annotations

import torch


def packing_supported(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether `pack_weight` / `packed_linear` run for weights of this device and dtype."""
    return (
        device.type == "cpu"
        and dtype == torch.float32
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
    )


def pack_weight(weight: torch.Tensor) -> torch.Tensor:
    """[out, in] weight -> oneDNN's blocked layout for x @ W.T (any number of rows x)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), None)


def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """F.linear(x, W, bias) with W given packed by `pack_weight`."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
