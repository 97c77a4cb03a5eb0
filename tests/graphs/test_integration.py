"""Real releases (network: the wheels come from the package index)."""

from __future__ import annotations

import pytest

from analyzer.graphs import queries
from analyzer.graphs.store import Graphs, load_graphs, open_target
from analyzer.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def vllm(integration_settings: Settings) -> Graphs:
    return load_graphs(integration_settings, open_target(integration_settings, "vllm@0.30.0"))


@pytest.fixture(scope="module")
def sglang(integration_settings: Settings) -> Graphs:
    return load_graphs(integration_settings, open_target(integration_settings, "sglang@0.5.20"))


def test_vllm_schedule_reaches_kv_cache_allocation(vllm: Graphs) -> None:
    g = vllm.calls
    src = queries.find_one(g, "v1.core.sched.scheduler.Scheduler.schedule")
    dst = queries.find_one(g, "v1.core.kv_cache_manager.KVCacheManager.allocate_slots")
    assert g.has_edge(src, dst)
    data = g.edges[src, dst]
    assert data["kind"] == "via-attribute-type" and data["site"].startswith("vllm/v1/core/sched/scheduler.py:")
    paths = queries.path_query(g, src, dst, max_paths=3)
    assert paths and len(paths[0]) == 1
    # Deeper: allocation reaches the block pool through the coordinator.
    pool = queries.find_one(g, "v1.core.block_pool.BlockPool.get_new_blocks")
    assert queries.path_query(g, src, pool, max_paths=1)


def test_vllm_scheduler_state_lists_queues_with_writers(vllm: Graphs) -> None:
    st = queries.state_query(vllm.state, "v1.core.sched.scheduler.Scheduler")
    data = {a["name"]: a for a in queries.state_to_dict(st)["attributes"]}
    assert {"waiting", "running", "kv_cache_manager"} <= set(data)
    init = "vllm.v1.core.sched.scheduler.Scheduler.__init__"
    assert init in data["waiting"]["writers"] and init in data["running"]["writers"]
    running_kinds = {w["kind"] for w in data["running"]["writes"]}
    assert {"assign", "mutating_call"} <= running_kinds
    assert "vllm.v1.core.sched.scheduler.Scheduler.schedule" in data["running"]["readers"]


def test_sglang_scheduler_queue_writers(sglang: Graphs) -> None:
    st = queries.state_query(sglang.state, "srt.managers.scheduler.Scheduler")
    waiting = st.attrs["waiting_queue"]
    writers = {w.function for w in waiting.writes}
    # Mixins (e.g. the pipeline-parallel one) write the queue as part of the Scheduler.
    assert any("mixin" in w.lower() for w in writers)
    assert all(not w.outside for w in waiting.writes if "mixin" in w.function.lower())
    g = sglang.calls
    root = queries.find_one(g, "srt.managers.scheduler.Scheduler.get_next_batch_to_run")
    assert len(queries.calls_query(g, root, depth=1)) >= 5


def test_every_call_site_is_accounted_for(vllm: Graphs) -> None:
    meta = vllm.meta
    assert meta["edges"] > 10_000 and meta["unresolved_sites"] > 0
