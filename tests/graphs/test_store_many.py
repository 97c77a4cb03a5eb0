"""Several targets built at once (child processes) give the graphs one process gives."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from analyzer.graphs.store import (
    _build_in_children,
    _source_bytes,
    directory_target,
    load_graphs,
    load_graphs_many,
)
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


def test_more_targets_than_workers(tmp_path: Path) -> None:
    """Three targets on two workers: the third starts when one of the first ends, and
    each comes out as one process builds it."""
    names = ("imports_alias", "generators", "lambdas")
    targets = [directory_target(CASES / name, as_package=False) for name in names]
    settings = Settings(cache_dir=tmp_path / "pool")
    _build_in_children(settings, targets, workers=2)
    for target in targets:
        got = load_graphs(settings, target)  # read from the cache the children wrote
        want = load_graphs(Settings(cache_dir=tmp_path / "one"), target)
        assert got.meta == want.meta
        assert nx.utils.graphs_equal(got.calls.to_nx(), want.calls.to_nx())
    assert _source_bytes(targets[0]) == sum((CASES / names[0] / p).stat().st_size for p in targets[0].paths or ())
