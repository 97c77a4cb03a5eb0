"""Rotary position embedding (RoPE), "neox" layout: the two halves of each head rotate together.

cos/sin for every position are precomputed once into `cos_sin_cache` [max_pos, head_dim]
and gathered by position, so a packed batch with arbitrary positions costs one index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


def rope_inv_freq(head_dim: int, theta: float, scaling: dict[str, Any] | None) -> torch.Tensor:
    # float32 like the reference implementations, so angles agree with theirs bit for bit.
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    if scaling is None:
        return inv_freq
    if scaling.get("rope_type") == "yarn":
        return _yarn_inv_freq(head_dim, theta, scaling)
    if scaling.get("rope_type") == "linear":  # positions divided by `factor` (Gemma 3 global)
        return inv_freq / float(scaling["factor"])
    return _llama3_inv_freq(inv_freq, scaling)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's attention temperature: 0.1 * mscale * ln(factor) + 1 (1 when not stretched)."""
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def rope_attention_factor(scaling: dict[str, Any] | None) -> float:
    """What YaRN multiplies cos and sin by (1.0 for the other schemes). DeepSeek sets mscale
    and mscale_all_dim equal, making it 1 and moving the temperature into the softmax scale
    instead (models/deepseek_v3.py)."""
    if scaling is None or scaling.get("rope_type") != "yarn":
        return 1.0
    if scaling.get("attention_factor") is not None:
        return float(scaling["attention_factor"])
    factor = float(scaling["factor"])
    mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")
    if mscale and mscale_all_dim:
        return yarn_mscale(factor, float(mscale)) / yarn_mscale(factor, float(mscale_all_dim))
    return yarn_mscale(factor)


def _yarn_inv_freq(dim: int, theta: float, s: dict[str, Any]) -> torch.Tensor:
    # YaRN (arXiv 2309.00071): frequencies that turn fewer than beta_slow times over the
    # original context are interpolated (divided by `factor`), those turning more than
    # beta_fast times are kept, with a linear ramp over the dimensions in between.
    factor, base = float(s["factor"]), theta
    old_len = float(s["original_max_position_embeddings"])
    beta_fast, beta_slow = float(s.get("beta_fast") or 32), float(s.get("beta_slow") or 1)

    def dim_for(rotations: float) -> float:  # the dimension that turns `rotations` times
        return dim * math.log(old_len / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = dim_for(beta_fast), dim_for(beta_slow)
    if s.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    keep = 1 - ramp  # 1: extrapolate (keep the frequency), 0: interpolate
    return (1.0 / (factor * pos_freqs)) * (1 - keep) + (1.0 / pos_freqs) * keep


def _llama3_inv_freq(inv_freq: torch.Tensor, s: dict[str, Any]) -> torch.Tensor:
    # Llama 3.1 context extension: slow (long-wavelength) frequencies are divided by `factor`,
    # fast ones kept, and the band in between interpolated smoothly.
    factor = float(s["factor"])
    low, high = float(s.get("low_freq_factor", 1.0)), float(s.get("high_freq_factor", 4.0))
    old_len = float(s.get("original_max_position_embeddings", 8192))
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > old_len / low, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= old_len / high) & (wavelen <= old_len / low)
    return torch.where(medium, blended, scaled)


class RotaryEmbedding(nn.Module):
    cos_sin_cache: torch.Tensor  # a non-persistent buffer, registered in __init__
    def __init__(
        self,
        head_dim: int,
        max_position: int,
        theta: float,
        scaling: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.max_position = max_position
        self.theta = theta
        self.scaling = scaling
        self.register_buffer("cos_sin_cache", torch.empty(0), persistent=False)
        self.reset_cache()

    def reset_cache(self) -> None:
        """(Re)compute the table, in the buffer's current dtype and device (called again
        after a model built on the meta device is materialized)."""
        dtype = self.cos_sin_cache.dtype if self.cos_sin_cache.is_floating_point() else None
        device = self.cos_sin_cache.device
        if device.type == "meta":  # shape only; real values once the model is materialized
            self.cos_sin_cache = torch.empty(self.max_position, self.head_dim, device=device)
            return
        inv_freq = rope_inv_freq(self.head_dim, self.theta, self.scaling).to(device)
        pos = torch.arange(self.max_position, dtype=torch.float32, device=device)
        freqs = torch.outer(pos, inv_freq)  # [max_pos, head_dim / 2]
        cache = torch.cat([freqs.cos(), freqs.sin()], dim=-1) * rope_attention_factor(self.scaling)
        self.cos_sin_cache = cache.to(dtype or torch.get_default_dtype())

    def lookup(self, positions: torch.Tensor) -> RopeAngles:
        """cos/sin for each token, gathered once per forward pass and shared by all layers."""
        cos, sin = self.cos_sin_cache[positions].unsqueeze(1).chunk(2, dim=-1)  # [T, 1, D/2]
        return RopeAngles(cos, sin)


@dataclass(slots=True)
class RopeAngles:
    cos: torch.Tensor  # [T, 1, head_dim / 2]
    sin: torch.Tensor

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """q [T, Hq, D], k [T, Hkv, D] -> rotated copies."""
        return _rotate(q, self.cos, self.sin), _rotate(k, self.cos, self.sin)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class MRotaryEmbedding(RotaryEmbedding):
    """Multimodal RoPE (Qwen2-VL onwards; Qwen3.5's layout): every token has three positions,
    (temporal, height, width). Text tokens have the same value on all three, so their angles
    equal plain RoPE's; an image's tokens share one temporal position and count rows and
    columns on the other two, and the text after an image resumes past its largest.

    Each rotary frequency takes its angle from one axis. Qwen3.5 interleaves them: frequency
    j follows height when j % 3 == 1, width when j % 3 == 2 (each for its first
    `mrope_section[axis]` turns), temporal otherwise."""

    def __init__(
        self,
        head_dim: int,
        max_position: int,
        theta: float,
        mrope_section: list[int],
        scaling: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(head_dim, max_position, theta, scaling)
        half = head_dim // 2
        if sum(mrope_section) != half:
            raise ValueError(f"mrope_section {mrope_section} must sum to {half} (rotary dim / 2)")
        axis = [0] * half
        for a in (1, 2):
            for j in range(a, 3 * mrope_section[a], 3):
                axis[j] = a
        # cos and sin halves of the table take the same axis per frequency. A plain list,
        # not a buffer: a model built on the meta device would lose a buffer's values.
        self.axis_of_column = axis + axis

    def lookup_mrope(self, positions: torch.Tensor) -> RopeAngles:
        """positions [3, T] (temporal, height, width) -> the angles of each token."""
        table = self.cos_sin_cache[positions]  # [3, T, D]
        axis = torch.tensor(self.axis_of_column, device=table.device)
        cos, sin = table.gather(0, axis.expand(1, table.shape[1], -1))[0].unsqueeze(1).chunk(2, -1)
        return RopeAngles(cos, sin)
