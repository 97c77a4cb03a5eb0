"""Qwen3.5's vision encoder (a ViT): image patches in, one embedding per merged patch out.

What the image processor hands over (multimodal/image_processor.py) is one row per patch:
`temporal_patch_size` x `patch_size` x `patch_size` pixels of each channel, flattened, with
the patches of every `spatial_merge_size` x `spatial_merge_size` square listed together.
The encoder then

1. embeds each patch linearly (a Conv3d whose kernel equals its stride: one matrix product);
2. adds a learned position embedding, a square table resampled bilinearly to the image's
   own grid (so any aspect ratio and size reuses one table);
3. runs `depth` pre-norm blocks of full (non-causal) attention within each image, with a
   2D rotary embedding: half the rotated dimensions turn with the patch's row, half with
   its column;
4. merges each square of merge_size^2 patches into one token of the language model's width
   (the "merger": LayerNorm, concatenate, two-layer MLP), so an image of h x w patches
   becomes h*w / merge_size^2 embeddings, the count of its placeholder tokens.

Module names follow transformers' Qwen3_5VisionModel (`model.visual.*` in a checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.layers.rotary import RopeAngles


@dataclass(frozen=True, slots=True)
class VisionConfig:
    depth: int
    hidden_size: int
    intermediate_size: int
    num_heads: int
    out_hidden_size: int
    in_channels: int = 3
    patch_size: int = 16
    temporal_patch_size: int = 2
    spatial_merge_size: int = 2
    num_position_embeddings: int = 2304
    hidden_act: str = "gelu_pytorch_tanh"
    rope_theta: float = 10000.0

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VisionConfig:
        rope = raw.get("rope_parameters") or {}
        return cls(
            depth=int(raw["depth"]),
            hidden_size=int(raw["hidden_size"]),
            intermediate_size=int(raw["intermediate_size"]),
            num_heads=int(raw["num_heads"]),
            out_hidden_size=int(raw["out_hidden_size"]),
            in_channels=int(raw.get("in_channels", 3)),
            patch_size=int(raw.get("patch_size", 16)),
            temporal_patch_size=int(raw.get("temporal_patch_size", 2)),
            spatial_merge_size=int(raw.get("spatial_merge_size", 2)),
            num_position_embeddings=int(raw.get("num_position_embeddings", 2304)),
            hidden_act=str(raw.get("hidden_act", "gelu_pytorch_tanh")),
            rope_theta=float(rope.get("rope_theta", 10000.0)),
        )

    @property
    def patch_dim(self) -> int:
        """Values in one processed patch row."""
        return self.in_channels * self.temporal_patch_size * self.patch_size**2


def _act(name: str, x: torch.Tensor) -> torch.Tensor:
    if name in ("gelu_pytorch_tanh", "gelu_tanh"):
        return F.gelu(x, approximate="tanh")
    if name == "gelu":
        return F.gelu(x)
    if name in ("silu", "swish"):
        return F.silu(x)
    raise ValueError(f"vision activation {name!r} is not implemented")


class VisionPatchEmbed(nn.Module):
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        kernel = (cfg.temporal_patch_size, cfg.patch_size, cfg.patch_size)
        # Kept a Conv3d so the checkpoint's weight loads as stored; applied as the matrix
        # product it is (kernel == stride: every output sees exactly one patch row).
        self.proj = nn.Conv3d(cfg.in_channels, cfg.hidden_size, kernel, stride=kernel, bias=True)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        weight = self.proj.weight.flatten(1)  # [hidden, C * T * P * P], the patch row's order
        return F.linear(patches.to(weight.dtype), weight, self.proj.bias)


class VisionAttention(nn.Module):
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        self.num_heads = cfg.num_heads
        self.head_dim = cfg.hidden_size // cfg.num_heads
        self.qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size, bias=True)
        self.proj = nn.Linear(cfg.hidden_size, cfg.hidden_size, bias=True)

    def forward(self, x: torch.Tensor, rope: RopeAngles, lengths: list[int]) -> torch.Tensor:
        q, k, v = self.qkv(x).view(-1, 3, self.num_heads, self.head_dim).unbind(1)
        q, k = rope.rotate(q, k)
        # Each image attends within itself only (one packed sequence per image).
        outs = []
        for qi, ki, vi in zip(q.split(lengths), k.split(lengths), v.split(lengths), strict=True):
            o = F.scaled_dot_product_attention(
                qi.transpose(0, 1), ki.transpose(0, 1), vi.transpose(0, 1)
            )
            outs.append(o.transpose(0, 1).flatten(1))
        return self.proj(torch.cat(outs))


class VisionMLP(nn.Module):
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        self.act = cfg.hidden_act
        self.linear_fc1 = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=True)
        self.linear_fc2 = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_fc2(_act(self.act, self.linear_fc1(x)))


class VisionBlock(nn.Module):
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.hidden_size, eps=1e-6)
        self.norm2 = nn.LayerNorm(cfg.hidden_size, eps=1e-6)
        self.attn = VisionAttention(cfg)
        self.mlp = VisionMLP(cfg)

    def forward(self, x: torch.Tensor, rope: RopeAngles, lengths: list[int]) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), rope, lengths)
        return x + self.mlp(self.norm2(x))


class VisionPatchMerger(nn.Module):
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        self.merged = cfg.hidden_size * cfg.spatial_merge_size**2
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=1e-6)
        self.linear_fc1 = nn.Linear(self.merged, self.merged, bias=True)
        self.linear_fc2 = nn.Linear(self.merged, cfg.out_hidden_size, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The processor listed each merge square's patches together: a view concatenates them.
        x = self.norm(x).view(-1, self.merged)
        return self.linear_fc2(F.gelu(self.linear_fc1(x)))


def merge_order(h: int, w: int, merge: int) -> torch.Tensor:
    """Raster index (row * w + col) of each patch in the processor's order: merge squares
    row by row, the merge x merge patches of a square together."""
    raster = torch.arange(h * w).view(h // merge, merge, w // merge, merge)
    return raster.permute(0, 2, 1, 3).flatten()


class Qwen3_5VisionModel(nn.Module):
    inv_freq: torch.Tensor  # a non-persistent buffer, registered in __init__
    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        self.config = cfg
        self.patch_embed = VisionPatchEmbed(cfg)
        self.pos_embed = nn.Embedding(cfg.num_position_embeddings, cfg.hidden_size)
        self.grid_side = int(cfg.num_position_embeddings**0.5)
        self.blocks = nn.ModuleList(VisionBlock(cfg) for _ in range(cfg.depth))
        self.merger = VisionPatchMerger(cfg)
        # 2D RoPE: a quarter of each head's dimensions per axis and per half (neox layout).
        quarter = cfg.hidden_size // cfg.num_heads // 2
        exponent = torch.arange(0, quarter, 2, dtype=torch.float32) / quarter
        self.register_buffer("inv_freq", 1.0 / cfg.rope_theta**exponent, persistent=False)

    def reset_cache(self) -> None:
        """Recompute the rotary frequencies (a model built on the meta device has none)."""
        cfg = self.config
        quarter = cfg.hidden_size // cfg.num_heads // 2
        exponent = torch.arange(0, quarter, 2, dtype=torch.float32, device=self.inv_freq.device)
        self.inv_freq = 1.0 / cfg.rope_theta ** (exponent / quarter)

    def _position_embeddings(self, t: int, h: int, w: int) -> torch.Tensor:
        """The learned [side, side] table resampled to h x w (bilinear, corners aligned),
        in the processor's patch order, repeated over the t frames."""
        side, dim = self.grid_side, self.pos_embed.weight.shape[1]
        table = self.pos_embed.weight.view(1, side, side, dim).permute(0, 3, 1, 2)
        grid = F.interpolate(table, size=(h, w), mode="bilinear", align_corners=True)
        grid = grid[0].permute(1, 2, 0).reshape(h * w, dim)
        return grid[merge_order(h, w, self.config.spatial_merge_size)].repeat(t, 1)

    def _rope(self, t: int, h: int, w: int) -> tuple[torch.Tensor, torch.Tensor]:
        order = merge_order(h, w, self.config.spatial_merge_size).to(self.inv_freq.device)
        rows, cols = (order // w).repeat(t), (order % w).repeat(t)
        freqs = torch.cat([rows[:, None] * self.inv_freq, cols[:, None] * self.inv_freq], -1)
        return freqs.cos(), freqs.sin()  # [t*h*w, head_dim / 2] each

    def forward(self, pixel_values: torch.Tensor, grid_thw: list[tuple[int, int, int]]) -> torch.Tensor:
        """pixel_values [sum t*h*w, patch_dim] for one or more images -> their embeddings
        [sum t*h*w / merge^2, out_hidden_size], image after image."""
        x = self.patch_embed(pixel_values)
        pos = torch.cat([self._position_embeddings(*g) for g in grid_thw])
        x = x + pos.to(x.dtype)
        cos, sin = (torch.cat(parts) for parts in zip(*(self._rope(*g) for g in grid_thw), strict=True))
        # The rotation is computed in float32 at least, as the reference implementation does.
        compute = torch.promote_types(x.dtype, torch.float32)
        rope = RopeAngles(cos[:, None].to(compute), sin[:, None].to(compute))
        lengths = [t * h * w for t, h, w in grid_thw]
        for block in self.blocks:
            x = block(x, rope, lengths)
        return self.merger(x)
