"""The load-adaptive draft length: long drafts at low load, none at high load, and the
choice follows measured acceptance."""

from __future__ import annotations

import pytest

from reference_engine.spec_decode.draft_length import MIN_SAMPLES, DraftLengthPolicy
from reference_engine.spec_decode.metrics import SpecDecodingStats


def stats_with_acceptance(alpha: float, k: int, n: int = 400) -> SpecDecodingStats:
    """Drafts of k tokens, each accepted with probability alpha given its predecessors
    were (exact expected counts, no noise)."""
    stats = SpecDecodingStats()
    for accepted in range(k + 1):
        share = (alpha**accepted) * ((1 - alpha) if accepted < k else 1.0)
        for _ in range(round(n * share)):
            stats.record(k, accepted)
    return stats


def policy_with_costs(
    t_fixed: float, t_row: float, t_seq: float = 0.0, k: int = 4
) -> DraftLengthPolicy:
    policy = DraftLengthPolicy(k, adaptive=True)
    for rows in (1, 2, 4, 8, 16, 32, 64, 128):
        for multi in (0, 1, rows // 4):
            policy.observe_forward(rows, multi, t_fixed + t_row * rows + t_seq * multi)
    return policy


def test_time_model_is_fitted() -> None:
    policy = policy_with_costs(0.010, 0.001, 0.002)
    t_fixed, t_row, t_seq = policy.time_model()
    assert (t_fixed, t_row, t_seq) == pytest.approx((0.010, 0.001, 0.002))


def test_per_sequence_verify_cost_discourages_drafting() -> None:
    stats = stats_with_acceptance(0.5, 4)
    assert policy_with_costs(0.010, 0.001, 0.003).choose(8, stats) < policy_with_costs(
        0.010, 0.001, 0.0
    ).choose(8, stats)


def test_drafts_long_at_low_load_and_none_at_high_load() -> None:
    # A forward pass that costs 10 ms plus 1 ms per row: memory bound below ~10 rows.
    policy = policy_with_costs(0.010, 0.001)
    stats = stats_with_acceptance(0.8, 4)
    # B=1: E(4) = 3.36 tokens for 15 ms beats E(3) = 2.95 for 14 ms; B=64: 64 rows cost
    # 74 ms without drafts, and one draft each (E = 1.8) would cost 138 ms.
    assert policy.choose(1, stats) == 4
    assert policy.choose(64, stats) == 0
    ks = [policy.choose(b, stats) for b in (1, 2, 4, 8, 16, 32, 64)]
    assert ks == sorted(ks, reverse=True), ks  # never more drafting under more load


def test_follows_acceptance() -> None:
    policy = policy_with_costs(0.010, 0.001)
    assert policy.choose(8, stats_with_acceptance(0.95, 4)) > policy.choose(
        8, stats_with_acceptance(0.3, 4)
    )
    assert policy.choose(1, stats_with_acceptance(0.0, 4)) == 0


def test_prior_until_measured_and_fixed_mode() -> None:
    policy = policy_with_costs(0.010, 0.001)
    fresh = SpecDecodingStats()
    assert policy.choose(1, fresh) == 4  # the optimistic prior tries drafting
    assert DraftLengthPolicy.acceptance(fresh, 2) == [0.7, 0.7]
    few = stats_with_acceptance(0.0, 2, n=MIN_SAMPLES - 1)
    assert DraftLengthPolicy.acceptance(few, 2) == [0.7, 0.7]
    assert DraftLengthPolicy(3, adaptive=False).choose(1000, stats_with_acceptance(0.0, 3)) == 3
