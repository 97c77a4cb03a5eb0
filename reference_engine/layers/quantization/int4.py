"""W4A16: int4 weights with one float scale per group of 128 inputs, packed two per byte.

Symmetric: per (row, group) scale = max|w| / 7, q = clamp(round(w / scale), -8, 7); each
element's error is at most scale / 2. Stored as unsigned nibbles (q + 8), element 2j in the
low nibble of byte j and element 2j+1 in the high one: uint8 [out, in / 2] in memory.

On disk this is compressed-tensors' "pack-quantized" format: `weight_packed` int32
[out, in / 8] (eight nibbles per int32, lowest first: on a little-endian machine the very
same bytes as our uint8 pairs), `weight_scale` float32 [out, in / 128] (strategy "group"),
and `weight_shape` int32 [2].
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from reference_engine.config import ConfigError
from reference_engine.layers.quantization.base import QuantScheme

GROUP_SIZE = 128


def _check_little_endian() -> None:
    if sys.byteorder != "little":
        raise ConfigError("int4 checkpoints map int32 words to byte pairs: little-endian only")


class Int4Grouped(QuantScheme):
    name = "int4"
    ct_format = "pack-quantized"

    def __init__(self, group_size: int = GROUP_SIZE) -> None:
        self.group_size = group_size

    def _check(self, in_features: int) -> None:
        if in_features % self.group_size or in_features % 8:
            raise ConfigError(
                f"int4 needs in_features divisible by the group size {self.group_size} "
                f"(and by 8 to pack), got {in_features}"
            )

    def quantize(self, weight: torch.Tensor) -> dict[str, torch.Tensor]:
        out, inp = weight.shape
        self._check(inp)
        w = weight.detach().float().view(out, inp // self.group_size, self.group_size)
        scale = (w.abs().amax(dim=2, keepdim=True) / 7.0).clamp(min=1e-12)
        q = torch.round(w / scale).clamp(-8, 7).to(torch.int16).view(out, inp) + 8
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
        return {
            "weight_packed": packed,
            "weight_scale": scale.view(out, -1),
            "weight_shape": torch.tensor([out, inp], dtype=torch.int32),
        }

    def empty(self, out_features: int, in_features: int) -> dict[str, torch.Tensor]:
        self._check(in_features)
        return {
            "weight_packed": torch.zeros(out_features, in_features // 2, dtype=torch.uint8),
            "weight_scale": torch.zeros(out_features, in_features // self.group_size),
            "weight_shape": torch.tensor([out_features, in_features], dtype=torch.int32),
        }

    def to_disk(self, q: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        _check_little_endian()
        return {**q, "weight_packed": q["weight_packed"].contiguous().view(torch.int32)}

    def from_disk(self, name: str, value: torch.Tensor) -> torch.Tensor:
        if name == "weight_packed" and value.dtype == torch.int32:
            _check_little_endian()
            return value.contiguous().view(torch.uint8)
        return value

    def shape(self, q: dict[str, torch.Tensor]) -> tuple[int, int]:
        out, half = q["weight_packed"].shape
        return int(out), int(half) * 2

    def dequantize_rows(
        self, q: dict[str, torch.Tensor], start: int, end: int, dtype: torch.dtype
    ) -> torch.Tensor:
        packed = q["weight_packed"][start:end]
        low = (packed & 0xF).to(torch.int8) - 8
        high = (packed >> 4).to(torch.int8) - 8
        w = torch.stack([low, high], dim=-1).view(packed.shape[0], -1, self.group_size)
        scale = q["weight_scale"][start:end].unsqueeze(-1)
        return (w.to(torch.float32) * scale).view(packed.shape[0], -1).to(dtype)

    def error_bound(self, weight: torch.Tensor, q: dict[str, torch.Tensor]) -> torch.Tensor:
        return (q["weight_scale"] / 2).repeat_interleave(self.group_size, dim=1)

    def weights_config(self) -> dict[str, Any]:
        return {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group",
                "group_size": self.group_size, "dynamic": False}
