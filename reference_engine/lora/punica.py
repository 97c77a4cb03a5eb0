"""Punica's two LoRA kernels, with their semantics, in plain PyTorch.

A batch mixes rows of many adapters. Every adapter in a slot s has A[s] [r, in] and
B[s] [out, r] (scaling already folded into B; ranks below the slot's r padded with zeros,
which adds nothing). Each row i adds B[slot_i] @ (A[slot_i] @ x_i); rows with slot -1 run
the base model alone.

- SGMV (segmented gather matrix-vector): rows come in runs that share an adapter (a prefill
  chunk is one run), so each run is two small matmuls.
- BGMV (batched gather matrix-vector): one adapter per row, gathered per row and applied in
  one batched matmul, the decode case where every run is one row long.

Both compute "shrink" (down to rank r) then "expand" (up to out), as the kernels do.
"""

from __future__ import annotations

import torch


def sgmv(
    y: torch.Tensor,
    x: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    segments: list[tuple[int, int, int]],
) -> None:
    """y[start:end] += x[start:end] @ A[slot]^T @ B[slot]^T for each (start, end, slot)."""
    for start, end, slot in segments:
        if slot < 0:
            continue
        shrunk = x[start:end] @ a[slot].T  # [n, r]
        y[start:end] += shrunk @ b[slot].T


def bgmv(
    y: torch.Tensor, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, slots: torch.Tensor
) -> None:
    """Row i: y[i] += B[slots[i]] @ A[slots[i]] @ x[i]; rows with slot -1 are left alone."""
    active = slots >= 0
    if not bool(active.any()):
        return
    rows = active.nonzero().squeeze(1)
    idx = slots[rows]
    shrunk = torch.bmm(a[idx], x[rows].unsqueeze(-1))  # [n, r, 1]
    y[rows] += torch.bmm(b[idx], shrunk).squeeze(-1)  # [n, out]
