"""Decode with graph capture: pad each decode batch up to a captured size ("bucket").

A CUDA graph replays a fixed sequence of kernels on fixed buffers, so it can only serve the
exact shapes it was captured with. Decode steps are the ones worth capturing (many tiny
kernels, launch-bound), so we capture a handful of batch sizes and pad every decode batch up
to the next one. Padding rows compute garbage that nobody reads: their K/V goes to the runner's
scratch block, their block tables point only at it, and their logits are sliced off.

Decode attention here gathers every column of the block table, so the table's width is a
shape too. A graph per batch size at the longest possible width (max_model_len) would make
every step gather max_model_len slots per sequence; instead each batch size is captured at
a few widths (powers of two, up to the longest) and a step replays the narrowest one that
holds its widest table.

On a CPU there is nothing to capture, but the same bucketing and padding run eagerly, so the
logic the GPU path depends on is exercised (and tested) everywhere.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import torch

from reference_engine.forward_batch import DecodeGroup, ForwardBatch, key_mask
from reference_engine.model_runner import ModelRunner

if TYPE_CHECKING:  # torch imports it lazily too: a top-level import is circular in torch.cuda
    from torch.cuda import _POOL_HANDLE


def pick_bucket(num_seqs: int, sizes: list[int]) -> int | None:
    """The smallest captured size that holds `num_seqs`, or None when none does."""
    i = bisect.bisect_left(sizes, num_seqs)
    return sizes[i] if i < len(sizes) else None


def width_buckets(max_blocks: int) -> list[int]:
    """Block-table widths to capture: powers of two below `max_blocks`, then `max_blocks`."""
    widths, w = [], 1
    while w < max_blocks:
        widths.append(w)
        w *= 2
    return [*widths, max_blocks]


def pad_decode_batch(
    batch: ForwardBatch,
    bucket: int,
    pad_slot: int,
    pad_block_id: int,
    width: int | None = None,
) -> ForwardBatch:
    """A decode-only batch padded to `bucket` sequences and (optionally) a fixed block-table
    width. Real rows keep their places, so the first `batch.num_seqs` logits are theirs."""
    if not batch.decode_only:
        raise ValueError("only decode-only batches (one new token per sequence) are padded")
    n = batch.num_seqs
    if bucket < n:
        raise ValueError(f"bucket {bucket} is smaller than the batch ({n} sequences)")
    width = batch.block_tables.shape[1] if width is None else width
    if width < batch.block_tables.shape[1]:
        raise ValueError(f"block table width {width} is narrower than the batch's")
    dev = batch.input_ids.device
    pad = bucket - n

    def extend(t: torch.Tensor, value: int) -> torch.Tensor:
        return torch.cat([t, torch.full((pad,), value, dtype=t.dtype, device=dev)])

    # Padding rows read and write only the scratch block; extra columns of real rows are
    # masked by their context_lens like any other padding column.
    tables = torch.full((bucket, width), pad_block_id, dtype=torch.int64, device=dev)
    tables[:n, : batch.block_tables.shape[1]] = batch.block_tables
    rows = torch.arange(bucket + 1, dtype=torch.int64, device=dev)
    # A padding row attends to the one slot it just wrote, so its softmax is well defined.
    context_lens = extend(batch.context_lens, 1)
    return ForwardBatch(
        input_ids=extend(batch.input_ids, 0),
        positions=extend(batch.positions, 0),
        slot_mapping=extend(batch.slot_mapping, pad_slot),
        block_tables=tables,
        context_lens=context_lens,
        query_start_loc=rows,
        logits_indices=rows[:-1],
        query_lens_cpu=[1] * bucket,
        context_lens_cpu=[*batch.context_lens_cpu, *[1] * pad],
        logits_start_loc=list(range(bucket + 1)),
        block_size=batch.block_size,
        num_prefills=0,
        num_decodes=bucket,
        decode_seq_idx=rows[:-1],
        # One group, rows in order, sharing the batch's table: a graph needs static shapes,
        # so the length grouping of eager decode batches does not apply here.
        decode_groups=[DecodeGroup(None, tables, key_mask(context_lens, width * batch.block_size))],
        prefill_seq_idx=[],
    )


# What a replay reads: refilled from each step's padded batch (all else is fixed per bucket),
# plus the decode group's key mask (its table is `block_tables` itself).
STATIC_INPUTS = (
    "input_ids",
    "positions",
    "slot_mapping",
    "block_tables",
    "context_lens",
)


class Replayable(Protocol):
    def replay(self) -> None: ...


class GraphCapturer(Protocol):
    """Records `fn` once; replaying re-runs the recorded work on the same buffers."""

    def capture(self, fn: Callable[[], torch.Tensor]) -> tuple[Replayable, torch.Tensor]: ...


class CudaGraphCapturer:
    """torch.cuda.CUDAGraph capture; all graphs share one memory pool (only one replays at
    a time, so their intermediates can overlap)."""

    def __init__(self) -> None:
        self._pool: _POOL_HANDLE | None = None

    def capture(self, fn: Callable[[], torch.Tensor]) -> tuple[Replayable, torch.Tensor]:
        fn()  # warm-up outside capture: lazy initialisation must not be recorded
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            out = fn()
        if self._pool is None:
            self._pool = graph.pool()
        return graph, out


@dataclass(slots=True)
class _Captured:
    graph: Replayable
    inputs: ForwardBatch  # static buffers the graph reads; refilled before each replay
    logits: torch.Tensor  # static output buffer the graph writes


@dataclass(slots=True)
class DecodeStats:
    graph_replays: int = 0
    eager_padded: int = 0
    fallbacks: int = 0  # prefill batches or batches larger than every bucket
    padded_rows: int = 0


@dataclass(slots=True)
class _State:
    graphs: dict[tuple[int, int], _Captured] = field(default_factory=dict)  # (size, width)
    stats: DecodeStats = field(default_factory=DecodeStats)


class DecodeGraphRunner:
    """Wraps a ModelRunner: `execute(batch)` has `ModelRunner.execute_model`'s contract."""

    def __init__(
        self,
        runner: ModelRunner,
        batch_sizes: tuple[int, ...] | None = None,
        capturer: GraphCapturer | None = None,
    ) -> None:
        """`capturer` defaults to CUDA graphs on a CUDA device (unless enforce_eager) and to
        none elsewhere; tests pass an eager stand-in to exercise capture/replay on a CPU."""
        self.runner = runner
        cfg = runner.engine_config
        self.sizes = sorted(set(batch_sizes or cfg.cuda_graph_batch_sizes))
        self.widths = width_buckets(runner.max_blocks_per_seq)
        if capturer is None and runner.device.type == "cuda" and not cfg.enforce_eager:
            capturer = CudaGraphCapturer()
        self.capturer = capturer
        self._state = _State()

    @property
    def use_graphs(self) -> bool:
        return self.capturer is not None

    @property
    def stats(self) -> DecodeStats:
        return self._state.stats

    @property
    def captured_sizes(self) -> list[int]:
        return sorted({size for size, _ in self._state.graphs})

    @property
    def captured_shapes(self) -> list[tuple[int, int]]:
        """(batch size, block-table width) of every captured graph."""
        return sorted(self._state.graphs)

    def execute(self, batch: ForwardBatch) -> torch.Tensor:
        # Per-request KV eviction (kv_window.py, heavy_hitters.py) narrows each row's key
        # mask and may collect attention scores: the captured graphs know neither.
        replayable = batch.decode_only and not batch.kv_policies
        bucket = pick_bucket(batch.num_seqs, self.sizes) if replayable else None
        # decode-only tables are as wide as the longest context needs (build_forward_batch)
        width = pick_bucket(batch.block_tables.shape[1], self.widths)
        if bucket is None or width is None:
            self._state.stats.fallbacks += 1
            return self.runner.execute_model(batch)
        self._state.stats.padded_rows += bucket - batch.num_seqs
        captured = self._state.graphs.get((bucket, width))
        if captured is None:
            if self.capturer is not None:
                captured = self._capture(bucket, width)
            else:
                self._state.stats.eager_padded += 1
                padded = self._pad(batch, bucket, width=None)
                return self.runner.execute_model(padded)[: batch.num_seqs]
        padded = self._pad(batch.to(self.runner.device), bucket, width)
        for name in STATIC_INPUTS:
            getattr(captured.inputs, name).copy_(getattr(padded, name))
        captured.inputs.decode_groups[0].key_mask.copy_(padded.decode_groups[0].key_mask)
        captured.graph.replay()
        self._state.stats.graph_replays += 1
        return captured.logits[: batch.num_seqs].clone()

    def capture_all(self) -> None:
        """Capture every (size, width) up front, largest first, so smaller graphs reuse the
        memory pool the largest one set aside."""
        if self.capturer is not None:
            for size in reversed(self.sizes):
                for width in reversed(self.widths):
                    self._capture(size, width)

    def _pad(self, batch: ForwardBatch, bucket: int, width: int | None) -> ForwardBatch:
        # A graph replays at its captured width; eager runs (width None) pay only for the
        # widest table actually present.
        r = self.runner
        return pad_decode_batch(batch, bucket, r.pad_slot, r.pad_block_id, width)

    def _capture(self, bucket: int, width: int) -> _Captured:
        r = self.runner
        tables = torch.full((bucket, width), r.pad_block_id, dtype=torch.int64, device=r.device)
        ones = torch.ones(bucket, dtype=torch.int64, device=r.device)
        mask = key_mask(ones, width * r.block_size)
        # A dummy decode batch whose buffers become the graph's static inputs.
        dummy = ForwardBatch(
            input_ids=torch.zeros(bucket, dtype=torch.int64, device=r.device),
            positions=torch.zeros(bucket, dtype=torch.int64, device=r.device),
            slot_mapping=torch.full((bucket,), r.pad_slot, dtype=torch.int64, device=r.device),
            block_tables=tables,
            context_lens=ones,
            query_start_loc=torch.arange(bucket + 1, dtype=torch.int64, device=r.device),
            logits_indices=torch.arange(bucket, dtype=torch.int64, device=r.device),
            query_lens_cpu=[1] * bucket,
            context_lens_cpu=[1] * bucket,
            logits_start_loc=list(range(bucket + 1)),
            block_size=r.block_size,
            num_prefills=0,
            num_decodes=bucket,
            decode_seq_idx=torch.arange(bucket, dtype=torch.int64, device=r.device),
            decode_groups=[DecodeGroup(None, tables, mask)],
            prefill_seq_idx=[],
        )
        assert self.capturer is not None
        graph, logits = self.capturer.capture(lambda: r.execute_model(dummy))
        captured = _Captured(graph, dummy, logits)
        self._state.graphs[(bucket, width)] = captured
        return captured
