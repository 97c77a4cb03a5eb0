"""CacheAware's decisions, from the router's own state only (no processes, no timing):
the estimated cost of each worker is its queued prefill work plus this prompt's part it
lacks, plus a little per request in flight."""

from __future__ import annotations

from reference_engine.router.cache_aware import CacheAware
from reference_engine.router.worker import Worker

SYSTEM_A = "tenant A: " + "a long shared system prompt " * 8  # 234 characters
SYSTEM_B = "Second tenant: " + "another system prompt, long too " * 8  # nothing shared with A


def workers(n: int = 3) -> list[Worker]:
    return [Worker(f"http://w{i}") for i in range(n)]


def send(policy: CacheAware, key: str, pool: list[Worker]) -> tuple[Worker, int]:
    """Route as the proxy does: charge the worker until the first token comes back."""
    worker, prefill = policy.route(key, pool)
    worker.outstanding += 1
    worker.queued_prefill += prefill
    return worker, prefill


def first_token(worker: Worker, prefill: int) -> None:
    worker.queued_prefill -= prefill


def test_idle_pool_spreads_new_prefixes_and_keeps_a_tenant_where_it_is_cached() -> None:
    policy, pool = CacheAware(), workers()
    a, prefill_a = send(policy, SYSTEM_A + "q1", pool)
    assert prefill_a == len(SYSTEM_A + "q1")  # nothing cached anywhere: the whole prompt
    first_token(a, prefill_a)
    b, prefill_b = send(policy, SYSTEM_B + "q1", pool)
    assert b is not a  # a new prefix goes where it costs least: a is still decoding
    first_token(b, prefill_b)
    again, prefill = send(policy, SYSTEM_A + "q2", pool)
    assert again is a  # busy decoding, but its cache saves far more than that costs
    assert prefill == len("2")  # only the uncached part is charged ("q" was sent too)
    assert policy.num_cache_routed == 1 and policy.num_balanced == 0  # only the third had a cache


def test_a_worker_busy_prefilling_another_prompt_loses_the_tenant_to_an_idle_one() -> None:
    policy, pool = CacheAware(), workers(2)
    w0, w1 = pool
    cached, prefill = send(policy, SYSTEM_A + "q1", pool)
    first_token(cached, prefill)
    cached.outstanding -= 1
    assert cached is w0
    # w0 now prefills a long uncached prompt of another tenant; w1 is idle.
    w0.queued_prefill, w0.outstanding = 2000, 1
    other, charged = send(policy, SYSTEM_A + "q2", pool)
    assert other is w1 and charged == len(SYSTEM_A + "q2")
    assert policy.num_balanced == 1
    # w1 holds A now. Behind a queue shorter than what its cache saves, it keeps A ...
    fresh = Worker("http://w2")
    w1.queued_prefill, w1.outstanding = 100, 1
    assert policy.route(SYSTEM_A + "q3", [w1, fresh])[0] is w1
    # ... behind a longer one, an empty worker computing all of A is sooner.
    w1.queued_prefill = len(SYSTEM_A) + 10
    assert policy.route(SYSTEM_A + "q4", [w1, fresh])[0] is fresh


def test_outstanding_decodes_weigh_little_next_to_a_cache_hit_but_break_near_ties() -> None:
    policy, pool = CacheAware(load_weight=8), workers(2)
    w0, w1 = pool
    policy.route(SYSTEM_A + "q1", pool)  # to w0 (all equal, first)
    w0.outstanding = 6  # six decoding requests, no prefill queued: 48 elements
    assert policy.route(SYSTEM_A + "q2", pool)[0] is w0  # saves ~234 elements
    # With no cache anywhere, decoding load alone decides.
    assert policy.route("fresh prompt of nobody", pool)[0] is w1


def test_equal_cost_prefers_the_longer_match_then_the_smaller_tree() -> None:
    policy, pool = CacheAware(load_weight=0), workers(2)
    w0, w1 = pool
    policy.route(SYSTEM_A, pool)  # w0 (empty trees tie: the first)
    assert policy.route(SYSTEM_B, pool)[0] is w1  # w0's tree is bigger
    # w0 is charged exactly what w1 would need more: equal cost, the cached worker wins.
    w0.queued_prefill = len(SYSTEM_A)
    assert policy.route(SYSTEM_A + "q", pool)[0] is w0


def test_the_charge_is_released_at_the_first_token_in_the_proxy() -> None:
    # The proxy charges route()'s prefill and releases it once; the counters return to 0.
    policy, pool = CacheAware(), workers(2)
    sent = [send(policy, key, pool) for key in (SYSTEM_A, SYSTEM_B, SYSTEM_A + "x")]
    assert sum(w.queued_prefill for w in pool) == sum(p for _, p in sent)
    for worker, prefill in sent:
        first_token(worker, prefill)
    assert [w.queued_prefill for w in pool] == [0, 0]


def test_removed_worker_is_forgotten() -> None:
    policy, pool = CacheAware(), workers(2)
    w0, w1 = pool
    policy.route(SYSTEM_A, pool)
    policy.on_removed(w0)
    assert policy.tree.size(w0.url) == 0
    assert policy.route(SYSTEM_A + "q", [w1])[1] == len(SYSTEM_A + "q")


def test_a_short_shared_prefix_does_not_pull_a_new_tenant_onto_a_full_tree() -> None:
    policy, pool = CacheAware(cache_threshold=0.5), workers(2)
    _, w1 = pool
    policy.route("You are " + SYSTEM_A, pool)  # w0
    # "You are " matches on w0, but only 8 elements: treated as a miss, the smaller tree wins.
    assert policy.route("You are " + SYSTEM_B, pool) == (w1, len("You are " + SYSTEM_B))
    assert policy.num_cache_routed == policy.num_balanced == 0
