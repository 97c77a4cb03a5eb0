"""`atlas diff` on the real pinned releases (network: fetches the wheels). Call graphs are
left out here (`calls=False`): building them for whole releases takes minutes; the unit
tests cover the call-graph parts on small trees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analyzer.diff import DesignDiff, VersionDiff, run_diff
from analyzer.mappings import load_mappings
from analyzer.settings import Settings
from analyzer.snapshots import ensure_snapshot


@pytest.mark.integration
@pytest.mark.slow
def test_vllm_version_diff(integration_settings: Settings) -> None:
    diff = run_diff(integration_settings, "vllm@0.30.0", "vllm@0.33.0", load_mappings(), calls=False)
    assert isinstance(diff, VersionDiff)
    assert "--sleep-mode-backend" in diff.flags_added
    assert "--enable-mamba-fine-grained-prefix-cache" in diff.flags_removed
    # 0.33.0's enable/disable action gives each --enable-X flag a --disable-X (and back):
    # the same flags, new option strings.
    assert {"--disable-chunked-prefill", "--disable-auto-tool-choice", "--enable-cascade-attn"} <= set(diff.options_added)
    assert len([o for o in diff.options_added if o.startswith(("--enable-", "--disable-"))]) >= 40
    moves = {(m.old, m.new): m for m in diff.moved}
    offline = moves[("vllm.entrypoints.offline_utils", "vllm.entrypoints.common.offline")]
    assert offline.kind == "module" and offline.evidence[0].startswith("git rename vllm/entrypoints/offline_utils.py")
    # A moved module is not also listed as removed.
    assert "vllm.entrypoints.offline_utils" not in diff.removed
    _check_kv_cache_planning_moves(integration_settings, diff)


def _top_level(path: Path) -> set[str]:
    return {s.name for s in ast.parse(path.read_text()).body if isinstance(s, ast.FunctionDef | ast.ClassDef)}


def _check_kv_cache_planning_moves(settings: Settings, diff: VersionDiff) -> None:
    """0.33.0 moved half of `vllm.v1.core.kv_cache_utils` into a new `kv_cache_planning`:
    each definition that left the one for the other (read off the sources with `ast`) is a
    move, none is reported removed, and the module is reported split."""
    old = ensure_snapshot(settings, "vllm@0.30.0").package_root / "vllm/v1/core"
    new = ensure_snapshot(settings, "vllm@0.33.0").package_root / "vllm/v1/core"
    left = _top_level(old / "kv_cache_utils.py") - _top_level(new / "kv_cache_utils.py")
    went = left & _top_level(new / "kv_cache_planning.py")
    assert len(went) >= 30 and {"get_kv_cache_configs", "get_kv_cache_groups"} <= went
    moves = {m.old: m for m in diff.moved}
    for name in sorted(went):
        move = moves[f"vllm.v1.core.kv_cache_utils.{name}"]
        assert (move.new, move.kind) == (f"vllm.v1.core.kv_cache_planning.{name}", "moved")
        assert "vllm.v1.core.kv_cache_utils still exists" in move.evidence
        assert move.old not in diff.removed
    split = next(m for m in diff.modules if m.old == "vllm.v1.core.kv_cache_utils")
    assert split.kind == "split" and split.new == ("vllm.v1.core.kv_cache_planning",)
    # vllm/multimodal/cache.py became a package: a fold, its names still importable from it.
    fold = next(m for m in diff.modules if m.old == "vllm.multimodal.cache")
    assert fold.kind == "package" and "vllm.multimodal.cache.base" in fold.new
    assert moves["vllm.multimodal.cache.BaseMultiModalReceiverCache"].kind == "re-exported"


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
