"""Git pins against a repository made in the test, and diffs between snapshots."""

from __future__ import annotations

import tomllib
from pathlib import Path

import git
import pytest
from snapshot_builders import build_wheel, commit_files, write_lock

from analyzer.settings import Settings
from analyzer.snapshots import (
    add_git_pin,
    diff_changes,
    diff_snapshots,
    fetch_snapshot,
    list_snapshots,
    open_snapshot,
    remove_snapshot,
)
from analyzer.snapshots.models import SnapshotError


def test_short_sha_is_resolved_and_recorded_in_full(
    settings: Settings, upstream_repo, tmp_path: Path
) -> None:
    repo, (first, _second) = upstream_repo
    snap, added = add_git_pin(
        settings, "demo@v1", repo.working_tree_dir, first[:7], layout_prefix="python/"
    )
    assert added
    assert snap.name == "demo@v1"
    assert snap.kind == "git"
    assert snap.upstream_commit == first
    assert snap.layout_prefix == "python/"
    assert snap.package_root == snap.tree / "python"
    assert snap.packages == ("demo",)
    assert (snap.tree / "README.md").is_file()  # git pins keep the repository layout
    resolved = snap.resolve_repo_path("python/demo/old_name.py")
    assert resolved is not None and resolved.read_text().startswith("def f0")
    assert snap.resolve_repo_path("README.md") is None  # outside the package
    assert "demo/old_name.py" in list(snap.python_files())
    pins = tomllib.loads((settings.snapshot_store / "pins.toml").read_text())["pins"]
    assert pins["demo@v1"]["commit"] == first
    assert pins["demo@v1"]["url"] == str(Path(repo.working_tree_dir).resolve())


def test_bare_name_becomes_name_at_sha12_and_resolves_alone(
    settings: Settings, upstream_repo
) -> None:
    repo, (first, _second) = upstream_repo
    snap, _ = add_git_pin(settings, "mytree", repo.working_tree_dir, first[:10])
    assert snap.name == f"mytree@{first[:12]}"
    assert open_snapshot(settings, "mytree") == snap
    assert open_snapshot(settings, f"mytree@{first[:12]}") == snap


def test_file_url_works_and_layout_prefix_defaults_from_the_lock(
    settings: Settings, upstream_repo, tmp_path: Path
) -> None:
    repo, (_first, second) = upstream_repo
    wheel = build_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/__init__.py": ""})
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "1.0", wheel, layout_prefix="python/")
    snap, _ = add_git_pin(
        settings, "demo@head", f"file://{repo.working_tree_dir}", second, lock_dir=locks
    )
    assert snap.layout_prefix == "python/"
    assert (snap.package_root / "demo" / "new_name.py").is_file()


def test_unknown_and_invalid_shas_are_clear_errors(settings: Settings, upstream_repo) -> None:
    repo, _ = upstream_repo
    with pytest.raises(SnapshotError, match="commit deadbeef not found in"):
        add_git_pin(settings, "demo@x", repo.working_tree_dir, "deadbeef")
    with pytest.raises(SnapshotError, match="not a commit SHA"):
        add_git_pin(settings, "demo@x", repo.working_tree_dir, "--upload-pack=evil")
    with pytest.raises(SnapshotError, match="does not exist"):
        add_git_pin(settings, "demo@x", "/no/such/repo", "abcdef1")
    with pytest.raises(SnapshotError, match="transport helpers"):
        add_git_pin(settings, "demo@x", "ext::sh -c touch% /tmp/pwned", "abcdef1")
    assert not (settings.snapshot_store / "pins.toml").exists()
    assert [r for r in list_snapshots(settings) if r.kind == "git"] == []


def test_new_upstream_commits_are_fetched_into_the_mirror(
    settings: Settings, upstream_repo
) -> None:
    repo, (first, _second) = upstream_repo
    add_git_pin(settings, "demo@a", repo.working_tree_dir, first)
    third = commit_files(repo, {"python/demo/later.py": "LATER = 3\n"}, "third")
    snap, _ = add_git_pin(settings, "demo@b", repo.working_tree_dir, third[:8])
    assert (snap.tree / "python" / "demo" / "later.py").read_text() == "LATER = 3\n"


def test_readding_is_a_noop_and_conflicts_are_refused(settings: Settings, upstream_repo) -> None:
    repo, (first, second) = upstream_repo
    snap, added = add_git_pin(settings, "demo@v1", repo.working_tree_dir, first)
    assert added
    again, added_again = add_git_pin(settings, "demo@v1", repo.working_tree_dir, first[:7])
    assert not added_again and again == snap
    with pytest.raises(SnapshotError, match="already pinned to"):
        add_git_pin(settings, "demo@v1", repo.working_tree_dir, second)


def test_pin_survives_a_deleted_source_and_store_tree(settings: Settings, upstream_repo) -> None:
    """After pinning, the mirror and store make the snapshot independent of the source."""
    import shutil

    repo, (first, _second) = upstream_repo
    snap, _ = add_git_pin(settings, "demo@v1", repo.working_tree_dir, first)
    shutil.rmtree(repo.working_tree_dir)
    shutil.rmtree(snap.tree)
    assert (open_snapshot(settings, "demo@v1").tree / "python" / "demo" / "old_name.py").is_file()
    removed = remove_snapshot(settings, "demo@v1")
    assert removed == ["snapshot demo@v1", "git pin demo@v1"]
    with pytest.raises(SnapshotError, match="not fetched"):
        open_snapshot(settings, "demo@v1")


def test_git_pin_can_be_refetched_from_its_mirror(settings: Settings, upstream_repo) -> None:
    repo, (first, _second) = upstream_repo
    add_git_pin(settings, "demo@v1", repo.working_tree_dir, first)
    from analyzer.snapshots.gitstore import GitStore

    GitStore(settings.snapshot_store).delete("demo@v1")  # tag and tree gone, pin kept
    assert [(r.name, r.fetched) for r in list_snapshots(settings) if r.kind == "git"] == [
        ("demo@v1", False)
    ]
    snap = fetch_snapshot(settings, "demo@v1")
    assert snap.upstream_commit == first


def test_diff_detects_the_rename(settings: Settings, upstream_repo) -> None:
    repo, (first, second) = upstream_repo
    add_git_pin(settings, "demo@v1", repo.working_tree_dir, first)
    add_git_pin(settings, "demo@v2", repo.working_tree_dir, second)
    changes = diff_changes(settings, "demo@v1", "demo@v2")
    renames = [c for c in changes if c.status == "R"]
    assert len(renames) == 1
    assert (renames[0].old_path, renames[0].new_path) == (
        "python/demo/old_name.py",
        "python/demo/new_name.py",
    )
    assert renames[0].similarity is not None and renames[0].similarity > 80
    assert [(c.status, c.new_path) for c in changes if c.status == "A"] == [
        ("A", "python/demo/added.py")
    ]
    text = diff_snapshots(settings, "demo@v1", "demo@v2")
    assert "rename from python/demo/old_name.py" in text
    assert "+def extra() -> None:" in text
    stat = diff_snapshots(settings, "demo@v1", "demo@v2", stat=True)
    assert "=> new_name.py" in stat and "2 files changed" in stat


def test_release_against_git_pin_compares_package_roots(
    settings: Settings, upstream_repo, tmp_path: Path
) -> None:
    repo, (first, _second) = upstream_repo
    body = (Path(repo.working_tree_dir) / "python/demo/new_name.py").read_text()
    wheel = build_wheel(
        tmp_path / "demo-1.0-py3-none-any.whl", {"demo/__init__.py": "", "demo/old_name.py": body}
    )
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "1.0", wheel, layout_prefix="python/")
    fetch_snapshot(settings, "demo@1.0", wheel=wheel, lock_dir=locks)
    add_git_pin(settings, "demo@v1", repo.working_tree_dir, first, lock_dir=locks)
    changes = {
        (c.status, c.old_path, c.new_path) for c in diff_changes(settings, "demo@v1", "demo@1.0")
    }
    # Both sides are seen from the package root: no python/ prefix, no README.
    assert ("M", "demo/old_name.py", "demo/old_name.py") in changes
    assert not any((c[1] or c[2] or "").startswith(("python/", "README")) for c in changes)


def test_git_pin_name_cannot_shadow_a_locked_release(
    settings: Settings, upstream_repo, tmp_path: Path
) -> None:
    repo, (first, _second) = upstream_repo
    wheel = build_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/__init__.py": ""})
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "1.0", wheel)
    with pytest.raises(SnapshotError, match="is a locked release"):
        add_git_pin(settings, "demo@1.0", repo.working_tree_dir, first, lock_dir=locks)


def test_symlinks_in_the_repository_are_skipped(settings: Settings, tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path / "withlink")
    root = Path(repo.working_tree_dir)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "alias.py").symlink_to("/etc/passwd")
    repo.index.add(["pkg/__init__.py", "pkg/alias.py"])
    sha = repo.index.commit("with a link").hexsha
    snap, _ = add_git_pin(settings, "linky@1", str(root), sha)
    assert (snap.tree / "pkg" / "__init__.py").is_file()
    assert not (snap.tree / "pkg" / "alias.py").exists()
