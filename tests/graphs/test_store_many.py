"""Several targets built at once (child processes) give the graphs one process gives."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from analyzer.graphs.store import directory_target, load_graphs, load_graphs_many
from analyzer.settings import Settings

CASES = Path(__file__).parent / "cases"


def test_parallel_build_matches_one_process(tmp_path: Path) -> None:
    targets = [directory_target(CASES / name, as_package=False) for name in ("imports_alias", "generators")]
    many = load_graphs_many(Settings(cache_dir=tmp_path / "many"), targets)
    for target, got in zip(targets, many, strict=True):
        want = load_graphs(Settings(cache_dir=tmp_path / "one"), target)
        assert got.meta == want.meta
        assert got.meta["edges"] > 0
        assert nx.utils.graphs_equal(got.calls.to_nx(), want.calls.to_nx())
        assert dict(got.state) == dict(want.state)


def test_cached_targets_are_not_rebuilt(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path)
    target = directory_target(CASES / "generators", as_package=False)
    first = load_graphs_many(settings, [target])[0]
    cached = tmp_path / "graphs" / target.key / "graphs.pickle"
    stamp = cached.stat().st_mtime_ns
    again = load_graphs_many(settings, [target, target])  # a repeated target is built once
    assert cached.stat().st_mtime_ns == stamp
    assert [g.meta for g in again] == [first.meta, first.meta]
