"""Pipeline parallelism: contiguous stages of layers, micro-batches in flight between them.

Stage s holds layers [s*L/P, (s+1)*L/P) (the others are `PPMissingLayer`s without weights,
whose checkpoint tensors it never reads) and KV caches for its own layers only. Every stage
receives the step's ForwardBatch (executor.py) and splits it the same way into micro-batches
of whole sequences (`split_batch`). Stage s then, for each micro-batch in turn, receives the
hidden states from stage s-1 (stage 0 embeds the tokens instead), runs its layers and sends
the result on with a non-blocking send, so while stage s+1 works on micro-batch m, stage s
already computes m+1: GPipe's schedule for a forward pass, as vLLM's and SGLang's PP overlap
micro-batches (there: consecutive scheduler steps over disjoint requests). The last stage
computes the logits and sends them to the driver (global rank 0), which samples.

In this engine's decoder layer the residual is already added back into the hidden states
(no fused add-norm carrying a separate residual, as vLLM has), so one tensor crosses each
stage boundary. The embedding, final norm and LM head are kept on every stage (small; a
tied LM head needs the embedding anyway).

`StageTimes` measures each stage's busy time per step; the bubble fraction is the share of
stage-time spent waiting: 1 - sum(busy) / (stages * step wall time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch import nn

from reference_engine.forward_batch import ForwardBatch, SeqInput, build_forward_batch


def layer_range(num_layers: int, stage: int, num_stages: int) -> tuple[int, int]:
    """Layers [start, end) of `stage` (ParallelConfig checks the division is exact)."""
    per = num_layers // num_stages
    return stage * per, (stage + 1) * per


class PPMissingLayer(nn.Module):
    """A decoder layer another stage holds: no weights, never called."""

    def forward(self, *args: object) -> torch.Tensor:
        raise RuntimeError("this layer lives on another pipeline stage")


def split_batch(batch: ForwardBatch, parts: int) -> list[ForwardBatch]:
    """Whole sequences into at most `parts` micro-batches of about equal token counts, in
    order, so concatenated logits keep the batch's row order."""
    n = batch.num_seqs
    if parts <= 1 or n <= 1:
        return [batch]
    qsl = batch.query_start_loc.tolist()
    target = qsl[-1] / min(parts, n)
    groups: list[list[int]] = [[]]
    for i in range(n):
        if groups[-1] and qsl[i] >= target * len(groups) and len(groups) < parts:
            groups.append([])
        groups[-1].append(i)
    if len(groups) == 1:
        return [batch]
    out = []
    for group in groups:
        seqs = []
        for i in group:
            lo, hi = qsl[i], qsl[i + 1]
            ctx = batch.context_lens_cpu[i]
            used = -(-ctx // batch.block_size)
            seqs.append(
                SeqInput(
                    token_ids=batch.input_ids[lo:hi].tolist(),
                    start_position=ctx - (hi - lo),
                    block_table=batch.block_tables[i, :used].tolist(),
                    want_prompt_logits=batch.logits_start_loc[i + 1] - batch.logits_start_loc[i]
                    == hi - lo
                    and hi - lo > 1,
                    kv_policy=batch.kv_policies[i] if batch.kv_policies else None,
                )
            )
        out.append(build_forward_batch(seqs, batch.block_size, device=batch.input_ids.device))
    return out


@dataclass(slots=True)
class StageTimes:
    """Busy seconds of every stage and wall seconds of the steps; kept by the driver."""

    busy_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    steps: int = 0

    @property
    def bubble_fraction(self) -> float:
        if not self.busy_s or self.wall_s == 0:
            return 0.0
        return max(0.0, 1.0 - sum(self.busy_s) / (len(self.busy_s) * self.wall_s))


def run_pipeline(
    runner: object, batch: ForwardBatch, num_micro: int
) -> tuple[torch.Tensor | None, float]:
    """One step on this rank's stage -> (logits on global rank 0, else None; busy seconds)."""
    from reference_engine.model_runner import ModelRunner

    assert isinstance(runner, ModelRunner)
    pp = runner.parallel.pp
    stage, stages = pp.rank, pp.world_size
    me = pp.ranks[stage]
    model = runner.model
    hidden_size = runner.model_config.hidden_size
    logits_dtype = torch.promote_types(runner.dtype, torch.float32)
    sends: list[tuple[object, torch.Tensor]] = []
    busy = 0.0
    parts = split_batch(batch, num_micro)
    with torch.inference_mode():
        for mb in parts:
            hidden = None
            if stage > 0:
                hidden = torch.empty(mb.num_tokens, hidden_size, dtype=runner.dtype)
                dist.recv(hidden, src=pp.ranks[stage - 1], group=pp.group)
            start = time.perf_counter()
            out = model.model(mb.input_ids, mb.positions, runner.kv_caches, mb, hidden)
            if stage == stages - 1:
                out = model.compute_logits(out[mb.logits_indices]).to(logits_dtype)
            busy += time.perf_counter() - start
            if stage < stages - 1:
                out = out.contiguous()
                sends.append((dist.isend(out, dst=pp.ranks[stage + 1], group=pp.group), out))
            elif me != 0 and runner.parallel.tp.rank == 0:
                sends.append((dist.isend(out, dst=0, group=pp.group), out))
        for work, _ in sends:
            work.wait()  # type: ignore[attr-defined]
        if me != 0:
            return None, busy
        logits = []
        for mb in parts:
            part = torch.empty(
                len(mb.logits_indices), runner.model_config.vocab_size, dtype=logits_dtype
            )
            dist.recv(part, src=pp.ranks[stages - 1], group=pp.group)
            logits.append(part)
    return torch.cat(logits), busy
