"""W8A16: int8 weights with one float scale per output channel (row), activations in float.

Symmetric: scale = max|row| / 127, q = round(w / scale); rounding to nearest bounds each
element's error by scale / 2. On disk as compressed-tensors' "int-quantized" format:
`weight` int8 [out, in], `weight_scale` float32 [out, 1] (strategy "channel").
"""

from __future__ import annotations

from typing import Any

import torch

from reference_engine.layers.quantization.base import QuantScheme


class Int8PerChannel(QuantScheme):
    name = "int8"
    ct_format = "int-quantized"

    def quantize(self, weight: torch.Tensor) -> dict[str, torch.Tensor]:
        w = weight.detach().float()
        scale = (w.abs().amax(dim=1, keepdim=True) / 127.0).clamp(min=1e-12)
        q = torch.round(w / scale).clamp(-127, 127).to(torch.int8)
        return {"weight": q, "weight_scale": scale}

    def empty(self, out_features: int, in_features: int) -> dict[str, torch.Tensor]:
        return {
            "weight": torch.zeros(out_features, in_features, dtype=torch.int8),
            "weight_scale": torch.zeros(out_features, 1, dtype=torch.float32),
        }

    def shape(self, q: dict[str, torch.Tensor]) -> tuple[int, int]:
        out, inp = q["weight"].shape
        return int(out), int(inp)

    def dequantize_rows(
        self, q: dict[str, torch.Tensor], start: int, end: int, dtype: torch.dtype
    ) -> torch.Tensor:
        return (q["weight"][start:end].to(torch.float32) * q["weight_scale"][start:end]).to(dtype)

    def error_bound(self, weight: torch.Tensor, q: dict[str, torch.Tensor]) -> torch.Tensor:
        return (q["weight_scale"] / 2).expand_as(weight)

    def weights_config(self) -> dict[str, Any]:
        return {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel",
                "group_size": None, "dynamic": False}
