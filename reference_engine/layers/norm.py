"""RMSNorm: scale by the reciprocal root-mean-square, no mean subtraction, no bias."""

from __future__ import annotations

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Reduce in at least float32: the mean of squares overflows / loses bits in 16-bit.
        compute = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(compute)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


class ZeroCenteredRMSNorm(nn.Module):
    """RMSNorm whose weight is stored as an offset from 1 (Qwen3.5 / Qwen3-Next, Gemma):
    scale by (1 + weight), multiplied in float32 before the cast back, as they do."""

    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(compute)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * (1.0 + self.weight.to(compute))).to(x.dtype)
