"""Fused projections: one matmul for q/k/v and one for gate/up instead of three and two.

Checkpoints store the parts separately (`q_proj`, `k_proj`, ...); `output_slice` tells the
loader which rows of the fused weight each part fills.
"""

from __future__ import annotations

from torch import nn


class FusedLinear(nn.Linear):
    """An nn.Linear whose output rows are the concatenation of named shards."""

    def __init__(self, in_features: int, shard_sizes: dict[str, int], bias: bool) -> None:
        super().__init__(in_features, sum(shard_sizes.values()), bias=bias)
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


class QKVLinear(FusedLinear):
    def __init__(self, hidden: int, q_size: int, kv_size: int, bias: bool) -> None:
        super().__init__(hidden, {"q": q_size, "k": kv_size, "v": kv_size}, bias)


class GateUpLinear(FusedLinear):
    def __init__(self, hidden: int, intermediate: int, bias: bool) -> None:
        super().__init__(hidden, {"gate": intermediate, "up": intermediate}, bias)
