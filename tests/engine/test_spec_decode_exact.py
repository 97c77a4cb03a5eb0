"""Speculative decoding changes how many tokens a step emits, never which: greedy output
equals the non-speculative engine's token by token, on the random workloads of
test_verify_random_workloads (batched, preemption by recompute and swap, both prefix
caches, chunked prefill, aborts), for the n-gram drafter and for a draft model."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.engine import Engine
from reference_engine.kv_cache_manager import cdiv
from reference_engine.sampling_params import SamplingParams
from tests.engine.test_verify_random_workloads import (
    BLOCK_SIZE,
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    tight_engine,
)


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


@pytest.fixture(scope="module")
def other_model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    """Same family and vocabulary, other weights: a draft that is often wrong."""
    return random_checkpoint("qwen3", dtype="float64", seed=1)


@pytest.fixture(scope="module")
def solo_engine(model_dir: Path) -> Engine:
    return make_engine(model_dir, prefix_caching="none", max_num_seqs=8)


def repetitive_workload(rng: random.Random) -> list[Req]:
    """Greedy requests whose prompts repeat a motif, so prompt lookup finds drafts."""
    shared = [rng.randrange(3, 500) for _ in range(rng.randrange(3, 6))] * 3
    reqs = []
    for _ in range(rng.randrange(2, 7)):
        motif = [rng.randrange(3, 500) for _ in range(rng.randrange(1, 4))]
        prompt = shared[: rng.randrange(1, len(shared) + 1)] if rng.random() < 0.5 else []
        prompt = prompt + motif * rng.randrange(1, 4)
        params = SamplingParams(
            temperature=0.0, max_tokens=rng.randrange(1, 16), n=rng.choice([1, 1, 2]),
            ignore_eos=True,
        )  # fmt: skip
        reqs.append(
            Req(
                prompt=prompt,
                params=params,
                arrival_step=rng.choice([0, rng.randrange(0, 8)]),
                priority=rng.randrange(3),
                abort_step=rng.randrange(1, 10) if rng.random() < 0.1 else None,
            )
        )
    return reqs


CONFIGS = [
    ("none", "recompute", "fcfs"),
    ("hash", "recompute", "priority"),
    ("radix", "swap", "fcfs"),
]


@pytest.mark.parametrize(("cache", "preemption", "policy"), CONFIGS)
def test_ngram_greedy_equals_plain_decoding(
    model_dir: Path, solo_engine: Engine, cache: str, preemption: str, policy: str
) -> None:
    rng = random.Random(f"spec-{cache}-{preemption}-{policy}")
    solo_cache: dict[Any, list[list[int]]] = {}
    accepted = rejected = preemptions = 0
    for _ in range(8):
        reqs = repetitive_workload(rng)
        spec = {
            "method": "ngram",
            "num_speculative_tokens": rng.choice([1, 3, 5]),
            "draft_length": rng.choice(["fixed", "adaptive"]),
        }
        engine = tight_engine(
            model_dir, reqs, rng, cache, preemption, policy, speculative_config=spec
        )
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo_engine, solo_cache)
        stats = engine.stats()
        assert stats.spec_decoding is not None
        accepted += stats.spec_decoding.num_accepted_tokens
        rejected += stats.spec_decoding.num_draft_tokens - stats.spec_decoding.num_accepted_tokens
        preemptions += stats.num_preemptions
        assert_pool_restored(engine)
    assert accepted > 0 and rejected > 0, "workloads were meant to accept and reject drafts"
    assert preemptions > 0, "the KV budgets were meant to force preemption"


@pytest.mark.parametrize("same_weights", [True, False])
def test_draft_model_greedy_equals_plain_decoding(
    model_dir: Path, other_model_dir: Path, solo_engine: Engine, same_weights: bool
) -> None:
    """A draft with the target's own weights is always right (every draft accepted); one
    with other weights is mostly wrong: both must leave the output unchanged."""
    rng = random.Random(f"draft-{same_weights}")
    draft = model_dir if same_weights else other_model_dir
    solo_cache: dict[Any, list[list[int]]] = {}
    for _ in range(4):
        reqs = repetitive_workload(rng)
        spec = {"model": str(draft), "num_speculative_tokens": 3}
        engine = tight_engine(model_dir, reqs, rng, "hash", "recompute", "fcfs",
                              speculative_config=spec)  # fmt: skip
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo_engine, solo_cache)
        assert_pool_restored(engine)
        stats = engine.stats().spec_decoding
        assert stats is not None and stats.num_draft_tokens > 0
        if same_weights:
            assert stats.num_accepted_tokens == stats.num_draft_tokens
        # The draft model's own pool is empty again: finished sequences were released.
        proposer = engine.spec.proposer  # type: ignore[union-attr]
        proposer.release([])
        assert not proposer.kv.block_tables or all(  # type: ignore[attr-defined]
            sid in {s.seq_id for s in engine.scheduler.running}
            for sid in proposer.kv.block_tables  # type: ignore[attr-defined]
        )


def test_rejected_drafts_release_their_blocks(model_dir: Path, other_model_dir: Path) -> None:
    """After every step a running sequence holds no block beyond the one its next token
    goes into: blocks allocated for rejected drafts were returned to the pool."""
    spec = {"model": str(other_model_dir), "num_speculative_tokens": 7}
    engine = make_engine(model_dir, block_size=2, speculative_config=spec)
    for i in range(4):
        engine.add_request(str(i), [5 + i, 6, 7, 8, 9], SamplingParams(temperature=0.0,
                           max_tokens=30, ignore_eos=True))  # fmt: skip
    rejected_steps = 0
    while engine.has_unfinished_requests():
        before = engine.stats().spec_decoding
        assert before is not None
        drafted, accepted = before.num_draft_tokens, before.num_accepted_tokens
        engine.step()
        after = engine.stats().spec_decoding
        assert after is not None
        if after.num_draft_tokens - drafted > after.num_accepted_tokens - accepted:
            rejected_steps += 1
        for seq in engine.scheduler.running:
            held = engine.kv.num_blocks_held(seq.seq_id)
            assert held <= cdiv(seq.num_computed_tokens + 1, 2), seq.seq_id
        engine.check_integrity()
    assert rejected_steps > 0
    assert engine.kv.is_idle_clean()


def test_metrics_per_position_and_mean_length(model_dir: Path) -> None:
    engine = make_engine(model_dir, speculative_config={"method": "ngram",
                                                        "num_speculative_tokens": 4})  # fmt: skip
    motif = [11, 12, 13, 14, 15]
    engine.add_request("0", motif * 4, SamplingParams(temperature=0.0, max_tokens=24,
                                                      ignore_eos=True))  # fmt: skip
    while engine.has_unfinished_requests():
        engine.step()
    s = engine.stats()
    spec = s.spec_decoding
    assert spec is not None and spec.num_drafts > 0
    assert len(spec.acceptance_per_position) == 4  # full drafts: the output loops
    assert all(0.0 <= a <= 1.0 for a in spec.acceptance_per_position)
    # Acceptance cannot grow along the draft: position j is reached only through j - 1.
    acc = spec.accepted_per_position
    assert all(acc[j] <= acc[j - 1] for j in range(1, len(acc)))
    assert spec.mean_accepted_length == pytest.approx(1 + spec.num_accepted_tokens / spec.num_drafts)
    assert spec.verify_time_s > 0 and spec.num_draft_steps > 0
    # 24 tokens in fewer steps than plain decoding needs (1 prefill + 23 decodes).
    assert s.num_steps < 24 and s.num_generated_tokens == 24


def test_bad_speculative_config_is_a_clear_error(model_dir: Path, random_checkpoint) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="speculative method"):
        EngineConfig(model=str(model_dir), speculative_config={"method": "medusa"})
    with pytest.raises(ConfigError, match="unknown speculative_config keys"):
        EngineConfig(model=str(model_dir), speculative_config={"num_spec_tokens": 3})
    with pytest.raises(ConfigError, match="needs 'model'"):
        EngineConfig(model=str(model_dir), speculative_config={"method": "draft_model"})


def test_block_size_of_tests_is_small() -> None:
    assert BLOCK_SIZE == 4  # the workloads above rely on drafts crossing block boundaries


def test_prompt_lookup() -> None:
    from reference_engine.spec_decode.ngram_proposer import prompt_lookup

    assert prompt_lookup([1, 2, 3, 9, 1, 2], 2, 1, 3) == [3, 9]
    assert prompt_lookup([1, 2, 3], 2, 1, 3) == []  # no suffix recurs
    # A loop: the latest "7 7" is right before the end; an older one has a full tail.
    assert prompt_lookup([7, 7, 7, 7, 7], 3, 1, 2) == [7, 7, 7]
    assert prompt_lookup([7, 7, 7], 3, 2, 2) == [7]  # the only earlier "7 7" has one after it
    assert prompt_lookup([7] * 8, 3, 1, 2) == [7, 7, 7]
    assert prompt_lookup([5, 1, 2, 6, 1, 2], 1, 2, 2) == [6]  # the most recent full match
