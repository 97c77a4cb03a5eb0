"""FP8 e4m3 weights with one float scale per 128 x 128 block (DeepSeek-V3's fine-grained
scheme), activations in float.

scale = max|block| / 448 (e4m3's largest finite value), q = (w / scale) cast to e4m3. With
3 mantissa bits, rounding to nearest errs by at most 2^-4 of the value for normal numbers,
and by half the smallest subnormal step (2^-10 * scale) near zero. On disk as
compressed-tensors' "float-quantized" format: `weight` float8_e4m3fn [out, in],
`weight_scale` float32 [ceil(out / 128), ceil(in / 128)] (strategy "block").
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from reference_engine.layers.quantization.base import QuantScheme

BLOCK = 128
FP8_MAX = 448.0


class Fp8Block(QuantScheme):
    name = "fp8"
    ct_format = "float-quantized"

    def quantize(self, weight: torch.Tensor) -> dict[str, torch.Tensor]:
        out, inp = weight.shape
        rb, cb = -(-out // BLOCK), -(-inp // BLOCK)
        w = F.pad(weight.detach().float(), (0, cb * BLOCK - inp, 0, rb * BLOCK - out))
        blocks = w.view(rb, BLOCK, cb, BLOCK)
        scale = (blocks.abs().amax(dim=(1, 3)) / FP8_MAX).clamp(min=1e-12)  # [rb, cb]
        q = (blocks / scale[:, None, :, None]).view(rb * BLOCK, cb * BLOCK)[:out, :inp]
        return {"weight": q.to(torch.float8_e4m3fn), "weight_scale": scale}

    def empty(self, out_features: int, in_features: int) -> dict[str, torch.Tensor]:
        return {
            "weight": torch.zeros(out_features, in_features, dtype=torch.float8_e4m3fn),
            "weight_scale": torch.zeros(-(-out_features // BLOCK), -(-in_features // BLOCK)),
        }

    def shape(self, q: dict[str, torch.Tensor]) -> tuple[int, int]:
        out, inp = q["weight"].shape
        return int(out), int(inp)

    def _row_scales(self, q: dict[str, torch.Tensor], start: int, end: int) -> torch.Tensor:
        inp = q["weight"].shape[1]
        rows = torch.arange(start, end, device=q["weight_scale"].device) // BLOCK
        return q["weight_scale"][rows].repeat_interleave(BLOCK, dim=1)[:, :inp]

    def dequantize_rows(
        self, q: dict[str, torch.Tensor], start: int, end: int, dtype: torch.dtype
    ) -> torch.Tensor:
        w = q["weight"][start:end].to(torch.float32)
        return (w * self._row_scales(q, start, end)).to(dtype)

    def error_bound(self, weight: torch.Tensor, q: dict[str, torch.Tensor]) -> torch.Tensor:
        scale = self._row_scales(q, 0, weight.shape[0])
        return weight.detach().float().abs() * 2.0**-4 + scale * 2.0**-10

    def weights_config(self) -> dict[str, Any]:
        return {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "block",
                "block_structure": [BLOCK, BLOCK], "dynamic": False}
