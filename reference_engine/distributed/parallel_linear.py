"""Tensor-parallel linear layers (Megatron-LM's split, vLLM's class names).

A column-parallel layer splits W's *output* rows over the tensor-parallel ranks: each rank
computes its own slice of the outputs from the full input, with no communication. A
row-parallel layer splits W's *input* columns: each rank multiplies its slice of the input
(exactly the slice the column-parallel layer before it produced) and one all-reduce sums the
partial products. So attention (QKV column-parallel by heads, o_proj row-parallel) and the
MLP (gate/up column-parallel, down row-parallel) each cost one all-reduce per layer.

KV heads are split like query heads; when there are fewer KV heads than ranks each KV head
is replicated on `tp / num_kv_heads` consecutive ranks, as vLLM does, so every rank still
holds the KV head its query heads read.

Every layer loads only its own slice of a checkpoint tensor (`CheckpointTensor.read` with a
range), after checking the whole tensor's shape. At tp=1 each layer is the plain one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from reference_engine.distributed.parallel_state import GroupCoordinator, current_parallel_state
from reference_engine.layers.cpu_gemm import packed_linear
from reference_engine.layers.linear import FusedLinear, Linear

if TYPE_CHECKING:
    from reference_engine.loader import CheckpointTensor


def divide(numerator: int, denominator: int) -> int:
    # ParallelConfig.verify_model says so in words before any rank starts; this is the guard.
    assert numerator % denominator == 0, f"{numerator} is not divisible by {denominator}"
    return numerator // denominator


def local_kv_heads(total_kv_heads: int, tp_size: int) -> int:
    """KV heads one rank holds: a split when there are enough, one replica otherwise."""
    return max(1, total_kv_heads // tp_size)


class ColumnParallelLinear(Linear):
    """Output features split over ranks; the output stays split (no communication)."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool, tp: GroupCoordinator | None = None
    ) -> None:
        self.tp = tp or current_parallel_state().tp
        self.full_out_features = out_features
        super().__init__(in_features, divide(out_features, self.tp.world_size), bias)

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        target = getattr(self, param).data
        tensor.expect_shape((self.full_out_features, *target.shape[1:]))
        n = target.shape[0]
        target.copy_(tensor.read(0, self.tp.rank * n, (self.tp.rank + 1) * n))


class RowParallelLinear(Linear):
    """Input features split over ranks; one all-reduce sums the partial outputs, then the
    bias is added once."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool, tp: GroupCoordinator | None = None
    ) -> None:
        self.tp = tp or current_parallel_state().tp
        self.full_in_features = in_features
        super().__init__(divide(in_features, self.tp.world_size), out_features, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed_weight is None:
            y = F.linear(x, self.weight)
        else:
            y = packed_linear(x, self.packed_weight, None)
        y = self.tp.all_reduce(y)
        return y if self.bias is None else y + self.bias

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        target = getattr(self, param).data
        if param == "bias":  # not split: added once after the all-reduce
            tensor.expect_shape(tuple(target.shape))
            target.copy_(tensor.read())
            return
        tensor.expect_shape((target.shape[0], self.full_in_features))
        n = target.shape[1]
        target.copy_(tensor.read(1, self.tp.rank * n, (self.tp.rank + 1) * n))


class _ShardedFusedLinear(FusedLinear):
    """A fused column-parallel projection: each named part is split (or replicated) on its
    own, so rank r's fused weight is [q_r; k_r; v_r] or [gate_r; up_r]."""

    tp: GroupCoordinator

    def source_rows(self, shard: str) -> tuple[int, int, int]:
        """(full rows of the checkpoint part, first row, end row) this rank reads."""
        raise NotImplementedError

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        if shard is None:
            raise KeyError(f"{tensor.name}: a fused projection loads by shard")
        target = getattr(self, param).data[self.output_slice(shard)]
        full, start, stop = self.source_rows(shard)
        tensor.expect_shape((full, *target.shape[1:]))
        target.copy_(tensor.read(0, start, stop))


class MergedColumnParallelLinear(_ShardedFusedLinear):
    """gate/up (SwiGLU): both halves split by the same columns of the intermediate size."""

    def __init__(self, hidden: int, intermediate: int, bias: bool) -> None:
        self.tp = current_parallel_state().tp
        self.full_intermediate = intermediate
        local = divide(intermediate, self.tp.world_size)
        super().__init__(hidden, {"gate": local, "up": local}, bias)

    def source_rows(self, shard: str) -> tuple[int, int, int]:
        n = self.shard_sizes[shard]
        return self.full_intermediate, self.tp.rank * n, (self.tp.rank + 1) * n


class QKVParallelLinear(_ShardedFusedLinear):
    """q, k, v split by heads: rank r holds query heads [r*Hq/tp, ...) and the KV heads they
    read (a replica when there are fewer KV heads than ranks)."""

    def __init__(
        self, hidden: int, head_dim: int, num_heads: int, num_kv_heads: int, bias: bool
    ) -> None:
        self.tp = current_parallel_state().tp
        ws = self.tp.world_size
        self.head_dim = head_dim
        self.total_heads, self.total_kv_heads = num_heads, num_kv_heads
        self.num_heads = divide(num_heads, ws)
        self.num_kv_heads = local_kv_heads(num_kv_heads, ws)
        super().__init__(
            hidden,
            {
                "q": self.num_heads * head_dim,
                "k": self.num_kv_heads * head_dim,
                "v": self.num_kv_heads * head_dim,
            },
            bias,
        )

    def source_rows(self, shard: str) -> tuple[int, int, int]:
        ws, rank, d = self.tp.world_size, self.tp.rank, self.head_dim
        if shard == "q":
            return self.total_heads * d, rank * self.num_heads * d, (rank + 1) * self.num_heads * d
        if self.total_kv_heads >= ws:
            first = rank * self.num_kv_heads
        else:  # replicated: ranks [h * ws/kv, (h+1) * ws/kv) share KV head h
            first = rank // divide(ws, self.total_kv_heads)
        return self.total_kv_heads * d, first * d, (first + self.num_kv_heads) * d
