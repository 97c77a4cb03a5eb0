"""Random workloads on the fake model with token-exact radix hits and eviction storms.

Reuses the fake KV of test_sched_fake_model.py, which checks before every write
that each slot a sequence reads holds its own (token, position). Here block
sizes are ones that fake test does not draw (3, 8, 16), and the prefix cache is
told to evict at random both before scheduling and right after it, that is,
between a hit's admission and the forward pass that needs its copied block.
"""

from __future__ import annotations

import random

import pytest
from test_sched_fake_model import assert_solo_outputs_and_clean_pool, random_workload, run_workload

from reference_engine.scheduler import Scheduler, SchedulerOutput


@pytest.mark.parametrize("preemption", ["recompute", "swap"])
def test_partial_hits_survive_eviction_at_any_point(
    monkeypatch: pytest.MonkeyPatch, preemption: str
) -> None:
    rng = random.Random(f"radix-partial-{preemption}")
    schedule = Scheduler.schedule

    def evicting_schedule(self: Scheduler) -> SchedulerOutput:
        if rng.random() < 0.3:
            self.kv.cache.evict(rng.randrange(1, 4))
        out = schedule(self)
        if rng.random() < 0.3:
            self.kv.cache.evict(rng.randrange(1, 6))  # after admissions, before the copies
        return out

    monkeypatch.setattr(Scheduler, "schedule", evicting_schedule)
    partial_hits = preemptions = 0
    for _ in range(40):
        bs = rng.choice([3, 8, 16])
        reqs = random_workload(rng, bs)
        longest = max(len(r.prompt) + r.max_tokens for r in reqs)
        num_blocks = -(-longest // bs) + rng.choice([0, 1, 3, 10])
        res = run_workload(
            reqs,
            num_blocks=num_blocks,
            block_size=bs,
            budget=rng.choice([1, 3, 8, 64]),
            max_num_seqs=rng.choice([1, 2, 4, 16]),
            cache="radix",
            preemption=preemption,
            policy=rng.choice(["fcfs", "priority"]),
        )
        partial_hits += res.kv.cache.stats.num_partial_block_hits
        preemptions += res.sched.num_preemptions
        assert_solo_outputs_and_clean_pool(res, reqs)
    assert partial_hits > 0 and preemptions > 0
