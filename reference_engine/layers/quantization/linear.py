"""QuantizedLinear: a projection that multiplies from packed weights, one row tile at a time.

It replaces a `Linear` / `FusedLinear` of the model. A fused projection (qkv, gate_up) keeps
one packed part per checkpoint module ("q", "k", "v"; "gate", "up"), each quantized on its
own as quantized checkpoints store them, so fp8 blocks and int4 groups never straddle two
modules. The parts' tensors are concatenated along dim 0 under their on-disk names
(`weight_scale`, ...), so the ordinary loader fills them through `checkpoint_shards` /
`load_checkpoint_tensor`, as it fills any fused layer.

The forward pass dequantizes TILE_ROWS output rows, multiplies, and drops the tile: the
float copy of the whole matrix never exists (a fused GPU kernel does the same in registers;
here it is plain PyTorch, so it is slower than a float matmul, not faster).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from reference_engine.config import ConfigError
from reference_engine.layers.linear import FusedLinear, Linear
from reference_engine.layers.quantization.base import TILE_ROWS, QuantScheme

if TYPE_CHECKING:
    from reference_engine.loader import CheckpointTensor


class QuantizedLinear(nn.Module):
    def __init__(
        self,
        scheme: QuantScheme,
        in_features: int,
        shard_sizes: dict[str, int | None] | dict[str, int],
        bias: torch.Tensor | None,
        parts: dict[str, dict[str, torch.Tensor]] | None = None,
    ) -> None:
        super().__init__()
        self.scheme = scheme
        self.in_features = in_features
        self.shard_sizes: dict[str, int] = {k: int(v or 0) for k, v in shard_sizes.items()}
        self.fused = list(self.shard_sizes) != [""]
        self.out_features = sum(self.shard_sizes.values())
        parts = parts or {s: scheme.empty(n, in_features) for s, n in self.shard_sizes.items()}
        # (shard, tensor name) -> (first row, rows) inside the concatenated tensor
        self.extents: dict[tuple[str, str], tuple[int, int]] = {}
        names = list(next(iter(parts.values())))
        for name in names:
            offset = 0
            for shard in self.shard_sizes:
                n = parts[shard][name].shape[0]
                self.extents[(shard, name)] = (offset, n)
                offset += n
            joined = torch.cat([parts[s][name] for s in self.shard_sizes])
            self.register_parameter(name, nn.Parameter(joined, requires_grad=False))
        self.bias = (
            nn.Parameter(bias.detach().clone(), requires_grad=False) if bias is not None else None
        )

    @classmethod
    def from_float(cls, layer: Linear, scheme: QuantScheme) -> QuantizedLinear:
        """Quantize a loaded float layer, part by part (on-the-fly `--quantization`)."""
        _check_single_rank(layer)
        shards = layer.shard_sizes if isinstance(layer, FusedLinear) else {"": layer.out_features}
        parts = {}
        for shard in shards:
            rows = layer.output_slice(shard) if isinstance(layer, FusedLinear) else slice(None)
            parts[shard] = scheme.quantize(layer.weight.data[rows])
        return cls(scheme, layer.in_features, shards, layer.bias, parts)

    @classmethod
    def empty_like(cls, layer: Linear, scheme: QuantScheme) -> QuantizedLinear:
        """Zero packed tensors of `layer`'s shape, for the loader to fill."""
        _check_single_rank(layer)
        shards = layer.shard_sizes if isinstance(layer, FusedLinear) else {"": layer.out_features}
        bias = torch.zeros(layer.out_features) if layer.bias is not None else None
        return cls(scheme, layer.in_features, shards, bias)

    def part(self, shard: str) -> dict[str, torch.Tensor]:
        """One checkpoint module's packed tensors (views into the concatenated ones)."""
        out = {}
        for name, param in self.named_parameters(recurse=False):
            if name == "bias":
                continue
            start, n = self.extents[(shard, name)]
            out[name] = param.data.narrow(0, start, n)
        return out

    # -- the loader's protocol (loader.load_weights) --------------------------------------

    def checkpoint_shards(self, param: str) -> list[str | None]:
        return list(self.shard_sizes) if self.fused and param != "bias" else [None]

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        if param == "bias":
            rows = FusedLinear.output_slice(self, shard) if shard else slice(None)  # type: ignore[arg-type]
            target = self.bias.data[rows]  # type: ignore[union-attr]
        else:
            target = self.part(shard or "")[param]
        value = self.scheme.from_disk(param, tensor.read())
        if value.dtype != target.dtype or value.shape != target.shape:
            raise ConfigError(
                f"checkpoint tensor {tensor.name!r} is {value.dtype} {tuple(value.shape)}; the "
                f"{self.scheme.name} layout expects {target.dtype} {tuple(target.shape)}"
            )
        target.copy_(value)

    # -- compute ------------------------------------------------------------------------

    def weight_bytes(self) -> int:
        return sum(p.numel() * p.element_size() for n, p in self.named_parameters() if n != "bias")

    def dequantize(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """The whole float matrix; tests and weight checks only."""
        return torch.cat([self.scheme.dequantize(self.part(s), dtype) for s in self.shard_sizes])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.new_empty(*x.shape[:-1], self.out_features)
        offset = 0
        for shard, rows in self.shard_sizes.items():
            q = self.part(shard)
            for start in range(0, rows, TILE_ROWS):
                end = min(start + TILE_ROWS, rows)
                tile = self.scheme.dequantize_rows(q, start, end, x.dtype)
                out[..., offset + start : offset + end] = x @ tile.T
            offset += rows
        if self.bias is not None:
            out += self.bias
        return out

    def split_sizes(self) -> list[int]:  # attention splits q/k/v by these, as for FusedLinear
        return list(self.shard_sizes.values())

    def output_slice(self, shard: str) -> slice:
        return FusedLinear.output_slice(self, shard)  # type: ignore[arg-type]


def _check_single_rank(layer: Linear) -> None:
    tp = getattr(layer, "tp", None)
    if tp is not None and tp.world_size > 1:
        raise ConfigError("quantization runs in one process only (tensor_parallel_size 1)")
