"""`atlas diff` on the real pinned releases (network: fetches the wheels). Call graphs are
left out here (`calls=False`): building them for whole releases takes minutes; the unit
tests cover the call-graph parts on small trees."""

from __future__ import annotations

import pytest

from analyzer.diff import DesignDiff, VersionDiff, run_diff
from analyzer.mappings import load_mappings
from analyzer.settings import Settings


@pytest.mark.integration
@pytest.mark.slow
def test_vllm_version_diff(integration_settings: Settings) -> None:
    diff = run_diff(integration_settings, "vllm@0.30.0", "vllm@0.33.0", load_mappings(), calls=False)
    assert isinstance(diff, VersionDiff)
    assert "--sleep-mode-backend" in diff.flags_added
    assert "--enable-mamba-fine-grained-prefix-cache" in diff.flags_removed
    moves = {(m.old, m.new): m for m in diff.moved}
    offline = moves[("vllm.entrypoints.offline_utils", "vllm.entrypoints.common.offline")]
    assert offline.kind == "module" and offline.evidence[0].startswith("git rename vllm/entrypoints/offline_utils.py")
    # A moved module is not also listed as removed.
    assert "vllm.entrypoints.offline_utils" not in diff.removed


@pytest.mark.integration
@pytest.mark.slow
def test_sglang_version_diff_for_one_concept(integration_settings: Settings) -> None:
    diff = run_diff(integration_settings, "sglang@0.5.20", "sglang@0.5.23", load_mappings(),
                    concept="prefix-cache", calls=False)
    assert isinstance(diff, VersionDiff)
    assert "sglang.srt.mem_cache.chunk_cache" in diff.removed
    assert "sglang.srt.mem_cache.radix_cache.RadixCache.cache_finished_req" in diff.removed
    modules = ("sglang.srt.mem_cache.radix_cache", "sglang.srt.mem_cache.base_prefix_cache")
    assert diff.added and all(n.startswith(modules) for n in diff.added)


@pytest.mark.integration
@pytest.mark.slow
def test_vllm_sglang_design_diff_scheduler(integration_settings: Settings) -> None:
    diff = run_diff(integration_settings, "vllm@0.30.0", "sglang@0.5.20", load_mappings(),
                    concept="scheduler", calls=False)
    assert isinstance(diff, DesignDiff)
    [concept] = diff.concepts
    left = {s.name: s.attributes for s in concept.left.state}
    right = {s.name: s.attributes for s in concept.right.state}
    vllm_sched = {a.split(":")[0] for a in left["vllm.v1.core.sched.scheduler.Scheduler"]}
    sglang_sched = {a.split(":")[0] for a in right["sglang.srt.managers.scheduler.Scheduler"]}
    assert {"waiting", "running", "kv_cache_manager"} <= vllm_sched
    assert {"waiting_queue", "running_batch", "tree_cache"} <= sglang_sched
    knobs = {k.name: k for k in concept.right.knobs}
    assert knobs["--schedule-policy"].found and knobs["--chunked-prefill-size"].found
