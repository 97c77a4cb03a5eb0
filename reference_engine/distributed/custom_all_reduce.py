"""All-reduce written out with point-to-point sends: the algorithms behind one collective.

`dist.all_reduce` hides a choice the book's communication chapter makes explicit. Each
algorithm below trades steps (latency, alpha each) against bytes on the wire (beta each):

- ring: a reduce-scatter then an all-gather around the ring, 2(N-1) steps each moving S/N
  bytes: 2(N-1) alpha + 2(N-1)/N S beta. Bandwidth-optimal, NCCL's choice for big messages.
- recursive doubling: log2 N rounds, each swapping the whole buffer with the rank whose id
  differs in one bit: log2 N (alpha + S beta). Few steps, many bytes: small messages.
- one-shot: every rank sends its buffer to every other and sums what arrives, one round:
  alpha + (N-1) S beta. vLLM's and SGLang's custom all-reduce do this over NVLink peer
  memory for the small decode-time messages where latency is everything.
- two-shot: a reduce-scatter where each rank sums its 1/N slice straight from every peer,
  then an all-gather of the slices, two rounds: 2 alpha + 2(N-1)/N S beta.

Every rank adds the contributions in rank order (the ring, in the order the ring visits),
so all ranks end with identical bits; integer-valued inputs give exactly `all_reduce`'s
result. gloo stands in for NVLink/NCCL here: the algorithms and their costs are the same
ones, the constants are a CPU's (benchmarks/allreduce_bench.py fits and compares them).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist
from torch.distributed import ProcessGroup


def _ranks(group: ProcessGroup | None) -> tuple[int, int, Callable[[int], int]]:
    """(rank in group, group size, group rank -> global rank) for point-to-point calls."""
    pg = group or dist.group.WORLD
    if pg is None:
        raise RuntimeError("torch.distributed is not initialized (no default process group)")
    rank, world = dist.get_rank(pg), dist.get_world_size(pg)
    return rank, world, lambda r: dist.get_global_rank(pg, r)


def _exchange(
    send: torch.Tensor, to: int, recv: torch.Tensor, frm: int, group: ProcessGroup | None
) -> None:
    """Send one buffer and receive another at once (both posted first: no deadlock)."""
    ops = [dist.P2POp(dist.isend, send, to, group), dist.P2POp(dist.irecv, recv, frm, group)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()


def ring_all_reduce(x: torch.Tensor, group: ProcessGroup | None = None) -> torch.Tensor:
    """Sum over ranks by a reduce-scatter and an all-gather around the ring (returns a new tensor)."""
    rank, world, glob = _ranks(group)
    out = x.detach().reshape(-1).clone()
    if world == 1:
        return out.view_as(x)
    chunks = list(torch.tensor_split(out, world))
    right, left = glob((rank + 1) % world), glob((rank - 1) % world)
    # Reduce-scatter: after step s, chunk (rank - s - 1) holds s + 2 ranks' sum.
    for s in range(world - 1):
        send_i, recv_i = (rank - s) % world, (rank - s - 1) % world
        incoming = torch.empty_like(chunks[recv_i])
        _exchange(chunks[send_i], right, incoming, left, group)
        chunks[recv_i] += incoming  # adds the ring's running sum to our own share
    # Rank r now owns the full sum of chunk (r + 1); pass the finished chunks around.
    for s in range(world - 1):
        send_i, recv_i = (rank + 1 - s) % world, (rank - s) % world
        incoming = torch.empty_like(chunks[recv_i])
        _exchange(chunks[send_i], right, incoming, left, group)
        chunks[recv_i].copy_(incoming)
    return out.view_as(x)


def recursive_doubling_all_reduce(
    x: torch.Tensor, group: ProcessGroup | None = None
) -> torch.Tensor:
    """log2 N rounds of swapping the whole buffer with the partner one bit away."""
    rank, world, glob = _ranks(group)
    if world & (world - 1):
        raise ValueError(f"recursive doubling needs a power-of-two group, not {world} ranks")
    out = x.detach().clone()
    distance = 1
    while distance < world:
        partner = rank ^ distance
        incoming = torch.empty_like(out)
        _exchange(out, glob(partner), incoming, glob(partner), group)
        # Lower rank's partial first: both partners compute the same bits.
        out = out + incoming if rank < partner else incoming + out
        distance *= 2
    return out


def _sum_in_rank_order(parts: list[torch.Tensor]) -> torch.Tensor:
    total = parts[0].clone()
    for p in parts[1:]:
        total += p
    return total


def _gather_from_all(
    mine: list[torch.Tensor], into: list[torch.Tensor], group: ProcessGroup | None
) -> None:
    """One round: send mine[p] to every peer p, receive into[p] from every peer p."""
    rank, world, glob = _ranks(group)
    ops = []
    for peer in range(world):
        if peer != rank:
            ops.append(dist.P2POp(dist.isend, mine[peer], glob(peer), group))
            ops.append(dist.P2POp(dist.irecv, into[peer], glob(peer), group))
    for req in dist.batch_isend_irecv(ops):
        req.wait()


def one_shot_all_reduce(x: torch.Tensor, group: ProcessGroup | None = None) -> torch.Tensor:
    """Everyone sends its whole buffer to everyone, then sums all N buffers locally."""
    rank, world, _ = _ranks(group)
    flat = x.detach().reshape(-1).contiguous()
    parts = [flat if p == rank else torch.empty_like(flat) for p in range(world)]
    if world > 1:
        _gather_from_all([flat] * world, parts, group)
    return _sum_in_rank_order(parts).view_as(x)


def two_shot_all_reduce(x: torch.Tensor, group: ProcessGroup | None = None) -> torch.Tensor:
    """Rank r sums slice r from every peer (reduce-scatter), then the slices go to all."""
    rank, world, _ = _ranks(group)
    flat = x.detach().reshape(-1).contiguous()
    slices = list(torch.tensor_split(flat, world))
    if world == 1:
        return flat.clone().view_as(x)
    mine = [torch.empty_like(slices[rank]) for _ in range(world)]
    mine[rank] = slices[rank]
    _gather_from_all(slices, mine, group)
    reduced = _sum_in_rank_order(mine)
    out = [reduced if p == rank else torch.empty_like(slices[p]) for p in range(world)]
    _gather_from_all([reduced] * world, out, group)
    return torch.cat(out).view_as(x)


ALGORITHMS: dict[str, Callable[[torch.Tensor, ProcessGroup | None], torch.Tensor]] = {
    "ring": ring_all_reduce,
    "recursive_doubling": recursive_doubling_all_reduce,
    "one_shot": one_shot_all_reduce,
    "two_shot": two_shot_all_reduce,
}


def predicted_seconds(algorithm: str, nbytes: float, world: int, alpha: float, beta: float) -> float:
    """The alpha-beta cost of one all-reduce of `nbytes` per rank (the module docstring's
    formulas). Sends and receives of one round are taken to overlap; a CPU's copies often
    do not, which is what a measured / predicted ratio above 1 shows."""
    n = world
    if n == 1:
        return 0.0
    if algorithm == "ring":
        return 2 * (n - 1) * alpha + 2 * (n - 1) / n * nbytes * beta
    if algorithm == "recursive_doubling":
        rounds = (n - 1).bit_length()
        return rounds * (alpha + nbytes * beta)
    if algorithm == "one_shot":
        return alpha + (n - 1) * nbytes * beta
    if algorithm == "two_shot":
        return 2 * alpha + 2 * (n - 1) / n * nbytes * beta
    raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; known: {sorted(ALGORITHMS)}")
