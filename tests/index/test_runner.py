"""index_tree / index_snapshot: errors, caching, invalidation, parallel runs, lookups."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from analyzer.index import SnapshotIndex, index_snapshot, index_tree
from analyzer.index.extract import extract_file
from analyzer.index.store import StoreError
from analyzer.settings import Settings
from analyzer.snapshots.models import Snapshot, SnapshotRef

from .fixtures import BROKEN, LATIN1, SCHED


def make_tree(root: Path) -> Path:
    pkg = root / "pkg"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""The package."""\n')
    (pkg / "sched.py").write_text(SCHED)
    (pkg / "core" / "other.py").write_text("class Scheduler:\n    def schedule(self):\n        pass\n")
    (pkg / "latin.py").write_bytes(LATIN1.encode("latin-1"))
    (pkg / "broken.py").write_text(BROKEN)
    (pkg / "bad.py").write_bytes(b"x = '\xff\xfe'\n")
    (pkg / "nopkg").mkdir()  # a folder without __init__.py is still walked
    (pkg / "nopkg" / "tool.py").write_text("def run():\n    return 1\n")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "src")


def test_index_reports_bad_files_and_indexes_the_rest(tree: Path, tmp_path: Path) -> None:
    index = index_tree(tree, db=tmp_path / "db.sqlite", jobs=1)
    assert sorted(index.modules) == [
        "pkg/__init__.py",
        "pkg/core/other.py",
        "pkg/latin.py",
        "pkg/nopkg/tool.py",
        "pkg/sched.py",
    ]
    reasons = {e.path: e.reason for e in index.errors}
    assert set(reasons) == {"pkg/bad.py", "pkg/broken.py"}
    assert reasons["pkg/broken.py"].startswith("ParserSyntaxError at ")
    assert reasons["pkg/bad.py"].startswith("UnicodeDecodeError")
    assert index.modules["pkg/latin.py"].docstring == "Café."
    # lazily decoded facts equal a direct extraction
    direct = extract_file(SCHED.encode(), "pkg/sched.py")
    assert index.modules["pkg/sched.py"] == direct
    counts = index.counts()
    assert counts["files"] == 7 and counts["modules"] == 5 and counts["errors"] == 2
    assert counts["classes"] == 3 and counts["methods"] == 6 and counts["functions"] == 4
    assert counts["call_sites"] == len(direct.calls) + 1  # latin.py's NAME.upper()
    assert counts["cache_hits"] == 0


def test_parallel_matches_serial(tree: Path, tmp_path: Path) -> None:
    serial = index_tree(tree, db=tmp_path / "a.sqlite", jobs=1)
    parallel = index_tree(tree, db=tmp_path / "b.sqlite", jobs=2)
    assert dict(parallel.modules) == dict(serial.modules)
    assert parallel.errors == serial.errors


def test_cache_hit_and_invalidation(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    first = index_tree(tree, db=db, jobs=1)
    assert first.stats.extracted == 7
    again = index_tree(tree, db=db, jobs=1)
    # errors are cached too: a broken file is not re-parsed while unchanged
    assert again.stats.cache_hits == 7 and again.stats.extracted == 0
    assert dict(again.modules) == dict(first.modules) and again.errors == first.errors

    (tree / "pkg" / "sched.py").write_text(SCHED.replace("def helper(x):", "def helper2(x):"))
    changed = index_tree(tree, db=db, jobs=1)
    assert changed.stats.cache_hits == 6 and changed.stats.extracted == 1
    assert [m.qualname for m in changed.find_symbol("helper2")] == ["helper2"]
    assert changed.find_symbol("pkg.sched.helper") == []


def test_warm_run_with_blobs_reads_facts_in_the_lookup(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    first = index_tree(tree, db=db, jobs=1)
    expected = dict(first.modules)
    warm = index_tree(tree, db=db, jobs=1, with_blobs=True)
    assert warm.stats.cache_hits == 7 and warm.errors == first.errors
    # the facts came with the lookup: no per-file read from the database is left to do
    with sqlite3.connect(db) as con:
        con.execute("UPDATE facts SET blob = NULL")
    assert dict(warm.modules) == expected
    lazy = index_tree(tree, db=db, jobs=1)
    with pytest.raises(StoreError, match="vanished"):
        dict(lazy.modules)


def test_extractor_version_invalidates(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "db.sqlite"
    index_tree(tree, db=db, jobs=1)
    import analyzer.index.runner as runner

    monkeypatch.setattr(runner, "CACHE_VERSION", f"test-next/{runner.CODEC_VERSION}")
    assert index_tree(tree, db=db, jobs=1).stats.cache_hits == 0


def test_explicit_paths(tree: Path, tmp_path: Path) -> None:
    index = index_tree(tree, ["pkg/sched.py", "pkg/latin.py"], db=tmp_path / "db.sqlite", jobs=1)
    assert sorted(index.modules) == ["pkg/latin.py", "pkg/sched.py"]
    missing = index_tree(tree, ["pkg/nothere.py"], db=tmp_path / "db.sqlite", jobs=1)
    assert [e.path for e in missing.errors] == ["pkg/nothere.py"]
    assert "FileNotFoundError" in missing.errors[0].reason


@pytest.fixture
def index(tree: Path, tmp_path: Path) -> SnapshotIndex:
    return index_tree(tree, db=tmp_path / "db.sqlite", jobs=1, layout_prefix="python/")


def test_find_symbol_forms(index: SnapshotIndex) -> None:
    (m,) = index.find_symbol("pkg.sched.Scheduler.schedule")
    assert (m.path, m.qualname, m.kind, m.line, m.end_line) == ("pkg/sched.py", "Scheduler.schedule", "method", 47, 72)
    assert index.find_symbol("pkg/sched.py:Scheduler.schedule") == [m]
    assert index.find_symbol("python/pkg/sched.py:Scheduler.schedule") == [m]  # repository path
    (mod,) = index.find_symbol("python/pkg/sched.py")
    assert (mod.kind, mod.module, mod.end_line) == ("module", "pkg.sched", 86)
    assert index.find_symbol("pkg/sched.py") == [mod]
    assert [x.kind for x in index.find_symbol("pkg")] == ["module"]
    both = index.find_symbol("Scheduler.schedule")
    assert sorted(x.dotted for x in both) == ["pkg.core.other.Scheduler.schedule", "pkg.sched.Scheduler.schedule"]
    assert sorted(x.path for x in index.find_symbol("Scheduler")) == ["pkg/core/other.py", "pkg/sched.py"]
    assert [x.dotted for x in index.find_symbol("sched.helper")] == ["pkg.sched.helper"]
    assert index.find_symbol("NoSuchThing") == [] and index.find_symbol("") == []
    assert index.by_module("pkg.sched") is index.modules["pkg/sched.py"]
    assert index.by_module("pkg").docstring == "The package."  # type: ignore[union-attr]
    assert index.by_module("pkg.nope") is None
    fact = index.fact(m)
    assert fact is not None and fact.qualname == "Scheduler.schedule"  # type: ignore[union-attr]


def test_index_snapshot_uses_manifest(tree: Path, tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path / "cache")
    snap = Snapshot(
        ref=SnapshotRef("pkg", "1.0"),
        kind="release",
        tree=tree,
        layout_prefix="python/",
        upstream_commit=None,
        store_commit="c0ffee",
        packages=("pkg",),
    )
    cold = index_snapshot(settings, snap, jobs=1)
    assert cold.name == "pkg@1.0" and not cold.stats.manifest_hit
    assert len(cold.modules) == 5 and len(cold.errors) == 2
    warm = index_snapshot(settings, snap, jobs=1)
    # A stored tree is immutable under its store commit: the path -> hash manifest
    # spares even the re-hash; failed files come back from the cache as errors.
    assert warm.stats.manifest_hit and warm.stats.cache_hits == 7 and warm.stats.extracted == 0
    assert dict(warm.modules) == dict(cold.modules) and warm.errors == cold.errors
    assert warm.find_symbol("python/pkg/sched.py")[0].module == "pkg.sched"
    other = Snapshot(**{**{f: getattr(snap, f) for f in snap.__slots__}, "store_commit": "beef"})
    assert not index_snapshot(settings, other, jobs=1).stats.manifest_hit


def test_unusable_db_path_is_a_clear_error(tree: Path, tmp_path: Path) -> None:
    from analyzer.index.store import StoreError

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot open index database"):
        index_tree(tree, db=blocker / "db.sqlite", jobs=1)


def test_db_integrity_after_run(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    index_tree(tree, db=db, jobs=2)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # one row per distinct content, failed files included
    assert con.execute("SELECT count(*) FROM facts").fetchone()[0] == 7
