"""Overlap scheduling: step N+1 is scheduled and built while step N's forward runs, tokens
handled one step late. Outputs equal the plain engine's token for token on random
workloads with preemption, prefix caching, chunked prefill, stop tokens and stop strings
that end requests while a step is in flight, and aborts."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from reference_engine.config import ConfigError
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.structured_output import StructuredOutputsParams
from tests.engine.test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    solo_tokens,
    tight_engine,
)


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


@pytest.fixture(scope="module")
def solo_engine(model_dir: Path) -> Engine:
    return make_engine(model_dir, prefix_caching="none", max_num_seqs=8)


def with_stops(reqs: list[Req], solo: Engine, rng: random.Random, cache: dict[Any, Any]) -> None:
    """Give about half the requests a stop token or stop string taken from the middle of
    their own solo output, so they stop early, while the next step is in flight."""
    for r in reqs:
        if rng.random() < 0.5:
            continue
        tokens = solo_tokens(solo, r, cache)[0]
        if len(tokens) < 3:
            continue
        cut = rng.randrange(1, len(tokens) - 1)
        if rng.random() < 0.5:
            r.params = dataclasses.replace(r.params, stop_token_ids=[tokens[cut]])
        else:
            text = solo.tokenizer.decode(tokens[: cut + 1])
            if text.strip():
                r.params = dataclasses.replace(r.params, stop=[text[-2:]])


@pytest.mark.parametrize(
    ("cache", "preemption"), [("none", "recompute"), ("hash", "swap"), ("radix", "recompute")]
)
def test_overlapped_tokens_equal_plain(
    model_dir: Path, solo_engine: Engine, cache: str, preemption: str
) -> None:
    rng = random.Random(f"overlap-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = stopped = 0
    for _ in range(8):
        reqs = random_workload(rng)
        with_stops(reqs, solo_engine, rng, {})
        engine = tight_engine(model_dir, reqs, rng, cache, preemption, "fcfs", async_scheduling=True)
        outputs = drive(engine, reqs)
        assert_tokens_equal_solo(outputs, reqs, solo_engine, solo_cache)
        stopped += sum(
            c.finish_reason == "stop" for o in outputs.values() for c in o.outputs
        )
        preemptions += engine.stats().num_preemptions
        # Structural, not timed: on a loaded machine a forward can finish before the CPU
        # phase it overlaps does, so cpu_overlapped_s may legitimately stay 0.
        assert engine.overlap is not None and engine.overlap.stats.num_scheduled_in_flight > 0
        assert_pool_restored(engine)
    assert preemptions > 0 and stopped > 0


def test_abort_while_in_flight(model_dir: Path, solo_engine: Engine) -> None:
    engine = make_engine(model_dir, async_scheduling=True)
    params = SamplingParams(temperature=0.0, max_tokens=12, ignore_eos=True)
    for i in range(3):
        engine.add_request(str(i), [10 + i, 20, 30], params)
    outs: dict[str, Any] = {}
    for _ in range(4):
        for o in engine.step():
            outs[o.request_id] = o
    assert engine.overlap is not None and engine.overlap.inflight is not None
    assert engine.abort("1")  # its next row is already in the forward pass in flight
    while engine.has_unfinished_requests():
        for o in engine.step():
            outs[o.request_id] = o
    engine.overlap.drain()
    for i in ("0", "2"):
        expected = solo_tokens(solo_engine, Req([10 + int(i), 20, 30], params, 0), {})[0]
        assert outs[i].outputs[0].token_ids == expected
    partial = outs["1"].outputs[0].token_ids
    assert partial == solo_tokens(solo_engine, Req([11, 20, 30], params, 0), {})[0][: len(partial)]
    assert_pool_restored(engine)


def test_structured_output_with_overlap(model_dir: Path) -> None:
    params = SamplingParams(temperature=0.0, max_tokens=30,
                            structured_outputs=StructuredOutputsParams(regex="[a-k]{3,9}!"))  # fmt: skip
    results = []
    for overlap in (False, True):
        engine = make_engine(model_dir, async_scheduling=overlap)
        reqs = [Req([5, 6, i], params, 0) for i in range(3)]
        results.append([o.outputs[0].token_ids for o in sorted(drive(engine, reqs).values(),
                                                               key=lambda o: o.request_id)])  # fmt: skip
    assert results[0] == results[1]


def test_refused_with_speculation(model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="async scheduling"):
        make_engine(model_dir, async_scheduling=True, speculative_config={"method": "ngram"})
