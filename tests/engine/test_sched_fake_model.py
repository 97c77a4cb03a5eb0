"""Scheduler + KV manager + prefix caches against a fake model, for many random workloads.

The fake KV cache stores, in every slot, the (token, position) pair the model
would have written there. Before a sequence runs, every slot its block table
maps for the positions it has "computed" must hold exactly its own token at
that position: that is what attention would read. Sharing, copy-on-write,
forks, swaps and recompute all have to keep that true. The next token is a
pure function of the sequence so far, so outputs must equal the solo run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import Scheduler, SchedulerConfig
from reference_engine.sequence import Sequence, SequenceStatus

Slot = tuple[int, int] | None
VOCAB = 50


class FakeKV:
    def __init__(self, num_blocks: int, num_cpu_blocks: int, block_size: int) -> None:
        self.bs = block_size
        self.dev: list[list[Slot]] = [[None] * block_size for _ in range(num_blocks)]
        self.host: list[list[Slot]] = [[None] * block_size for _ in range(num_cpu_blocks)]

    def run_copies(self, out) -> None:  # type: ignore[no-untyped-def]
        for d, h in out.blocks_to_swap_out:
            self.host[h] = list(self.dev[d])
        for h, d in out.blocks_to_swap_in:
            self.dev[d] = list(self.host[h])
        for s, d in out.blocks_to_copy:
            self.dev[d] = list(self.dev[s])

    def check_and_write(self, table: list[int], tokens: list[int], start: int, end: int) -> None:
        assert len(table) * self.bs >= end, "block table too short for the scheduled tokens"
        for p in range(start):
            got = self.dev[table[p // self.bs]][p % self.bs]
            assert got == (tokens[p], p), (
                f"position {p}: cache holds {got}, expected {(tokens[p], p)}"
            )
        for p in range(start, end):
            self.dev[table[p // self.bs]][p % self.bs] = (tokens[p], p)


def next_token(tokens: list[int], index: int) -> int:
    return (sum(tokens[-3:]) * 7 + len(tokens) + 13 * index) % VOCAB


@dataclass
class WorkloadResult:
    outputs: dict[tuple[int, int], list[int]]
    kv: KVCacheManager
    sched: Scheduler
    num_computed_tokens: int  # tokens that went through the fake model, recomputes included


@dataclass
class FakeRequest:
    prompt: list[int]
    max_tokens: int
    n: int
    arrival_step: int
    priority: int
    abort_at: int | None


def solo(req: FakeRequest, index: int) -> list[int]:
    tokens = list(req.prompt)
    for _ in range(req.max_tokens):
        tokens.append(next_token(tokens, index))
    return tokens[len(req.prompt) :]


def run_workload(
    reqs: list[FakeRequest],
    *,
    num_blocks: int,
    block_size: int,
    budget: int,
    max_num_seqs: int,
    cache: str,
    preemption: str,
    policy: str,
    chunked: bool = True,
) -> WorkloadResult:
    num_cpu = num_blocks if preemption == "swap" else 0
    kv = KVCacheManager(num_blocks, block_size, cache, num_cpu_blocks=num_cpu)
    cfg = SchedulerConfig(
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=budget,
        enable_chunked_prefill=chunked,
        preemption_mode=preemption,
        policy=policy,
        prefix_caching=cache != "none",
    )
    sched = Scheduler(cfg, kv)
    fake = FakeKV(num_blocks, num_cpu, block_size)
    seqs: dict[tuple[int, int], Sequence] = {}
    step = 0
    computed = 0
    while step < 5000:
        for r_id, r in enumerate(reqs):
            if r.arrival_step == step:
                parent = None
                for i in range(r.n):
                    s = Sequence(
                        seq_id=f"{r_id}.{i}",
                        request_id=str(r_id),
                        index=i,
                        prompt_token_ids=list(r.prompt),
                        params=SamplingParams(max_tokens=r.max_tokens),
                        arrival_time=float(step),
                        priority=r.priority,
                        order=r_id * 100 + i,
                        fork_parent=parent,
                    )
                    parent = parent or s
                    seqs[(r_id, i)] = s
                    sched.add(s)
            if r.abort_at == step:
                for i in range(r.n):
                    if (r_id, i) in seqs:
                        sched.abort(seqs[(r_id, i)])
        if not sched.has_unfinished() and step > max(r.arrival_step for r in reqs):
            break
        out = sched.schedule()
        assert out.num_batched_tokens <= budget
        assert len(sched.running) <= max_num_seqs
        fake.run_copies(out)
        for item in out.scheduled:
            s = item.seq
            fake.check_and_write(kv.block_tables[s.seq_id], s.all_token_ids, item.start, item.end)
            computed += item.num_new_tokens
        sched.on_step_done(out)
        for item in out.scheduled:
            s = item.seq
            if item.samples:
                s.output_token_ids.append(next_token(s.all_token_ids, s.index))
                if len(s.output_token_ids) >= s.params.max_tokens:
                    sched.finish(s, SequenceStatus.FINISHED_LENGTH)
        kv.check_integrity()
        step += 1
    assert not sched.has_unfinished(), "workload did not finish (livelock?)"
    assert kv.is_idle_clean()
    outputs = {k: s.output_token_ids for k, s in seqs.items()}
    return WorkloadResult(outputs, kv, sched, computed)


def assert_solo_outputs_and_clean_pool(res: WorkloadResult, reqs: list[FakeRequest]) -> None:
    """Every sample equals its solo run (an aborted one, a prefix of it); with the prefix
    cache cleared, every block is free again and the manager's invariants hold."""
    for (r_id, i), toks in res.outputs.items():
        r = reqs[r_id]
        expected = solo(r, i)
        assert toks == (expected if r.abort_at is None else expected[: len(toks)])
    res.kv.cache.clear()
    assert res.kv.pool.num_free == res.kv.num_blocks
    res.kv.check_integrity()


def random_workload(rng: random.Random, block_size: int) -> list[FakeRequest]:
    shared = [rng.randrange(VOCAB) for _ in range(rng.randrange(1, 3 * block_size + 2))]
    reqs = []
    for _ in range(rng.randrange(1, 9)):
        if rng.random() < 0.6:
            cut = rng.randrange(0, len(shared) + 1)
            prompt = shared[:cut] + [rng.randrange(VOCAB) for _ in range(rng.randrange(0, 6))]
        else:
            prompt = [rng.randrange(VOCAB) for _ in range(rng.randrange(1, 20))]
        prompt = prompt or [1]
        reqs.append(
            FakeRequest(
                prompt=prompt,
                max_tokens=rng.randrange(1, 12),
                n=rng.choice([1, 1, 1, 2, 3]),
                arrival_step=rng.choice([0, 0, rng.randrange(0, 10)]),
                priority=rng.randrange(3),
                abort_at=rng.randrange(1, 15) if rng.random() < 0.15 else None,
            )
        )
    return reqs


CONFIGS = [
    (cache, preemption, policy)
    for cache in ("none", "hash", "radix")
    for preemption in ("recompute", "swap")
    for policy in ("fcfs", "priority")
]


@pytest.mark.parametrize(("cache", "preemption", "policy"), CONFIGS)
def test_random_workloads_read_correct_kv_and_match_solo_runs(
    cache: str, preemption: str, policy: str
) -> None:
    rng = random.Random(f"{cache}-{preemption}-{policy}")
    preemptions = 0
    for _ in range(25):
        bs = rng.choice([1, 2, 4])
        reqs = random_workload(rng, bs)
        longest = max(len(r.prompt) + r.max_tokens for r in reqs)
        # Tight: sometimes barely enough blocks for the longest request alone.
        num_blocks = -(-longest // bs) + rng.choice([0, 1, 3, 10])
        res = run_workload(
            reqs,
            num_blocks=num_blocks,
            block_size=bs,
            budget=rng.choice([1, 3, 8, 64]),
            max_num_seqs=rng.choice([1, 2, 4, 16]),
            cache=cache,
            preemption=preemption,
            policy=policy,
            chunked=rng.random() < 0.8,
        )
        preemptions += res.sched.num_preemptions
        assert_solo_outputs_and_clean_pool(res, reqs)
    assert preemptions > 0, "the workloads were meant to force preemption"


@pytest.mark.parametrize("cache", ["hash", "radix"])
def test_prompt_fully_cached_still_computes_its_last_token(cache: str) -> None:
    prompt = list(range(8))
    reqs = [FakeRequest(prompt, 3, 1, 0, 0, None), FakeRequest(prompt, 3, 1, 6, 0, None)]
    res = run_workload(
        reqs,
        num_blocks=8,
        block_size=4,
        budget=64,
        max_num_seqs=4,
        cache=cache,
        preemption="recompute",
        policy="fcfs",
    )
    assert res.outputs[(1, 0)] == res.outputs[(0, 0)] == solo(reqs[0], 0)
    # 8 block-aligned prompt tokens, all cached: the last prompt token must run to produce
    # the first output token, so the hashed cache recomputes the whole last block; the
    # radix cache serves 7 tokens, copying the last block's first 3 slots.
    assert res.kv.cache.stats.num_hit_tokens == (4 if cache == "hash" else 7)


def test_radix_with_block_size_one_matches_to_the_token() -> None:
    reqs = [
        FakeRequest(list(range(10)), 2, 1, 0, 0, None),
        FakeRequest([*range(7), 99, 98], 2, 1, 5, 0, None),
    ]
    res = run_workload(
        reqs,
        num_blocks=30,
        block_size=1,
        budget=64,
        max_num_seqs=4,
        cache="radix",
        preemption="recompute",
        policy="fcfs",
    )
    assert res.kv.cache.stats.num_hit_tokens == 7
    assert res.outputs[(1, 0)] == solo(reqs[1], 0)


@pytest.mark.parametrize("cache", ["hash", "radix"])
def test_identical_prefixes_admitted_in_the_same_step(cache: str) -> None:
    prompt = list(range(11))
    reqs = [FakeRequest(prompt, 4, 1, 0, 0, None) for _ in range(4)]
    res = run_workload(
        reqs,
        num_blocks=20,
        block_size=4,
        budget=64,
        max_num_seqs=8,
        cache=cache,
        preemption="recompute",
        policy="fcfs",
    )
    assert all(toks == solo(reqs[0], 0) for toks in res.outputs.values())
    assert res.kv.cache.stats.num_hit_tokens == 0  # nobody had finished computing it yet
    # Each request computed the shared prefix itself, yet the cache holds it once:
    # 14 tokens (11 + 3 computed outputs), the radix cache also keeps the partial block.
    assert len(res.kv.cache.block_refs()) == (3 if cache == "hash" else 4)


@pytest.mark.parametrize("cache", ["hash", "radix"])
@pytest.mark.parametrize("preemption", ["recompute", "swap"])
def test_preempting_a_request_that_shares_cached_blocks(cache: str, preemption: str) -> None:
    prefix = list(range(12))
    reqs = [FakeRequest([*prefix, 40 + i], 10, 1, i, 0, None) for i in range(4)]
    res = run_workload(
        reqs,
        num_blocks=9,
        block_size=4,
        budget=64,
        max_num_seqs=8,
        cache=cache,
        preemption=preemption,
        policy="fcfs",
    )
    assert res.sched.num_preemptions > 0 and res.kv.cache.stats.num_hit_tokens > 0
    for (r_id, i), toks in res.outputs.items():
        assert toks == solo(reqs[r_id], i)


def test_siblings_fork_the_prompt_instead_of_recomputing_it() -> None:
    reqs = [FakeRequest(list(range(10)), 4, 3, 0, 0, None)]
    res = run_workload(
        reqs,
        num_blocks=20,
        block_size=4,
        budget=64,
        max_num_seqs=8,
        cache="none",
        preemption="recompute",
        policy="fcfs",
    )
    assert [res.outputs[(0, i)] for i in range(3)] == [solo(reqs[0], i) for i in range(3)]
    # Sibling 0 computes 10 prompt tokens; the others share 2 blocks and compute 2 each.
    # Every sibling then computes its 3 sampled-but-not-yet-cached tokens.
    assert res.num_computed_tokens == 10 + 2 * 2 + 3 * 3


def test_priority_policy_runs_urgent_requests_first() -> None:
    reqs = [FakeRequest([1, 2, 3], 2, 1, 0, p, None) for p in (2, 0, 1)]
    kv = KVCacheManager(16, 4, "none")
    sched = Scheduler(SchedulerConfig(max_num_seqs=1, policy="priority"), kv)
    seqs = [
        Sequence(f"{i}", f"{i}", 0, r.prompt, SamplingParams(), 0.0, r.priority, i)
        for i, r in enumerate(reqs)
    ]
    for s in seqs:
        sched.add(s)
    out = sched.schedule()
    assert [item.seq for item in out.scheduled] == [seqs[1]]


def test_without_chunked_prefill_a_prompt_waits_for_a_step_with_room() -> None:
    kv = KVCacheManager(32, 4, "none")
    sched = Scheduler(SchedulerConfig(max_num_batched_tokens=10, enable_chunked_prefill=False), kv)
    a = Sequence("a", "a", 0, list(range(6)), SamplingParams(), 0.0, order=0)
    b = Sequence("b", "b", 0, list(range(6)), SamplingParams(), 1.0, order=1)
    sched.add(a)
    sched.add(b)
    out = sched.schedule()
    assert [(i.seq.seq_id, i.num_new_tokens) for i in out.scheduled] == [("a", 6)]
