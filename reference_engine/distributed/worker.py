"""A rank's process: join the group, load this rank's shard, then run every step the driver
broadcasts until it says stop (vLLM's Worker / WorkerProc; SGLang's TpModelWorker).

What a rank owns: its slice of the weights and its slice of every KV block (the KV heads its
attention heads read, under the *same* block ids on every rank). What it does not own: block
tables, the block pool, the prefix cache, the queues, the sampler: those live on the driver,
which decides and broadcasts. A step reaches a rank as one `StepInput` (block moves and the
packed `ForwardBatch`), broadcast with torch.distributed (its length, then its pickled
bytes; with pipeline stages, sent on from the previous stage instead) on a control group
(the world group) whose timeout is long, since an idle engine sends nothing; the forward
pass's collectives run on the compute group, whose timeout is
`EngineConfig.distributed_timeout_s`.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from reference_engine.config import EngineConfig, ModelConfig
from reference_engine.distributed.context_parallel import run_context_parallel
from reference_engine.distributed.eplb import RebalanceReport, rebalance_experts
from reference_engine.distributed.parallel_state import GroupCoordinator, ParallelState
from reference_engine.distributed.pipeline_parallel import (
    receive_from_previous_stage,
    receive_hidden,
    run_stage,
    send_logits,
    send_to_next_stage,
    stage_batch,
)
from reference_engine.forward_batch import ForwardBatch
from reference_engine.model_runner import ModelRunner

# The control group waits for the next step as long as the engine stays idle.
CONTROL_TIMEOUT = timedelta(days=7)


@dataclass(slots=True)
class StepInput:
    """One step for every rank, made by the driver (DistributedExecutor)."""

    # (source block, destination block) pairs; lists, since the driver appends moves to them
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_copy: list[tuple[int, int]] = field(default_factory=list)
    batch: ForwardBatch | None = None  # None: block moves only
    stop: bool = False
    # EPLB: re-plan expert placements with this many redundant slots per layer (eplb.py)
    rebalance_experts: int | None = None
    # Pipeline parallelism: each stage's compute seconds, appended as the step travels
    stage_busy_s: list[float] = field(default_factory=list)


@dataclass(slots=True)
class Groups:
    """The torch.distributed groups of one rank, made once by `init_groups`."""

    state: ParallelState
    # Long-timeout group: the world, for StepInput broadcasts and (pipeline parallelism)
    # stage-to-stage StepInputs
    control: Any
    # Pipeline parallelism: stage 0's ranks, to which the driver broadcasts a step (None
    # without PP, or when stage 0 is the driver alone)
    stage0_control: Any = None


def backend_for(cfg: EngineConfig) -> str:
    if cfg.distributed_backend != "auto":
        return cfg.distributed_backend
    return "nccl" if cfg.resolved_device() == "cuda" else "gloo"


def init_groups(cfg: EngineConfig, rank: int, rendezvous: Rendezvous) -> Groups:
    """Join the world (this rank of cfg.world_size) and build the groups every rank makes in
    the same order (torch.distributed requires all ranks to create each group together).
    The world group, with its long timeout, carries StepInputs; the compute group, with
    `distributed_timeout_s`, carries the forward pass's collectives."""
    world = cfg.world_size
    if backend_for(cfg) == "nccl":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    if rendezvous.store is None:  # torchrun: MASTER_ADDR / MASTER_PORT from the environment
        dist.init_process_group(
            backend_for(cfg), init_method="env://", rank=rank, world_size=world,
            timeout=CONTROL_TIMEOUT,
        )  # fmt: skip
    else:
        dist.init_process_group(
            backend_for(cfg), store=rendezvous.store, rank=rank, world_size=world,
            timeout=CONTROL_TIMEOUT,
        )  # fmt: skip
    timeout = timedelta(seconds=cfg.distributed_timeout_s)
    compute = dist.new_group(list(range(world)), timeout=timeout)
    # Rank = stage * width + index within the stage; index = cp_rank * tp + tp_rank, so a
    # stage's ranks with the same cp_rank are a TP (or EP) group and those with the same
    # tp_rank a CP group (they hold the same heads and stripe the tokens).
    stages, cp_size = cfg.pipeline_parallel_size, cfg.context_parallel_size
    width = world // stages
    tp_size = width // cp_size
    stage, index = divmod(rank, width)
    cp_rank, tp_rank = divmod(index, tp_size)

    def groups_of(members: list[list[int]]) -> list[Any]:
        return [dist.new_group(m, timeout=timeout) if len(m) > 1 else None for m in members]

    tp_members = [
        [s * width + c * tp_size + t for t in range(tp_size)]
        for s in range(stages)
        for c in range(cp_size)
    ]
    cp_members = [
        [s * width + c * tp_size + t for c in range(cp_size)]
        for s in range(stages)
        for t in range(tp_size)
    ]
    tp_groups, cp_groups = groups_of(tp_members), groups_of(cp_members)
    mine_at = stage * cp_size + cp_rank
    mine = GroupCoordinator(tp_rank, tp_size, tp_groups[mine_at], tuple(tp_members[mine_at]))
    cp_at = stage * tp_size + tp_rank
    single = GroupCoordinator()
    tp = mine if cfg.tensor_parallel_size > 1 else single
    ep = mine if cfg.expert_parallel_size > 1 else single
    cp = (
        GroupCoordinator(cp_rank, cp_size, cp_groups[cp_at], tuple(cp_members[cp_at]))
        if cp_size > 1
        else single
    )
    pp = GroupCoordinator(stage, stages, compute, tuple(s * width + index for s in range(stages)))
    stage0 = (
        dist.new_group(list(range(width)), timeout=CONTROL_TIMEOUT)
        if stages > 1 and width > 1
        else None
    )
    return Groups(ParallelState(tp=tp, ep=ep, pp=pp, cp=cp), dist.group.WORLD, stage0)


@dataclass(slots=True)
class Rendezvous:
    """Where ranks meet: the driver's TCPStore (spawned ranks), or None for torchrun's
    environment. The driver waits on the store's `arrived` counter while watching its
    workers, so a worker that dies while starting is reported at once."""

    host: str = "127.0.0.1"
    port: int = 0
    store: Any = None

    def connect(self, world: int, is_driver: bool, timeout_s: float) -> Rendezvous:
        store = dist.TCPStore(
            self.host, self.port, world, is_master=is_driver,
            timeout=timedelta(seconds=timeout_s), wait_for_workers=False,
        )  # fmt: skip
        if not is_driver:
            store.add("arrived", 1)
        return Rendezvous(self.host, self.port, store)

    def for_workers(self) -> Rendezvous:
        return Rendezvous(self.host, self.port, None)


def receive_step(groups: Groups, group: Any = None) -> StepInput:
    """Wait (as long as the engine idles) for the driver's next StepInput, broadcast on
    `group` (the control group by default)."""
    group = groups.control if group is None else group
    size = torch.zeros(1, dtype=torch.int64)
    dist.broadcast(size, src=0, group=group)
    payload = torch.empty(int(size.item()), dtype=torch.uint8)
    dist.broadcast(payload, src=0, group=group)
    return pickle.loads(payload.numpy().tobytes())


def send_step(groups: Groups, step: StepInput, group: Any = None) -> list[Any]:
    """Start broadcasting `step` from the driver: what broadcast_object_list does (a length,
    then the pickled bytes), but asynchronous, so the driver can watch its workers and the
    clock meanwhile (DistributedExecutor._wait). Returns the pending works."""
    group = groups.control if group is None else group
    data = pickle.dumps(step)
    size = torch.tensor([len(data)], dtype=torch.int64)
    payload = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    return [
        dist.broadcast(size, src=0, group=group, async_op=True),
        dist.broadcast(payload, src=0, group=group, async_op=True),
    ]


@dataclass(slots=True)
class RankStepResult:
    """What one rank's step produced (made by `run_step`)."""

    logits: torch.Tensor | None = None  # on the driver
    rebalance: RebalanceReport | None = None  # EPLB: what this rank's re-plan did


def apply_moves(runner: ModelRunner, step: StepInput) -> RankStepResult:
    """Block moves on this rank's KV shard (and an EPLB re-plan), before any forward."""
    runner.swap_out(step.blocks_to_swap_out)
    runner.swap_in(step.blocks_to_swap_in)
    runner.copy_blocks(step.blocks_to_copy)
    result = RankStepResult()
    if step.rebalance_experts is not None:
        result.rebalance = rebalance_experts(
            runner.model, step.rebalance_experts, runner.model_config.model_dir
        )
    return result


def run_step(runner: ModelRunner, step: StepInput) -> RankStepResult:
    """The same on every rank without pipeline stages: block moves, then the forward pass
    (whose collectives meet the other ranks')."""
    result = apply_moves(runner, step)
    if step.batch is None:
        return result
    if runner.parallel.cp.world_size > 1:
        result.logits = run_context_parallel(runner, step.batch)
    else:
        result.logits = runner.execute_model(step.batch)
    return result


def pipeline_stage_loop(runner: ModelRunner, groups: Groups) -> None:
    """A rank of a pipeline stage: take each step from the driver (stage 0) or the previous
    stage, run it, pass it on (pipeline_parallel.py), until a stop has gone through."""
    par = runner.parallel
    stage, last = par.pp.rank, par.pp.world_size - 1
    pending: list[Any] = []
    while True:
        if stage == 0:
            step = receive_step(groups, groups.stage0_control)
        else:
            step = receive_from_previous_stage(par, groups.control)
        hidden = None
        batch = stage_batch(runner, step.batch) if step.batch is not None else None
        if batch is not None and stage > 0:
            hidden = receive_hidden(runner, batch)
        apply_moves(runner, step)
        if batch is not None:
            hidden, busy = run_stage(runner, batch, hidden)
            step.stage_busy_s.append(busy)
        for work, _ in pending:  # the previous step's sends: the next stage took them
            work.wait()
        pending = []
        if stage < last:
            pending = send_to_next_stage(par, groups.control, step, hidden)
        elif hidden is not None and par.tp.rank == 0 and par.cp.rank == 0:  # ran a batch
            send_logits(runner, hidden, step.stage_busy_s)
        if step.stop:
            for work, _ in pending:
                work.wait()
            return


def _exit_with_parent(parent_pid: int) -> None:
    """A worker must not outlive its driver (killed, or stuck before its next broadcast)."""

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(3)
            time.sleep(0.5)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def worker_main(
    rank: int,
    model_config: ModelConfig,
    engine_config: EngineConfig,
    rendezvous: Rendezvous | None,
    parent_pid: int | None = None,
) -> None:
    """Entry point of ranks 1..N-1: spawned by the driver (`rendezvous` names its store), or
    started by torchrun (`rendezvous` None)."""
    if parent_pid is not None:
        _exit_with_parent(parent_pid)
    world = engine_config.world_size
    met = (
        rendezvous.connect(world, False, engine_config.distributed_timeout_s)
        if rendezvous is not None
        else Rendezvous()
    )
    groups = init_groups(engine_config, rank, met)
    runner = ModelRunner(model_config, engine_config, groups.state)
    dist.barrier(group=groups.control)  # every shard is loaded: the driver may start
    try:
        if runner.parallel.pp.world_size > 1:
            pipeline_stage_loop(runner, groups)
            return
        while True:
            step = receive_step(groups)
            if step.stop:
                break
            run_step(runner, step)
    finally:
        dist.destroy_process_group()
