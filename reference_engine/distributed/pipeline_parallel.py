"""Pipeline parallelism: contiguous stages of layers, several scheduler steps in flight.

Stage s holds layers [s*L/P, (s+1)*L/P) (the others are `PPMissingLayer`s without weights,
whose checkpoint tensors it never reads) and KV caches for its own layers only.

A step travels down the pipeline instead of being broadcast to every rank: the driver
(global rank 0, stage 0) gives its StepInput to its stage's tensor-parallel peers, runs its
layers, and sends the StepInput and the hidden states to stage 1 (`send_to_next_stage`);
stage s receives both from stage s-1 (`receive_from_previous_stage`), applies the step's
block moves to its KV shard, runs its layers and passes them on; the last stage sends the
logits (and every stage's busy time) back to the driver. Every stage handles steps in the
order they were launched, so a step's block moves and KV writes on a stage always follow
every earlier step's on that stage.

That order is what lets several steps be in flight (vLLM's batch queue / virtual engines,
SGLang's PP micro-batches): the driver launches step t (`DistributedExecutor._launch`) and,
while stage 1 still works on t, schedules step t+1 over requests not in flight and runs its
stage 0 layers (batch_queue.py owns that loop). With P stages up to P steps are in flight.

In this engine's decoder layer the residual is already added back into the hidden states
(no fused add-norm carrying a separate residual, as vLLM has), so one tensor crosses each
stage boundary. The embedding, final norm and LM head are kept on every stage (small; a
tied LM head needs the embedding anyway).

`StageTimes` measures each stage's busy time and the wall time during which a step was in
flight; the bubble fraction is the share of stage-time spent idle:
1 - sum(busy) / (stages * wall).
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import nn

from reference_engine.distributed.context_parallel import gather_logits, with_shard

if TYPE_CHECKING:
    from reference_engine.distributed.parallel_state import ParallelState
    from reference_engine.forward_batch import ForwardBatch
    from reference_engine.model_runner import ModelRunner


def layer_range(num_layers: int, stage: int, num_stages: int) -> tuple[int, int]:
    """Layers [start, end) of `stage` (ParallelConfig checks the division is exact)."""
    per = num_layers // num_stages
    return stage * per, (stage + 1) * per


class PPMissingLayer(nn.Module):
    """A decoder layer another stage holds: no weights, never called."""

    def forward(self, *args: object) -> torch.Tensor:
        raise RuntimeError("this layer lives on another pipeline stage")


@dataclass(slots=True)
class StageTimes:
    """Busy seconds of every stage and wall seconds with a step in flight; kept by the
    driver (DistributedExecutor)."""

    busy_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    steps: int = 0

    @property
    def bubble_fraction(self) -> float:
        if not self.busy_s or self.wall_s == 0:
            return 0.0
        return max(0.0, 1.0 - sum(self.busy_s) / (len(self.busy_s) * self.wall_s))

    def add(self, busy: list[float]) -> None:
        self.busy_s = [a + b for a, b in zip(self.busy_s or [0.0] * len(busy), busy, strict=True)]
        self.steps += 1


def logits_dtype(runner: ModelRunner) -> torch.dtype:
    return torch.promote_types(runner.dtype, torch.float32)


def stage_batch(runner: ModelRunner, batch: ForwardBatch) -> ForwardBatch:
    """The step's batch as this rank runs it: with context parallelism inside the stage,
    carrying the rank's shard of the tokens (context_parallel.py)."""
    return with_shard(batch, runner.parallel.cp, runner.device)


def run_stage(
    runner: ModelRunner, batch: ForwardBatch, hidden: torch.Tensor | None
) -> tuple[torch.Tensor, float]:
    """This stage's layers over one step (`stage_batch`) -> (hidden states for the next
    stage, or logits on the last one; busy seconds)."""
    start = time.perf_counter()
    with torch.inference_mode():
        model = runner.model
        ids, positions, logits_rows = batch.input_ids, batch.positions, batch.logits_indices
        shard = batch.context_parallel
        if shard is not None:  # this CP rank's tokens only
            ids, positions, logits_rows = ids[shard.rows], positions[shard.rows], shard.logits_local
        out = model.model(ids, positions, runner.kv_caches, batch, hidden)
        if model.model.is_last_stage:
            out = model.compute_logits(out[logits_rows]).to(logits_dtype(runner))
            if shard is not None:
                out = gather_logits(runner.parallel.cp, out, shard)
    return out.contiguous(), time.perf_counter() - start


def _neighbour(parallel: ParallelState, offset: int) -> int:
    pp = parallel.pp
    return pp.ranks[pp.rank + offset]


def send_to_next_stage(
    parallel: ParallelState, control: Any, step: object, hidden: torch.Tensor | None
) -> list[Any]:
    """Start sending a step (pickled: its length, then its bytes, on the long-timeout
    control group) and its hidden states (on the compute group) to the next stage; returns
    the pending works, whose tensors they keep alive."""
    dst = _neighbour(parallel, 1)
    data = pickle.dumps(step)
    size = torch.tensor([len(data)], dtype=torch.int64)
    payload = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    works = [
        (dist.isend(size, dst, group=control), size),
        (dist.isend(payload, dst, group=control), payload),
    ]
    if hidden is not None:
        works.append((dist.isend(hidden, dst, group=parallel.pp.group), hidden))
    return works


def receive_from_previous_stage(parallel: ParallelState, control: Any) -> Any:
    """The next step from the previous stage (waits as long as the engine idles)."""
    src = _neighbour(parallel, -1)
    size = torch.zeros(1, dtype=torch.int64)
    dist.recv(size, src, group=control)
    payload = torch.empty(int(size.item()), dtype=torch.uint8)
    dist.recv(payload, src, group=control)
    return pickle.loads(payload.numpy().tobytes())


def receive_hidden(runner: ModelRunner, batch: ForwardBatch) -> torch.Tensor:
    shard = batch.context_parallel
    rows = batch.num_tokens if shard is None else len(shard.rows)
    hidden = torch.empty(rows, runner.model_config.hidden_size, dtype=runner.dtype)
    dist.recv(hidden, _neighbour(runner.parallel, -1), group=runner.parallel.pp.group)
    return hidden


def send_logits(runner: ModelRunner, logits: torch.Tensor, busy_s: list[float]) -> None:
    """Last stage -> driver: the step's logits, then every stage's busy seconds."""
    group = runner.parallel.pp.group
    dist.send(logits, 0, group=group)
    dist.send(torch.tensor(busy_s, dtype=torch.float64), 0, group=group)


def post_logits_receive(runner: ModelRunner, batch: ForwardBatch) -> list[Any]:
    """Driver: receive buffers for a launched step's logits and busy times, posted at once
    (messages from one rank on one group match receives in the order posted)."""
    group, last = runner.parallel.pp.group, runner.parallel.pp.ranks[-1]
    logits = torch.empty(
        len(batch.logits_indices), runner.model_config.vocab_size, dtype=logits_dtype(runner)
    )
    busy = torch.empty(runner.parallel.pp.world_size, dtype=torch.float64)
    return [
        (dist.irecv(logits, last, group=group), logits),
        (dist.irecv(busy, last, group=group), busy),
    ]
