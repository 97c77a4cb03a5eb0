from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.loader import _cached
from analyzer.refs.pinview import PinView
from analyzer.refs.symbols import SqliteSymbols


def test_save_and_load_round_trip(tmp_path: Path, vllm30: PinView) -> None:
    target = tmp_path / "views" / "vllm@0.30.0.sqlite"
    vllm30.save(target)
    loaded = PinView.load(target)
    assert isinstance(loaded.table, SqliteSymbols)
    assert (loaded.pin, loaded.kind, loaded.layout_prefix, loaded.packages) == ("vllm@0.30.0", "release", "", ("vllm",))
    assert loaded.files == vllm30.files
    assert loaded.flags == vllm30.flags and loaded.envs == vllm30.envs
    assert len(loaded.table) == len(vllm30.table)
    for query in ("Scheduler.schedule", "vllm.LLM", "Scheduler", "vllm.v1.core.sched.scheduler", "Nope"):
        assert loaded.find_symbol(query) == vllm30.find_symbol(query), query
    scheduler = "vllm.v1.core.sched.scheduler.Scheduler"
    assert sorted(e.full for e in loaded.symbols_under(scheduler)) == sorted(e.full for e in vllm30.symbols_under(scheduler))
    assert loaded.definitions_in("vllm/v1/core/kv_cache_manager.py") == vllm30.definitions_in("vllm/v1/core/kv_cache_manager.py")
    assert loaded.find_symbol(scheduler)[0].bases == ("SchedulerInterface",)
    assert len(loaded.defined_names()) == len(vllm30.defined_names()) > 0
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary files left


def test_damaged_or_missing_cache_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    assert _cached(tmp_path / "missing.sqlite") is None
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all")
    assert _cached(bad) is None
    with pytest.raises(ValueError):
        PinView.load(bad)
