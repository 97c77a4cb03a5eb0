"""Run one model over several processes: the driver's side (vLLM's MultiprocExecutor).

Who owns what:
- the driver (this process, rank 0) owns every decision: the Engine, its Scheduler and
  KVCacheManager (block tables, the block pool, the prefix cache), the Sampler and the
  requests. It is also a rank like the others: it holds shard 0 of the weights and of the KV
  cache and runs its part of each forward pass.
- ranks 1..N-1 (worker.py) own only their weight shard and their KV shard, indexed by the
  same block ids, so one block table on the driver addresses every rank's cache.

How a step reaches the ranks: the engine calls swap_out / swap_in / copy_blocks and then
execute_model, exactly as it calls a ModelRunner. The executor collects the block moves and
broadcasts them with the ForwardBatch as one `StepInput` (torch.distributed broadcasts of
its pickled bytes, worker.send_step); every rank then runs the same forward pass, whose collectives
(all-reduce after row-parallel layers, all-gather of vocabulary-parallel logits, all-to-all
of expert-parallel tokens, the ring and all-gathers of context parallelism) meet inside the
model. The driver returns the gathered logits to the engine, which samples.
With pipeline stages a step is not broadcast to every rank but passed from stage to stage
(pipeline_parallel.py); `execute_model_async` launches one and returns before the later
stages finish, so the engine's BatchQueue keeps one step per stage in flight.

Launch: `spawn` (the default) starts ranks 1..N-1 with torch.multiprocessing on this host;
spawned processes re-import the main module, so a script that builds a multi-rank LLM needs
the `if __name__ == "__main__":` guard (as with vLLM).
Under torchrun (RANK / WORLD_SIZE / MASTER_ADDR set, possibly across machines) every rank
runs the same script: rank 0 becomes the driver and the others serve it inside
`create_runner` and exit when the driver shuts down.

Failure: before each step the driver checks its workers are alive; a dead one, a failed or
timed-out collective (EngineConfig.distributed_timeout_s) stops every worker and raises
`WorkerError`. Workers exit when their driver disappears (worker._exit_with_parent).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, NoReturn

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from reference_engine.config import EngineConfig, ModelConfig
from reference_engine.distributed.eplb import RebalanceReport
from reference_engine.distributed.parallel_config import verify_model
from reference_engine.distributed.pipeline_parallel import (
    StageTimes,
    post_logits_receive,
    run_stage,
    send_to_next_stage,
    stage_batch,
)
from reference_engine.distributed.worker import (
    Groups,
    RankStepResult,
    Rendezvous,
    StepInput,
    apply_moves,
    init_groups,
    run_step,
    send_step,
    worker_main,
)
from reference_engine.forward_batch import ForwardBatch
from reference_engine.model_runner import BlockMapping, ModelRunner

STARTUP_TIMEOUT_S = 600.0


class WorkerError(RuntimeError):
    """A rank died, hung or failed: the engine has stopped every rank and cannot continue."""


def create_runner(model_config: ModelConfig, engine_config: EngineConfig) -> Any:
    """A ModelRunner for one process; a DistributedExecutor when the layout needs ranks."""
    if engine_config.world_size == 1:
        return ModelRunner(model_config, engine_config)
    verify_model(model_config, engine_config)
    env_rank = _torchrun_rank(engine_config)
    if env_rank is not None and env_rank > 0:
        worker_main(env_rank, model_config, engine_config, None)
        sys.exit(0)  # torchrun rank > 0: served the driver until it shut down
    return DistributedExecutor(model_config, engine_config, torchrun=env_rank is not None)


def _torchrun_rank(cfg: EngineConfig) -> int | None:
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    world = int(os.environ["WORLD_SIZE"])
    if world != cfg.world_size:
        from reference_engine.config import ConfigError

        raise ConfigError(
            f"torchrun started {world} processes but the engine's layout needs "
            f"{cfg.world_size} (tp x pp x cp)"
        )
    return int(os.environ["RANK"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(slots=True)
class PipelineStep:
    """A step launched down the pipeline and not yet collected (made by
    `DistributedExecutor.execute_model_async`, collected in launch order with `result`)."""

    executor: DistributedExecutor
    sends: list[Any]  # (work, tensor) pairs still in flight to stage 1
    recvs: list[Any]  # (work, tensor): the logits and busy times from the last stage
    result_rebalance: RebalanceReport | None = None

    def result(self) -> torch.Tensor:
        return self.executor._collect(self)


class DistributedExecutor:
    """Rank 0 of a multi-process model, with ModelRunner's interface for the Engine."""

    def __init__(
        self, model_config: ModelConfig, engine_config: EngineConfig, torchrun: bool = False
    ) -> None:
        self.engine_config = engine_config
        self.timeout_s = engine_config.distributed_timeout_s
        self.procs: list[Any] = []
        self._pending = StepInput()
        self._closed = False
        # Pipeline parallelism: busy time of every stage and wall time with a step in flight
        # (bubble fraction); the launched steps not collected yet, oldest first.
        self.stage_times = StageTimes()
        self._in_flight: deque[PipelineStep] = deque()
        self._busy_since = 0.0
        world = engine_config.world_size
        try:
            if torchrun:
                met = Rendezvous()
            else:
                met = Rendezvous(port=_free_port()).connect(world, True, self.timeout_s)
                ctx = mp.get_context("spawn")
                for rank in range(1, world):
                    proc = ctx.Process(
                        target=worker_main,
                        args=(rank, model_config, engine_config, met.for_workers(), os.getpid()),
                        name=f"atlas-rank-{rank}",
                        daemon=True,
                    )
                    proc.start()
                    self.procs.append(proc)
                self._wait_arrivals(met.store, world - 1)
            self.groups: Groups = init_groups(engine_config, 0, met)
            self.runner = ModelRunner(model_config, engine_config, self.groups.state)
            # Loading is slower than a step: bounded by the larger of the step timeout and
            # STARTUP_TIMEOUT_S, while dead workers are noticed at once.
            loaded = dist.barrier(group=self.groups.control, async_op=True)
            self._wait(loaded, "loading", max(self.timeout_s, STARTUP_TIMEOUT_S))
        except BaseException as exc:
            self.shutdown(graceful=False)
            if isinstance(exc, WorkerError):
                raise
            raise WorkerError(f"distributed start failed: {exc}") from exc

    # ------------------------------------------------------------------ ModelRunner's face

    @property
    def device(self) -> torch.device:
        return self.runner.device

    @property
    def num_blocks(self) -> int:
        return self.runner.num_blocks

    @property
    def max_model_len(self) -> int:
        return self.runner.max_model_len

    @property
    def model(self) -> torch.nn.Module:
        """Rank 0's shard."""
        return self.runner.model

    # Block moves ride with the next step; moves of a step that ran nothing (it only
    # preempted) wait for the next one, in order, before its own.
    def swap_out(self, mapping: BlockMapping) -> None:
        self._pending.blocks_to_swap_out.extend(mapping)

    def swap_in(self, mapping: BlockMapping) -> None:
        self._pending.blocks_to_swap_in.extend(mapping)

    def copy_blocks(self, mapping: BlockMapping) -> None:
        self._pending.blocks_to_copy.extend(mapping)

    def execute_model(self, batch: ForwardBatch) -> torch.Tensor:
        step, self._pending = self._pending, StepInput()
        step.batch = batch.to("cpu") if batch.input_ids.device.type != "cpu" else batch
        logits = self._broadcast_and_run(step).logits
        assert logits is not None
        return logits

    @property
    def max_concurrent_batches(self) -> int:
        """Steps the engine may keep in flight (vLLM's name): one per pipeline stage."""
        return self.runner.parallel.pp.world_size

    def execute_model_async(self, batch: ForwardBatch) -> PipelineStep:
        """Pipeline parallelism: run stage 0 of a step, send it down the pipeline and return
        at once; `result()` waits for its logits. Steps are collected in launch order."""
        step, self._pending = self._pending, StepInput()
        step.batch = batch.to("cpu") if batch.input_ids.device.type != "cpu" else batch
        return self._launch(step)

    def rebalance_experts(self, num_redundant: int) -> RebalanceReport:
        """EPLB on request: every rank re-plans its expert placement from the load measured
        so far (distributed/eplb.py); call it between steps."""
        report = self._broadcast_and_run(StepInput(rebalance_experts=num_redundant)).rebalance
        assert report is not None
        return report

    # ------------------------------------------------------------------ the step

    def _broadcast_and_run(self, step: StepInput) -> RankStepResult:
        if self.runner.parallel.pp.world_size > 1:  # down the pipeline, then wait for it
            launched = self._launch(step)
            logits = self._collect(launched) if step.batch is not None else None
            return RankStepResult(logits=logits, rebalance=launched.result_rebalance)
        if self._closed:
            raise WorkerError("the distributed engine was shut down")
        self._check_workers()
        try:
            for work in send_step(self.groups, step):
                self._wait(work, "receiving a step")
            return run_step(self.runner, step)
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> NoReturn:
        dead = self._dead_workers()
        self.shutdown(graceful=False)
        why = f"{dead}" if dead else f"a collective failed: {exc}"
        raise WorkerError(f"distributed step failed, every rank stopped ({why})") from exc

    def _launch(self, step: StepInput) -> PipelineStep:
        """Stage 0's part of a step (pipeline_parallel.py): stage-0 peers get the step,
        the driver runs its layers and sends step and hidden states to stage 1."""
        if self._closed:
            raise WorkerError("the distributed engine was shut down")
        self._check_workers()
        try:
            if self.groups.stage0_control is not None:
                for work in send_step(self.groups, step, self.groups.stage0_control):
                    self._wait(work, "receiving a step")
            if not self._in_flight:
                self._busy_since = time.perf_counter()
            rebalance = apply_moves(self.runner, step).rebalance
            hidden, recvs = None, []
            if step.batch is not None:
                recvs = post_logits_receive(self.runner, step.batch)
                hidden, busy = run_stage(self.runner, stage_batch(self.runner, step.batch), None)
                step.stage_busy_s.append(busy)
            sends = send_to_next_stage(self.runner.parallel, self.groups.control, step, hidden)
            launched = PipelineStep(self, sends, recvs, rebalance)
            if step.batch is None:  # nothing comes back: done once stage 1 has it
                self._wait_p2p([work for work, _ in sends], "passing a step on")
            else:
                self._in_flight.append(launched)
            return launched
        except Exception as exc:
            self._fail(exc)

    def _collect(self, launched: PipelineStep) -> torch.Tensor:
        """Wait for a launched step's logits (steps are collected in launch order)."""
        if not self._in_flight or self._in_flight[0] is not launched:
            raise RuntimeError("pipeline steps must be collected in the order they were launched")
        try:
            self._wait_p2p([work for work, _ in launched.recvs + launched.sends], "a pipeline step")
        except Exception as exc:
            self._fail(exc)
        self._in_flight.popleft()
        (_, logits), (_, busy) = launched.recvs
        self.stage_times.add(busy.tolist())
        if not self._in_flight:
            self.stage_times.wall_s += time.perf_counter() - self._busy_since
        return logits

    def _dead_workers(self) -> str:
        dead = [p for p in self.procs if not p.is_alive()]
        return ", ".join(f"{p.name} (pid {p.pid}) exited with code {p.exitcode}" for p in dead)

    def _check_workers(self) -> None:
        dead = self._dead_workers()
        if dead:
            self.shutdown(graceful=False)
            raise WorkerError(f"a worker died, every rank stopped: {dead}")

    def _wait_arrivals(self, store: Any, count: int) -> None:
        """Wait until every spawned worker reached the store (imports take seconds),
        watching for one that died on the way; startup is not bounded by the step timeout."""
        while store.add("arrived", 0) < count:
            self._check_workers()
            time.sleep(0.05)

    def _wait(self, work: Any, what: str, timeout_s: float | None = None) -> None:
        """Wait for an async collective while watching the workers and the clock."""
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout_s
        sentinels = [p.sentinel for p in self.procs]
        while not work.is_completed():
            if sentinels and wait(sentinels, timeout=0.02):
                self._check_workers()
            elif not sentinels:
                time.sleep(0.02)
            if time.monotonic() > deadline:
                raise WorkerError(f"ranks did not finish {what} within {timeout_s:.0f} s")
        work.wait()

    def _wait_p2p(self, works: list[Any], what: str) -> None:
        """`_wait` for point-to-point works: gloo marks one completed only inside wait(),
        and a wait with a timeout that expires closes the connections, so a helper thread
        waits for them in turn while this one watches the workers and the clock."""
        done, failed = threading.Event(), []

        def run() -> None:
            try:
                for work in works:
                    work.wait()
            except Exception as exc:  # the peer died or the group timed out
                failed.append(exc)
            finally:
                done.set()

        threading.Thread(target=run, name="atlas-p2p-wait", daemon=True).start()
        deadline = time.monotonic() + self.timeout_s
        sentinels = [p.sentinel for p in self.procs]
        while not done.wait(0.005):  # a short poll: the step's latency is the pipeline's
            if sentinels and wait(sentinels, timeout=0):
                self._check_workers()
            if time.monotonic() > deadline:
                raise WorkerError(f"ranks did not finish {what} within {self.timeout_s:.0f} s")
        if failed:
            raise failed[0]

    # ------------------------------------------------------------------ shutdown

    def shutdown(self, graceful: bool = True) -> None:
        """Stop every worker (asking first when `graceful`), then leave the group."""
        if self._closed:
            return
        if graceful and hasattr(self, "groups") and not self._dead_workers():
            try:
                while self._in_flight:  # steps never collected: let them drain first
                    self._collect(self._in_flight[0])
                if self.runner.parallel.pp.world_size > 1:
                    self._launch(StepInput(stop=True))
                else:
                    for work in send_step(self.groups, StepInput(stop=True)):
                        self._wait(work, "stopping")
            except Exception:  # a worker died meanwhile: terminate below
                graceful = False
        self._closed = True
        for p in self.procs:
            p.join(timeout=10 if graceful else 0)
            if p.is_alive():
                p.kill()
                p.join(timeout=10)
        if dist.is_initialized():
            with contextlib.suppress(Exception):  # a broken group still has to be forgotten
                dist.destroy_process_group()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.shutdown(graceful=False)
