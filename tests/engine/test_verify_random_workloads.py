"""Section 10: for many random workloads, every request's tokens equal generating it alone.

Workloads vary prompt and output lengths, arrival steps, shared prefixes,
n > 1, aborts, KV budgets tight enough to force preemption (recompute and
swap), per-step token budgets (chunked prefill) and both prefix caches. The
model is a tiny random float64 Qwen3 checkpoint, so argmax ties and batching
rounding cannot flip a token. After every workload the block pool is back to
its initial state once the prefix cache is emptied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.outputs import RequestOutput
from reference_engine.sampling_params import SamplingParams

BLOCK_SIZE = 4


@dataclass
class Req:
    prompt: list[int]
    params: SamplingParams
    arrival_step: int
    priority: int = 0
    abort_step: int | None = None


def make_engine(model_dir: Path, **kwargs: Any) -> Engine:
    cfg: dict[str, Any] = {"dtype": "float64", "block_size": BLOCK_SIZE, "num_gpu_blocks": 256}
    cfg.update(kwargs)
    return Engine(EngineConfig(model=str(model_dir), **cfg))


def drive(engine: Engine, reqs: list[Req]) -> dict[str, RequestOutput]:
    """Run a workload step by step; returns each request's last output."""
    last: dict[str, RequestOutput] = {}
    step = 0
    horizon = max(r.arrival_step for r in reqs)
    while step <= horizon or engine.has_unfinished_requests():
        for i, r in enumerate(reqs):
            if r.arrival_step == step:
                engine.add_request(str(i), r.prompt, r.params, priority=r.priority)
            if r.abort_step == step:
                engine.abort(str(i))
        for out in engine.step():
            last[out.request_id] = out
        engine.check_integrity()
        step += 1
        assert step < 3000, "workload did not finish"
    return last


def assert_pool_restored(engine: Engine) -> None:
    kv = engine.kv
    assert kv.is_idle_clean(), "a finished or aborted request still holds blocks"
    kv.check_integrity()  # only cache entries hold blocks now, each exactly once
    kv.cache.clear()
    assert kv.pool.num_free == kv.num_blocks
    kv.pool.check_integrity({})
    if kv.host_pool is not None:
        assert kv.host_pool.num_free == kv.host_pool.num_blocks


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


@pytest.fixture(scope="module")
def solo_engine(model_dir: Path) -> Engine:
    return make_engine(model_dir, prefix_caching="none", max_num_seqs=8)


def solo_tokens(engine: Engine, req: Req, cache: dict[Any, list[list[int]]]) -> list[list[int]]:
    """The request generated alone on an otherwise idle engine (one list per sample)."""
    p = req.params
    key = (
        tuple(req.prompt),
        p.n,
        p.temperature,
        p.top_k,
        p.top_p,
        p.seed,
        p.max_tokens,
        p.kv_eviction,
    )
    if key not in cache:
        out = drive(engine, [Req(req.prompt, req.params, 0)])["0"]
        cache[key] = [c.token_ids for c in out.outputs]
    return cache[key]


def random_params(rng: random.Random) -> SamplingParams:
    max_tokens = rng.randrange(1, 10)
    n = rng.choice([1, 1, 1, 2])
    if rng.random() < 0.5:
        return SamplingParams(temperature=0.0, max_tokens=max_tokens, n=n, ignore_eos=True)
    return SamplingParams(
        temperature=rng.choice([1.0, 5.0]),  # the test model is peaked: 5.0 really samples
        top_k=rng.choice([-1, 20]),
        top_p=rng.choice([1.0, 0.9]),
        seed=rng.randrange(10_000),
        max_tokens=max_tokens,
        n=n,
        ignore_eos=True,
    )


def random_workload(rng: random.Random) -> list[Req]:
    shared = [rng.randrange(3, 500) for _ in range(rng.randrange(4, 14))]
    reqs = []
    for _ in range(rng.randrange(2, 7)):
        if rng.random() < 0.6:
            prompt = shared[: rng.randrange(1, len(shared) + 1)]
            prompt = prompt + [rng.randrange(3, 500) for _ in range(rng.randrange(0, 5))]
        else:
            prompt = [rng.randrange(3, 500) for _ in range(rng.randrange(1, 16))]
        reqs.append(
            Req(
                prompt=prompt,
                params=random_params(rng),
                arrival_step=rng.choice([0, rng.randrange(0, 8), rng.randrange(0, 8)]),
                priority=rng.randrange(3),
                abort_step=rng.randrange(1, 10) if rng.random() < 0.1 else None,
            )
        )
    return reqs


def tight_engine(
    model_dir: Path,
    reqs: list[Req],
    rng: random.Random,
    cache: str,
    preemption: str,
    policy: str,
    **kwargs: Any,
) -> Engine:
    """An engine whose KV pool barely holds the workload's longest request and whose step
    budgets are drawn at random, so preemption and chunked prefill both happen."""
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for r in reqs)
    num_blocks = -(-longest // BLOCK_SIZE) + rng.choice([0, 0, 1, 2, 8])
    return make_engine(
        model_dir,
        num_gpu_blocks=num_blocks,
        max_num_batched_tokens=rng.choice([3, 8, 64]),
        max_num_seqs=rng.choice([2, 4, 16]),
        prefix_caching=cache,
        preemption_mode=preemption,
        num_cpu_blocks=num_blocks if preemption == "swap" else 0,
        scheduling_policy=policy,
        **kwargs,
    )


def assert_tokens_equal_solo(
    outputs: dict[str, RequestOutput],
    reqs: list[Req],
    solo_engine: Engine,
    solo_cache: dict[Any, list[list[int]]],
) -> None:
    """Every finished request's samples equal its solo run; an aborted one, a prefix of it."""
    for i, r in enumerate(reqs):
        expected = solo_tokens(solo_engine, r, solo_cache)
        out = outputs.get(str(i))
        if r.abort_step is not None:
            got = [c.token_ids for c in out.outputs] if out else [[] for _ in expected]
            for g, e in zip(got, expected, strict=True):
                assert g == e[: len(g)]
            continue
        assert out is not None and out.finished
        assert [c.token_ids for c in out.outputs] == expected, f"request {i}: {r}"


CONFIGS = [
    ("none", "recompute", "fcfs"),
    ("hash", "recompute", "fcfs"),
    ("radix", "recompute", "priority"),
    ("hash", "swap", "priority"),
    ("radix", "swap", "fcfs"),
]


@pytest.mark.parametrize(("cache", "preemption", "policy"), CONFIGS)
def test_batched_tokens_equal_solo_tokens(
    model_dir: Path, solo_engine: Engine, cache: str, preemption: str, policy: str
) -> None:
    rng = random.Random(f"verify-{cache}-{preemption}-{policy}")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = hits = swaps = partial_hits = 0
    for _ in range(12):
        reqs = random_workload(rng)
        engine = tight_engine(model_dir, reqs, rng, cache, preemption, policy)
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo_engine, solo_cache)
        stats = engine.stats()
        preemptions += stats.num_preemptions
        swaps += stats.num_swap_outs
        hits += stats.prefix_cache_hit_tokens
        # Hits ending inside a block, served by copying that block (token-exact radix only).
        partial_hits += engine.kv.cache.stats.num_partial_block_hits
        assert_pool_restored(engine)
    assert preemptions > 0, "the KV budgets were meant to force preemption"
    print(
        f"{cache}/{preemption}/{policy}: {preemptions} preemptions, {swaps} swaps, "
        f"{hits} hits, {partial_hits} partial-block hits"
    )
    if preemption == "swap":
        assert swaps > 0
    if cache != "none":
        assert hits > 0, "the shared prefixes were meant to hit the cache"
    if cache == "radix":
        assert partial_hits > 0, "radix hits were meant to end inside blocks too"
    else:
        assert partial_hits == 0  # the hashed cache serves whole blocks only


@pytest.mark.parametrize("cache", ["hash", "radix"])
def test_fully_cached_prompt_and_same_step_identical_prompts(model_dir: Path, cache: str) -> None:
    engine = make_engine(model_dir, prefix_caching=cache)
    prompt = list(range(10, 26))  # 16 tokens: exactly 4 blocks
    params = SamplingParams(temperature=0.0, max_tokens=5, ignore_eos=True)
    # Three identical prompts admitted in the same step, then the same prompt again.
    first = drive(engine, [Req(prompt, params, 0) for _ in range(3)])
    again = drive(engine, [Req(prompt, params, 0)])
    tokens = [o.outputs[0].token_ids for o in first.values()]
    assert tokens[0] == tokens[1] == tokens[2] == again["0"].outputs[0].token_ids
    # Fully cached, but the last token still runs: the hashed cache serves all but the
    # last block, the radix cache all but the last token (copying the last block's head).
    assert again["0"].num_cached_tokens == (12 if cache == "hash" else 15)
    assert_pool_restored(engine)


def test_seeded_sample_does_not_depend_on_batch_mates(model_dir: Path) -> None:
    engine = make_engine(model_dir)
    seeded = SamplingParams(temperature=5.0, seed=7, max_tokens=8, ignore_eos=True)
    alone = drive(engine, [Req([5, 6, 7], seeded, 0)])["0"].outputs[0].token_ids
    crowd = [Req([5, 6, 7], seeded, 0)] + [
        Req([9, 9, i], SamplingParams(temperature=5.0, max_tokens=8), 0) for i in range(5)
    ]
    together = drive(engine, crowd)["0"].outputs[0].token_ids
    assert alone == together


def test_n_samples_share_the_prompt_blocks(model_dir: Path) -> None:
    engine = make_engine(model_dir, prefix_caching="none")
    params = SamplingParams(n=3, temperature=20.0, seed=3, max_tokens=4, ignore_eos=True)
    out = drive(engine, [Req(list(range(3, 24)), params, 0)])["0"]
    assert len(out.outputs) == 3 and len({tuple(c.token_ids) for c in out.outputs}) > 1
    # 21 prompt tokens: sample 0 computes all of them, siblings fork 5 blocks (20 tokens)
    # and compute 1 each; every sample then recomputes nothing (decodes are not counted).
    assert engine.stats().num_prompt_tokens_computed == 21 + 2 * 1
