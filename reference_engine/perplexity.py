"""Perplexity measured through the serving path: the model runner's own layers (quantized
projections, a quantized KV cache) and its paged attention, not a separate training graph.

Each window is prefilled in chunks of `chunk` tokens, so every chunk after the first reads
its context back from the paged KV cache: a KV-cache dtype shows up in the number exactly as
it does in serving. Used by the tests and benchmarks/quant_bench.py.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.model_runner import ModelRunner


def window_logits(runner: ModelRunner, tokens: list[int], chunk: int = 64) -> torch.Tensor:
    """Logits [len(tokens), vocab] of one sequence, prefilled `chunk` tokens per step into
    blocks 0.. of the runner's cache (the caller owns the runner: nothing else may run)."""
    blocks_needed = -(-len(tokens) // runner.block_size)
    if blocks_needed > runner.num_blocks:
        raise ValueError(f"{len(tokens)} tokens need {blocks_needed} KV blocks, "
                         f"the runner has {runner.num_blocks}")
    table = list(range(blocks_needed))
    rows: list[torch.Tensor] = []
    for start in range(0, len(tokens), chunk):
        part = tokens[start : start + chunk]
        batch = build_forward_batch(
            [SeqInput(part, start, table, want_prompt_logits=True)],
            runner.block_size,
            device=runner.device,
        )
        rows.append(runner.execute_model(batch).float().cpu())
    return torch.cat(rows)


def runner_perplexity(
    runner: ModelRunner, tokens: list[int], window: int = 256, chunk: int = 64
) -> float:
    """exp(mean next-token NLL) over consecutive non-overlapping windows of `tokens`."""
    nll, count = 0.0, 0
    for start in range(0, len(tokens) - 1, window):
        ids = tokens[start : start + window + 1]
        if len(ids) < 2:
            break
        logits = window_logits(runner, ids[:-1], chunk)
        target = torch.tensor(ids[1:])
        nll += F.cross_entropy(logits, target, reduction="sum").item()
        count += len(target)
    return math.exp(nll / count)
