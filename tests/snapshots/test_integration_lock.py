"""`atlas snapshot lock` against the real package index (network), and the sample
book followed into a release nobody locked by hand.

Cheap on purpose: SGLang 0.5.21 (a ~39 MB wheel) is locked for real, verified
against the sha256 PyPI publishes; `vllm@latest` resolves on PyPI and, while the
newest vLLM is one the toolkit already locks (0.33.0, fetched by the release tests
in the same cache), records that very artifact without another 336 MB download.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.follow import follow_book
from analyzer.refs.loader import load_pin
from analyzer.settings import Settings
from analyzer.snapshots import is_fetched, load_locks, open_snapshot
from analyzer.snapshots.lock import lock_releases
from analyzer.snapshots.releases import IndexOptions

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = Path(__file__).resolve().parents[2] / "examples" / "book"


def test_lock_real_releases_and_follow_the_sample_book(
    integration_settings: Settings, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    results = lock_releases(
        integration_settings, ["sglang@0.5.21", "vllm@latest"], IndexOptions(), lock_dir=locks
    )
    sglang, vllm = results
    assert sglang.ref == "sglang@0.5.21" and sglang.artifact.endswith(".whl")
    assert sglang.upstream_commit is None  # SGLang wheels record none
    entry = load_locks(locks)["sglang@0.5.21"]
    assert entry.layout_prefix == "python/" and entry.sha256 == sglang.sha256
    snap = open_snapshot(integration_settings, "sglang@0.5.21")
    assert (snap.package_root / "sglang" / "srt" / "managers" / "scheduler.py").is_file()
    assert vllm.ref in load_locks(locks) and is_fetched(integration_settings, vllm.ref)
    again = lock_releases(integration_settings, ["sglang@0.5.21"], IndexOptions(), lock_dir=locks)
    assert again[0].action == "unchanged"

    _, timelines, followed = follow_book(
        integration_settings, [BOOK], ["sglang@0.5.21"], load_pin, locked=list(load_locks(locks))
    )
    assert followed == ["sglang@0.5.21"]
    assert timelines and {t.pin for t in timelines} == {"sglang@0.5.20"}
    assert all(set(t.statuses) == {"sglang@0.5.21"} for t in timelines)
    broken = [t for t in timelines if t.broke_in]
    print(f"sample book into sglang@0.5.21: {len(timelines)} references, {len(broken)} break")
