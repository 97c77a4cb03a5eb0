"""Token-exact radix hits through the whole engine, at block sizes 1, 4 and 16.

Each request must generate exactly the tokens it generates alone on an engine
without a prefix cache, while its prompt is served from the cache up to the
token: the partially matched block is copied on the device before the forward
pass that writes the rest of it. Covered: hits ending inside a block, a prompt
cached but for its last token, identical prompts admitted in the same step,
n > 1, recompute and swap preemption of requests holding a copied block, and
the copy's source evicted right after the copy ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_verify_random_workloads import Req, assert_pool_restored, drive, make_engine

from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams

BASE = [(7 * i + 3) % 500 + 3 for i in range(37)]  # a shared prefix, 37 tokens
GREEDY = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


@pytest.fixture(scope="module")
def solo(model_dir: Path) -> Any:
    engine = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    seen: dict[Any, list[list[int]]] = {}

    def run(req: Req) -> list[list[int]]:
        p = req.params
        key = (tuple(req.prompt), p.n, p.temperature, p.seed, p.max_tokens)
        if key not in seen:
            out = drive(engine, [Req(req.prompt, p, 0)])["0"]
            seen[key] = [c.token_ids for c in out.outputs]
        return seen[key]

    return run


def _radix_engine(model_dir: Path, block_size: int, **kwargs: Any) -> Engine:
    return make_engine(model_dir, block_size=block_size, prefix_caching="radix", **kwargs)


@pytest.mark.parametrize("block_size", [1, 4, 16])
def test_hits_to_the_token_generate_the_solo_tokens(
    model_dir: Path, solo: Any, block_size: int
) -> None:
    engine = _radix_engine(model_dir, block_size)
    first = [Req([*BASE, 11], GREEDY, 0)]
    drive(engine, first)
    sampled = SamplingParams(temperature=5.0, seed=4, max_tokens=6, n=2, ignore_eos=True)
    reqs = [
        Req([*BASE[:21], 40, 41], GREEDY, 0),  # diverges after 21 tokens
        Req([*BASE[:21], 40, 41], GREEDY, 0),  # the same prompt, admitted in the same step
        Req([*BASE, 11], GREEDY, 0),  # cached but for its last token
        Req([*BASE[:30], 9], sampled, 0),  # n = 2: sample 0 hits, sample 1 forks it
    ]
    outputs = drive(engine, reqs)
    for i, r in enumerate(reqs):
        assert [c.token_ids for c in outputs[str(i)].outputs] == solo(r), f"request {i}"
    hits = [outputs[str(i)].num_cached_tokens for i in range(len(reqs))]
    assert hits == [21, 21, len(BASE), 30]  # to the token, whatever the block size
    partial = engine.kv.cache.stats.num_partial_block_hits
    assert partial == (0 if block_size == 1 else 4)
    assert_pool_restored(engine)


@pytest.mark.parametrize("block_size", [4, 16])
@pytest.mark.parametrize("preemption", ["recompute", "swap"])
def test_preempting_requests_that_hold_copied_blocks(
    model_dir: Path, solo: Any, block_size: int, preemption: str
) -> None:
    params = SamplingParams(temperature=0.0, max_tokens=14, ignore_eos=True)
    # Prompts sharing BASE up to different points; each hit ends inside a block.
    reqs = [Req([*BASE, 1], params, 0)] + [
        Req([*BASE[:cut], 60 + cut], params, 2) for cut in (13, 22, 27, 35)
    ]
    longest = max(len(r.prompt) for r in reqs) + params.max_tokens  # type: ignore[operator]
    num_blocks = -(-longest // block_size) + 2  # tight: forces preemption
    engine = _radix_engine(
        model_dir,
        block_size,
        num_gpu_blocks=num_blocks,
        preemption_mode=preemption,
        num_cpu_blocks=num_blocks if preemption == "swap" else 0,
        max_num_batched_tokens=16,
    )
    outputs = drive(engine, reqs)
    for i, r in enumerate(reqs):
        assert [c.token_ids for c in outputs[str(i)].outputs] == solo(r), f"request {i}"
    stats = engine.stats()
    assert stats.num_preemptions > 0
    if preemption == "swap":
        assert stats.num_swap_outs > 0
    assert engine.kv.cache.stats.num_partial_block_hits > 0
    assert_pool_restored(engine)


@pytest.mark.parametrize("block_size", [4, 16])
def test_copy_source_evicted_after_the_copy_ran(
    model_dir: Path, solo: Any, block_size: int
) -> None:
    engine = _radix_engine(model_dir, block_size)
    drive(engine, [Req([*BASE, 11], GREEDY, 0)])
    req = Req([*BASE[:26], 70, 71, 72], GREEDY, 0)
    engine.add_request("b", req.prompt, req.params)
    engine.step()  # admission: the copy runs before this step's forward pass
    assert engine.kv.cache.stats.num_partial_block_hits == 1
    # Drop every unpinned cache entry, the branch the copy was read from among them.
    assert engine.kv.cache.evict(engine.kv.num_blocks) > 0
    last = None
    while engine.has_unfinished_requests():
        for out in engine.step():
            last = out
        engine.check_integrity()
    assert last is not None and [c.token_ids for c in last.outputs] == solo(req)
    assert last.num_cached_tokens == 26
    assert_pool_restored(engine)
