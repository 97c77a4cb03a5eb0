"""Graph-capture bucketing and padding, run eagerly on the CPU."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from reference_engine.cuda_graph import (
    DecodeGraphRunner,
    Replayable,
    pad_decode_batch,
    pick_bucket,
    width_buckets,
)
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.model_runner import ModelRunner


def test_pick_bucket() -> None:
    sizes = [1, 2, 4, 8]
    assert [pick_bucket(n, sizes) for n in (1, 2, 3, 4, 5, 8)] == [1, 2, 4, 4, 8, 8]
    assert pick_bucket(9, sizes) is None


def _prefilled(
    runner: ModelRunner, lengths: list[int], room: int = 1
) -> tuple[list[list[int]], list[list[int]]]:
    """Prefill sequences of the given lengths (with blocks for `room` more tokens); return
    their tokens, the first not yet computed, and block tables."""
    tokens = [[(7 * i + 3 * j) % 500 + 3 for j in range(n + 1)] for i, n in enumerate(lengths)]
    tables, next_block = [], 0
    for n in lengths:
        need = (n + room - 1) // runner.block_size + 1
        tables.append(list(range(next_block, next_block + need)))
        next_block += need
    prefill = [SeqInput(t[:-1], 0, tb) for t, tb in zip(tokens, tables, strict=True)]
    runner.execute_model(build_forward_batch(prefill, runner.block_size))
    return tokens, tables


def _decode_batch(runner: ModelRunner, tokens: list[list[int]], tables: list[list[int]]):
    seqs = [SeqInput(t[-1:], len(t) - 1, tb) for t, tb in zip(tokens, tables, strict=True)]
    return build_forward_batch(seqs, runner.block_size)


def test_padding_rows_touch_only_the_scratch_block(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    runner = make_runner(tiny_model_path, num_blocks=24)
    tokens, tables = _prefilled(runner, [5, 9, 2])
    batch = _decode_batch(runner, tokens, tables)
    padded = pad_decode_batch(batch, 8, runner.pad_slot, runner.pad_block_id, width=6)
    assert padded.num_seqs == 8 and padded.block_tables.shape == (8, 6)
    assert padded.slot_mapping[3:].eq(runner.pad_slot).all()
    assert padded.block_tables[3:].eq(runner.pad_block_id).all()
    assert padded.context_lens[3:].eq(1).all()
    torch.testing.assert_close(padded.slot_mapping[:3], batch.slot_mapping)

    before = [k[: runner.num_blocks].clone() for k, _ in runner.kv_caches]
    logits = runner.execute_model(padded)
    assert torch.isfinite(logits).all()
    real_slots = set(batch.slot_mapping.tolist())
    for (k, _), old in zip(runner.kv_caches, before, strict=True):
        changed = (k[: runner.num_blocks] != old).flatten(2).any(-1).nonzero().tolist()
        assert {b * runner.block_size + o for b, o in changed} <= real_slots


def test_padded_decode_equals_unpadded(tiny_model_path: Path, make_runner: Callable) -> None:
    lengths = [6, 13, 3]
    plain = make_runner(tiny_model_path, num_blocks=24)
    tokens, tables = _prefilled(plain, lengths)
    want = plain.execute_model(_decode_batch(plain, tokens, tables))

    runner = make_runner(tiny_model_path, num_blocks=24)
    _prefilled(runner, lengths)
    graphs = DecodeGraphRunner(runner, batch_sizes=(1, 2, 4, 8))
    assert not graphs.use_graphs  # CPU: same padding, run eagerly
    got = graphs.execute(_decode_batch(runner, tokens, tables))
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=0, atol=1e-10)
    assert graphs.stats.eager_padded == 1 and graphs.stats.padded_rows == 1


def test_fallbacks_for_prefill_and_oversized_batches(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    runner = make_runner(tiny_model_path, num_blocks=24)
    graphs = DecodeGraphRunner(runner, batch_sizes=(1, 2))
    prefill = build_forward_batch([SeqInput([4, 5, 6], 0, [0])], runner.block_size)
    assert graphs.execute(prefill).shape == (1, runner.model_config.vocab_size)
    tokens, tables = _prefilled(runner, [2, 2, 2])
    out = graphs.execute(_decode_batch(runner, tokens, tables))
    assert out.shape == (3, runner.model_config.vocab_size)
    assert graphs.stats.fallbacks == 2 and graphs.stats.eager_padded == 0


def test_pad_rejects_bad_requests(tiny_model_path: Path, make_runner: Callable) -> None:
    runner = make_runner(tiny_model_path, num_blocks=24)
    prefill = build_forward_batch([SeqInput([4, 5], 0, [0])], runner.block_size)
    with pytest.raises(ValueError, match="decode-only"):
        pad_decode_batch(prefill, 4, runner.pad_slot, runner.pad_block_id)
    decode = build_forward_batch([SeqInput([4], 1, [0]), SeqInput([5], 1, [1])], runner.block_size)
    with pytest.raises(ValueError, match="smaller"):
        pad_decode_batch(decode, 1, runner.pad_slot, runner.pad_block_id)


class _EagerReplay:
    """Stand-in for a CUDA graph: replay re-runs the recorded call into the same output
    buffer, so stale static inputs would show up exactly as they would on a GPU."""

    def __init__(self, fn: Callable[[], torch.Tensor], out: torch.Tensor) -> None:
        self.fn, self.out = fn, out

    def replay(self) -> None:
        self.out.copy_(self.fn())


class _EagerCapturer:
    def __init__(self) -> None:
        self.captured = 0

    def capture(self, fn: Callable[[], torch.Tensor]) -> tuple[Replayable, torch.Tensor]:
        self.captured += 1
        out = fn().clone()
        return _EagerReplay(fn, out), out


def test_capture_then_replay_refills_static_inputs(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    """Decode several steps through captured graphs (eager stand-in) and through the plain
    runner side by side: same logits every step, so each replay saw that step's inputs and
    wrote its K/V where the next step reads it."""
    lengths = [6, 13, 3]
    plain = make_runner(tiny_model_path, num_blocks=24, max_model_len=32)
    tokens, tables = _prefilled(plain, lengths, room=4)
    runner = make_runner(tiny_model_path, num_blocks=24, max_model_len=32)
    _prefilled(runner, lengths, room=4)
    capturer = _EagerCapturer()
    graphs = DecodeGraphRunner(runner, batch_sizes=(2, 4), capturer=capturer)
    graphs.capture_all()
    assert graphs.widths == width_buckets(runner.max_blocks_per_seq)
    assert graphs.captured_sizes == [2, 4] and capturer.captured == 2 * len(graphs.widths)
    for step in range(4):
        # the third sequence finishes after two steps: the batch shrinks into bucket 2
        live = [0, 1, 2] if step < 2 else [0, 1]
        seq_tokens = [tokens[i] for i in live]
        want = plain.execute_model(_decode_batch(plain, seq_tokens, [tables[i] for i in live]))
        got = graphs.execute(_decode_batch(runner, seq_tokens, [tables[i] for i in live]))
        torch.testing.assert_close(got, want, rtol=0, atol=1e-10)
        for i in live:
            tokens[i].append(int(want[live.index(i)].argmax()))
    assert graphs.stats.graph_replays == 4 and capturer.captured == 2 * len(graphs.widths)


def test_width_buckets() -> None:
    assert width_buckets(1) == [1]
    assert width_buckets(8) == [1, 2, 4, 8]
    assert width_buckets(12) == [1, 2, 4, 8, 12]


def test_replay_uses_the_narrowest_width_that_holds_the_batch(
    tiny_model_path: Path, make_runner: Callable
) -> None:
    """Graphs are captured on demand per (batch size, table width): a batch whose longest
    context needs w blocks replays the graph of the smallest captured width >= w, and its
    logits equal the plain runner's."""
    plain = make_runner(tiny_model_path, num_blocks=40, max_model_len=64)
    runner = make_runner(tiny_model_path, num_blocks=40, max_model_len=64)
    lengths = [5, 2 * runner.block_size + 1]  # the longer needs 3 blocks after its next token
    tokens, tables = _prefilled(plain, lengths)
    _prefilled(runner, lengths)
    capturer = _EagerCapturer()
    graphs = DecodeGraphRunner(runner, batch_sizes=(2, 4), capturer=capturer)
    want = plain.execute_model(_decode_batch(plain, tokens, tables))
    got = graphs.execute(_decode_batch(runner, tokens, tables))
    torch.testing.assert_close(got, want, rtol=0, atol=1e-10)
    assert graphs.captured_shapes == [(2, 4)] and capturer.captured == 1
