"""Linear projections: the model's `Linear`, and the fused ones (one matmul for q/k/v and
one for gate/up instead of three and two).

Checkpoints store the parts separately (`q_proj`, `k_proj`, ...); `output_slice` tells the
loader which rows of the fused weight each part fills. Tensor-parallel versions of these
layers live in reference_engine/distributed/parallel_linear.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from reference_engine.loader import CheckpointTensor

from reference_engine.layers.cpu_gemm import pack_weight, packed_linear


class Linear(nn.Linear):
    """nn.Linear that can multiply with a CPU-prepacked copy of its weight (cpu_gemm.py).

    The runner calls `pack_for_cpu()` once the weights are loaded; until then, and on every
    other device or dtype, it is a plain nn.Linear.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool) -> None:
        super().__init__(in_features, out_features, bias=bias)
        self.packed_weight: torch.Tensor | None = None

    def pack_for_cpu(self) -> None:
        self.packed_weight = pack_weight(self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed_weight is None:
            return F.linear(x, self.weight, self.bias)
        return packed_linear(x, self.packed_weight, self.bias)


class FusedLinear(Linear):
    """An nn.Linear whose output rows are the concatenation of named shards."""

    def __init__(self, in_features: int, shard_sizes: dict[str, int], bias: bool) -> None:
        super().__init__(in_features, sum(shard_sizes.values()), bias)
        self.shard_sizes = dict(shard_sizes)

    def output_slice(self, shard: str) -> slice:
        start = 0
        for name, size in self.shard_sizes.items():
            if name == shard:
                return slice(start, start + size)
            start += size
        raise KeyError(f"no shard {shard!r} in {list(self.shard_sizes)}")

    def split_sizes(self) -> list[int]:
        return list(self.shard_sizes.values())

    def checkpoint_shards(self, param: str) -> list[str | None]:
        return list(self.shard_sizes)

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        """Checkpoint part `shard` (q, k, v / gate, up) -> its rows of weight or bias."""
        if shard is None:
            raise KeyError(f"{tensor.name}: a fused projection loads by shard")
        target = getattr(self, param).data[self.output_slice(shard)]
        tensor.expect_shape(tuple(target.shape))
        target.copy_(tensor.read())


class QKVLinear(FusedLinear):
    def __init__(self, hidden: int, q_size: int, kv_size: int, bias: bool) -> None:
        super().__init__(hidden, {"q": q_size, "k": kv_size, "v": kv_size}, bias)


class GateUpLinear(FusedLinear):
    def __init__(self, hidden: int, intermediate: int, bias: bool) -> None:
        super().__init__(hidden, {"gate": intermediate, "up": intermediate}, bias)
