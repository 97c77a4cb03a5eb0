"""Elastic expert parallelism (distributed/elastic_ep.py) on gloo: a Qwen3-MoE engine on 4
expert-parallel ranks loses one (its process killed mid-workload), re-forms on 2 ranks with
the experts re-placed from the checkpoint, and finishes every request with the tokens one
process generates; then a rank is added back (4 ranks) and serving goes on the same way."""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
import torch.distributed as dist
from test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    make_engine,
)

from reference_engine.config import ConfigError
from reference_engine.distributed.elastic_ep import ElasticExpertParallel
from reference_engine.outputs import RequestOutput
from reference_engine.sampling_params import SamplingParams


def _workload(rng: random.Random, n: int) -> list[Req]:
    reqs = []
    for _ in range(n):
        prompt = [rng.randrange(3, 500) for _ in range(rng.randrange(3, 14))]
        if rng.random() < 0.5:
            params = SamplingParams(temperature=0.0, max_tokens=12, ignore_eos=True)
        else:
            params = SamplingParams(
                temperature=1.0, seed=rng.randrange(1000), max_tokens=12, ignore_eos=True
            )
        reqs.append(Req(prompt, params, 0))
    return reqs


def _run(
    elastic: ElasticExpertParallel, reqs: list[Req], kill_at: int | None = None
) -> dict[str, RequestOutput]:
    engine = elastic.engine
    for i, r in enumerate(reqs):
        engine.add_request(str(i), r.prompt, r.params)
    last: dict[str, RequestOutput] = {}
    step = 0
    while engine.has_unfinished_requests():
        if step == kill_at:
            victim = engine.runner.procs[-1]
            os.kill(victim.pid, signal.SIGKILL)
            victim.join(timeout=30)
        for out in elastic.step():
            last[out.request_id] = out
        engine.check_integrity()
        step += 1
        assert step < 500, "workload did not finish"
    return last


def test_elastic_needs_expert_parallelism(tiny_model_path: Path) -> None:
    engine = make_engine(tiny_model_path)
    with pytest.raises(ConfigError, match="expert_parallel_size > 1"):
        ElasticExpertParallel(engine)


@pytest.mark.slow
def test_rank_lost_then_added_tokens_equal_one_process(random_checkpoint: Any) -> None:
    model_dir = random_checkpoint("qwen3_moe")
    rng = random.Random("elastic-ep")
    first, second = _workload(rng, 6), _workload(rng, 4)
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        expert_parallel_size=4,
        distributed_timeout_s=60,
        max_num_batched_tokens=8,
        max_num_seqs=4,
        prefix_caching="hash",
    )
    try:
        elastic = ElasticExpertParallel(engine)
        assert engine.runner.model.model.layers[0].mlp.experts.local_experts == [0, 1]
        outputs = _run(elastic, first, kill_at=3)
        assert [(e.old_size, e.new_size) for e in elastic.events] == [(4, 2)]
        assert "rank lost" in elastic.events[0].reason and elastic.events[0].requests_requeued > 0
        # The driver's shard now holds the lost rank's share too: experts 0-3 of 8.
        assert engine.runner.model.model.layers[0].mlp.experts.local_experts == [0, 1, 2, 3]
        assert engine.config.expert_parallel_size == 2 and len(engine.runner.procs) == 1
        assert_tokens_equal_solo(outputs, first, solo, solo_cache)
        assert_pool_restored(engine)

        added = elastic.scale_to(4)  # a rank (two, to divide the experts) joins again
        assert (added.old_size, added.new_size, added.requests_requeued) == (2, 4, 0)
        assert_tokens_equal_solo(_run(elastic, second), second, solo, solo_cache)
        assert_pool_restored(engine)
        with pytest.raises(ConfigError, match="does not divide"):
            elastic.scale_to(3)
    finally:
        engine.shutdown()
    assert not dist.is_initialized()


@pytest.mark.slow
def test_served_engine_goes_on_after_a_rank_is_lost(random_checkpoint: Any) -> None:
    """Through the server's engine thread (AsyncEngine): EP=2 loses its worker while the
    streams are open; every stream still finishes with one process's tokens."""
    import asyncio

    from reference_engine.server.async_engine import AsyncEngine

    model_dir = random_checkpoint("qwen3_moe")
    reqs = _workload(random.Random("elastic-served"), 4)
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    engine = make_engine(
        model_dir, expert_parallel_size=2, distributed_timeout_s=60, max_num_batched_tokens=8
    )
    elastic = ElasticExpertParallel(engine).install()
    worker = engine.runner.procs[0]

    async def serve() -> dict[str, RequestOutput]:
        served = AsyncEngine(engine)
        served.start()
        try:
            streams = [
                await served.add_request(str(i), r.prompt, r.params) for i, r in enumerate(reqs)
            ]
            last = {"0": await streams[0].__anext__()}  # the engine is running them
            os.kill(worker.pid, signal.SIGKILL)
            for stream in streams:
                async for out in stream:
                    last[out.request_id] = out
            return last
        finally:
            await served.stop()

    try:
        outputs = asyncio.run(serve())
        assert [(e.old_size, e.new_size) for e in elastic.events] == [(2, 1)]
        assert all(out.finished for out in outputs.values())
        assert_tokens_equal_solo(outputs, reqs, solo, {})
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
