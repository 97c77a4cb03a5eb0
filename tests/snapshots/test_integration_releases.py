"""The four real releases, fetched through `pip download` (network).

Shares `integration_settings` (tests/conftest.py) with the other integration
tests, so each wheel is fetched once per cache. `ATLAS_WHEELHOUSE` may name a
folder already holding the wheels (then pip is not called at all).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.settings import Settings
from analyzer.snapshots import ensure_snapshot, fetch_snapshot, is_fetched, load_locks
from analyzer.snapshots.download import sha256_file
from analyzer.snapshots.gitstore import GitStore

pytestmark = pytest.mark.integration

RELEASES = ["vllm@0.30.0", "vllm@0.33.0", "sglang@0.5.20", "sglang@0.5.23"]


def _wheelhouse() -> Path | None:
    env = os.environ.get("ATLAS_WHEELHOUSE")
    return Path(env) if env else None


@pytest.mark.parametrize("ref", RELEASES)
def test_release_fetches_and_matches_its_lock(integration_settings: Settings, ref: str) -> None:
    entry = load_locks()[ref]
    snap = fetch_snapshot(integration_settings, ref, find_links=_wheelhouse())
    assert is_fetched(integration_settings, ref)
    assert snap.source == entry.artifact
    assert snap.packages == (entry.package,)
    assert len(list(snap.python_files())) > 1000
    assert not list(snap.tree.rglob("*.so"))
    with GitStore(integration_settings.snapshot_store) as store:
        stored = store.read(ref)
    assert stored is not None and stored.meta["sha256"] == entry.sha256  # verified at fetch
    house = _wheelhouse()
    if house is not None and (house / entry.artifact).is_file():
        assert sha256_file(house / entry.artifact) == entry.sha256
    # Fetching again is a no-op returning the same store commit.
    assert fetch_snapshot(integration_settings, ref).store_commit == snap.store_commit


def test_vllm_scheduler_and_commit(integration_settings: Settings) -> None:
    snap = ensure_snapshot(integration_settings, "vllm@0.30.0")
    assert (snap.tree / "vllm/v1/core/sched/scheduler.py").is_file()
    assert snap.resolve_repo_path("vllm/v1/core/sched/scheduler.py") is not None
    assert snap.upstream_commit == "ced6857af"  # from vllm/_version.py __commit_id__
    assert ensure_snapshot(integration_settings, "vllm@0.33.0").upstream_commit == "4ba787ec9"


def test_sglang_repository_paths_resolve_through_the_prefix(integration_settings: Settings) -> None:
    snap = ensure_snapshot(integration_settings, "sglang@0.5.20")
    assert snap.layout_prefix == "python/"
    resolved = snap.resolve_repo_path("python/sglang/srt/managers/scheduler.py")
    assert resolved == snap.tree / "sglang/srt/managers/scheduler.py"
    assert resolved.is_file()
    assert snap.package_to_repo_path("sglang/srt/managers/scheduler.py") == (
        "python/sglang/srt/managers/scheduler.py"
    )
    assert snap.upstream_commit is None  # SGLang wheels do not record their commit
