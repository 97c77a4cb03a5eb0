"""Elastic expert parallelism: a rank lost (or one added) re-forms the expert-parallel group
at another size, experts re-placed over the ranks that remain, and serving goes on.

When a worker dies the driver notices it at the next step (executor.py: a dead process or
a failed collective), stops every rank and raises WorkerError; without elasticity the engine
is over. `ElasticExpertParallel` wraps one Engine (it is the only code that swaps the
engine's runner) and instead:

1. picks the new size: the largest expert-parallel size below the old one that the model's
   experts divide evenly (8 experts on 4 ranks that lose one: 2 ranks, 4 experts each);
2. starts a new group of that size. Every rank, the driver's own shard included, reads from
   the checkpoint only the experts its slot range of the new contiguous placement holds,
   so the lost rank's experts now live on the others (the loader's `checkpoint_shards`);
3. requeues every request with its tokens (recompute preemption: the KV of the old group is
   gone) and empties the prefix cache, whose blocks indexed that KV.

Requests keep their tokens and their place in the queue, so their outputs are those of an
engine started at the new size (tests/engine/test_dist_elastic_ep.py). `scale_to(n)` does
steps 2-3 on request, for a rank added (or removed on purpose). The group is re-formed with
fresh worker processes: gloo cannot shrink a process group in place, so surviving workers
are restarted too and reload their experts from the checkpoint (SGLang's elastic EP keeps
survivors and moves expert weights between them; vLLM's scales its data-parallel ranks).
Elasticity here covers expert parallelism with tensor_parallel_size=1 (each rank runs the
whole attention, as with SGLang's data-parallel attention), without pipeline or context
parallelism, async scheduling or KV tiers.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reference_engine.config import ConfigError
from reference_engine.distributed.executor import WorkerError, create_runner
from reference_engine.engine import Engine
from reference_engine.outputs import RequestOutput


@dataclass(frozen=True, slots=True)
class ElasticEvent:
    old_size: int
    new_size: int
    reason: str
    requests_requeued: int
    seconds: float  # to re-form the group and load the experts


@dataclass(slots=True)
class ElasticExpertParallel:
    """Owner of `engine.runner` for an expert-parallel engine that may change size."""

    engine: Engine
    events: list[ElasticEvent] = field(default_factory=list)
    # The engine's own step, kept before `install` replaces the instance's.
    _plain_step: Callable[[], list[RequestOutput]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._plain_step = self.engine.step
        cfg = self.engine.config
        if cfg.expert_parallel_size < 2 or cfg.tensor_parallel_size != 1:
            raise ConfigError(
                "elastic expert parallelism needs expert_parallel_size > 1 with "
                "tensor_parallel_size 1 (each rank runs the whole attention)"
            )
        if cfg.pipeline_parallel_size > 1 or cfg.context_parallel_size > 1:
            raise ConfigError("elastic expert parallelism does not combine with pp or cp")
        if self.engine.overlap is not None or self.engine.kv_tiers is not None:
            raise ConfigError("elastic expert parallelism does not combine with async "
                              "scheduling or KV tiers")  # fmt: skip

    @property
    def size(self) -> int:
        return self.engine.config.expert_parallel_size

    def valid_sizes(self) -> list[int]:
        experts = self.engine.model_config.num_experts or 0
        return [n for n in range(1, experts + 1) if experts % n == 0]

    def install(self) -> ElasticExpertParallel:
        """Make `engine.step()` itself elastic (on the instance), so whatever drives the
        engine (the server's engine thread, LLM.generate) survives a lost rank unchanged."""
        self.engine.step = self.step  # type: ignore[method-assign]
        return self

    def step(self) -> list[RequestOutput]:
        """One engine step; a lost rank shrinks the group and the requests go on."""
        try:
            return self._plain_step()
        except WorkerError as exc:
            smaller = [n for n in self.valid_sizes() if n < self.size]
            if not smaller:
                raise
            self._reform(max(smaller), f"rank lost: {exc}")
            return []

    def scale_to(self, size: int) -> ElasticEvent:
        """Re-form the group at `size` ranks (a rank added, or removed on purpose); call it
        between steps."""
        if size not in self.valid_sizes():
            raise ConfigError(
                f"expert_parallel_size {size} does not divide the model's "
                f"{self.engine.model_config.num_experts} experts; valid: {self.valid_sizes()}"
            )
        return self._reform(size, "requested")

    def _reform(self, size: int, reason: str) -> ElasticEvent:
        start = time.perf_counter()
        engine = self.engine
        old = self.size
        shutdown = getattr(engine.runner, "shutdown", None)
        if shutdown is not None:
            shutdown()  # a no-op when a failure already stopped every rank
        # A step that failed mid-way left its copy-on-write sources referenced.
        engine.kv.copies_done()
        requeued = len(engine.scheduler.recompute_all())
        engine.kv.cache.clear()  # its blocks indexed KV that left with the old group
        config = dataclasses.replace(engine.config, expert_parallel_size=size)
        runner = create_runner(engine.model_config, config)
        if runner.num_blocks != engine.kv.num_blocks:  # same config, so never: but say so
            raise WorkerError(
                f"the re-formed group holds {runner.num_blocks} KV blocks, the engine "
                f"manages {engine.kv.num_blocks}"
            )
        engine.runner, engine.config = runner, config
        engine.check_integrity()
        event = ElasticEvent(old, size, reason, requeued, time.perf_counter() - start)
        self.events.append(event)
        return event
