"""Parallel state: which ranks one model shard talks to, and the collectives it uses.

vLLM keeps this in module globals (`get_tp_group()`); here the state a model is *built* with
is captured by each parallel layer at construction (`current_parallel_state()` inside a
`with building_with(state):` block), so one process may hold a single-process engine and a
sharded one side by side (the tests compare exactly those two). A `GroupCoordinator` of size
1 makes every collective the identity, so the same layers run unsharded.

Every collective goes through torch.distributed (gloo on a CPU, NCCL on CUDA); nothing here
moves tensors by other means.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist


@dataclass(frozen=True, slots=True)
class GroupCoordinator:
    """One process's view of a group of ranks (vLLM's name): its rank in the group, the
    group's size, the torch.distributed group, and the group's global ranks in order."""

    rank: int = 0
    world_size: int = 1
    group: Any = None  # torch.distributed.ProcessGroup; None for a group of one
    ranks: tuple[int, ...] = (0,)

    @property
    def is_first(self) -> bool:
        return self.rank == 0

    def all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        """Sum over the group, in place (row-parallel layers, vocab-parallel embedding)."""
        if self.world_size > 1:
            dist.all_reduce(x, group=self.group)
        return x

    def all_gather(self, x: torch.Tensor, dim: int = -1) -> torch.Tensor:
        """Concatenate every rank's `x` along `dim`, in rank order (vocab-parallel logits)."""
        if self.world_size == 1:
            return x
        parts = [torch.empty_like(x) for _ in range(self.world_size)]
        dist.all_gather(parts, x.contiguous(), group=self.group)
        return torch.cat(parts, dim=dim)

    def all_to_all(
        self, x: torch.Tensor, send_counts: list[int], recv_counts: list[int]
    ) -> torch.Tensor:
        """Rows [sum(send_counts[:r]) ...) go to rank r; returns the rows every rank sent
        here, in rank order (expert-parallel dispatch and combine)."""
        if self.world_size == 1:
            return x
        out = x.new_empty((sum(recv_counts), *x.shape[1:]))
        if hasattr(dist, "all_to_all_single") and dist.get_backend(self.group) != "gloo":
            dist.all_to_all_single(out, x.contiguous(), recv_counts, send_counts, self.group)
            return out
        # gloo has no all_to_all: the same exchange as pairwise sends and receives.
        send = list(x.split(send_counts))
        recv = list(out.split(recv_counts))
        ops = []
        for peer in range(self.world_size):
            if peer == self.rank:
                recv[peer].copy_(send[peer])
                continue
            glob = self.ranks[peer]
            if send_counts[peer]:
                ops.append(dist.P2POp(dist.isend, send[peer].contiguous(), glob, self.group))
            if recv_counts[peer]:
                ops.append(dist.P2POp(dist.irecv, recv[peer], glob, self.group))
        if ops:
            for req in dist.batch_isend_irecv(ops):
                req.wait()
        return out

    def all_to_all_counts(self, send_counts: list[int]) -> list[int]:
        """Tell every rank how many rows it will get from this one."""
        if self.world_size == 1:
            return list(send_counts)
        send = torch.tensor(send_counts, dtype=torch.int64)
        gathered = self.all_gather(send[None, :], dim=0)  # [world, world]
        return [int(v) for v in gathered[:, self.rank]]


@dataclass(frozen=True, slots=True)
class ParallelState:
    """The groups a model shard belongs to. The expert-parallel group spans the same ranks
    as the tensor-parallel one (or, with tp=1, ranks that each run the whole attention):
    attention stays tensor-parallel (or replicated) while each rank holds whole experts."""

    tp: GroupCoordinator = field(default_factory=GroupCoordinator)
    ep: GroupCoordinator = field(default_factory=GroupCoordinator)
    # rank = this stage, ranks = the global rank of each stage at this tensor-parallel rank
    pp: GroupCoordinator = field(default_factory=GroupCoordinator)
    # context parallelism: ranks that stripe every sequence's tokens and KV (same TP rank)
    cp: GroupCoordinator = field(default_factory=GroupCoordinator)


SINGLE_PROCESS = ParallelState()
_building: ParallelState = SINGLE_PROCESS


def current_parallel_state() -> ParallelState:
    """The state of the model under construction (single process outside `building_with`)."""
    return _building


@contextmanager
def building_with(state: ParallelState) -> Iterator[ParallelState]:
    global _building
    before, _building = _building, state
    try:
        yield state
    finally:
        _building = before
