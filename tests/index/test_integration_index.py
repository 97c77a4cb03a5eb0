"""The index over the real releases (network for the first fetch; slow: a cold index
of a whole release takes minutes on two cores, later runs hit the cache)."""

from __future__ import annotations

import pytest

from analyzer.index import index_snapshot
from analyzer.settings import Settings
from analyzer.snapshots import ensure_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_vllm_scheduler_schedule(integration_settings: Settings) -> None:
    snap = ensure_snapshot(integration_settings, "vllm@0.30.0")
    index = index_snapshot(integration_settings, snap)
    assert len(index.modules) > 2000 and not index.errors
    (match,) = index.find_symbol("vllm.v1.core.sched.scheduler.Scheduler.schedule")
    assert match.path == "vllm/v1/core/sched/scheduler.py" and match.kind == "method"
    assert 50 < match.line < match.end_line and match.end_line - match.line > 100
    assert match in index.find_symbol("vllm/v1/core/sched/scheduler.py:Scheduler.schedule")
    assert match in index.find_symbol("Scheduler.schedule")
    facts = index.by_module("vllm.v1.core.sched.scheduler")
    assert facts is not None
    scheduler = next(c for c in facts.classes if c.qualname == "Scheduler")
    assert any(a.target == "self.waiting" for a in scheduler.instance_attributes)
    assert any(c.scope == "Scheduler.schedule" for c in facts.calls)
    # a second run is served from the cache without re-hashing (store-commit manifest)
    again = index_snapshot(integration_settings, snap)
    assert again.stats.manifest_hit and again.stats.extracted == 0


def test_sglang_scheduler_class(integration_settings: Settings) -> None:
    snap = ensure_snapshot(integration_settings, "sglang@0.5.20")
    index = index_snapshot(integration_settings, snap)
    (match,) = index.find_symbol("sglang.srt.managers.scheduler.Scheduler")
    assert match.kind == "class" and match.path == "sglang/srt/managers/scheduler.py"
    assert index.find_symbol("python/sglang/srt/managers/scheduler.py:Scheduler") == [match]
    assert len(index.modules) > 3000
