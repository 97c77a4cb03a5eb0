"""Fetching locked releases into the git store: verification, idempotence, atomicity."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import git
import pytest
from snapshot_builders import DEMO_FILES, build_sdist, build_wheel, sha256, write_lock

from analyzer.settings import Settings
from analyzer.snapshots import (
    ensure_snapshot,
    fetch_snapshot,
    is_fetched,
    list_snapshots,
    open_snapshot,
)
from analyzer.snapshots.download import pip_download, pip_download_command
from analyzer.snapshots.gitstore import GitStore
from analyzer.snapshots.locks import load_locks
from analyzer.snapshots.models import SnapshotError


def test_fetch_from_wheel_stores_text_tree_and_commit(demo_release) -> None:
    snap = fetch_snapshot(
        demo_release.settings,
        demo_release.ref,
        wheel=demo_release.wheel,
        lock_dir=demo_release.lock_dir,
    )
    assert snap.kind == "release"
    assert snap.packages == ("demo",)
    assert snap.upstream_commit == "abc1234de"
    assert snap.source == "demo-1.0-py3-none-any.whl"
    assert (snap.tree / "demo" / "core.py").read_text() == DEMO_FILES["demo/core.py"]
    assert not (snap.tree / "demo" / "_C.abi3.so").exists()  # binaries are never stored
    assert not (snap.tree / "demo" / "blob.txt").exists()  # NUL bytes: binary despite the name
    assert list(snap.python_files()) == ["demo/__init__.py", "demo/_version.py", "demo/core.py"]
    # The tree is a commit of the store, tagged with the ref.
    store = git.Repo(demo_release.settings.snapshot_store / "store.git")
    assert store.commit("refs/tags/demo@1.0").hexsha == snap.store_commit
    stored = sorted(
        b.path for b in store.commit(snap.store_commit).tree.traverse() if b.type == "blob"
    )
    on_disk = sorted(
        p.relative_to(snap.tree).as_posix() for p in snap.tree.rglob("*") if p.is_file()
    )
    assert stored == on_disk
    # Stored files are read-only: later stages must not edit a snapshot.
    assert not (snap.tree / "demo" / "core.py").stat().st_mode & 0o222


def test_fetch_from_wheelhouse_and_reopen_offline(demo_release) -> None:
    s = demo_release.settings
    snap = fetch_snapshot(
        s, "demo@1.0", find_links=demo_release.wheelhouse, lock_dir=demo_release.lock_dir
    )
    demo_release.wheel.unlink()  # nothing upstream is needed any more
    again = open_snapshot(s, "demo@1.0")
    assert again == snap
    assert ensure_snapshot(s, "demo@1.0", lock_dir=demo_release.lock_dir) == snap


def test_sha_mismatch_names_both_hashes_and_stores_nothing(demo_release, tmp_path: Path) -> None:
    other = build_wheel(
        tmp_path / "demo-1.0-py3-none-any.whl", {"demo/__init__.py": "changed = True\n"}
    )
    with pytest.raises(SnapshotError) as info:
        fetch_snapshot(
            demo_release.settings, "demo@1.0", wheel=other, lock_dir=demo_release.lock_dir
        )
    message = str(info.value)
    assert sha256(demo_release.wheel) in message and sha256(other) in message
    assert not is_fetched(demo_release.settings, "demo@1.0")
    assert not (demo_release.settings.snapshot_store / "trees" / "demo@1.0").exists()
    assert list((demo_release.settings.snapshot_store / "tmp").iterdir()) == []


def test_refetch_is_a_noop(demo_release) -> None:
    s, locks = demo_release.settings, demo_release.lock_dir
    first = fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=locks)
    marker = first.tree / "demo" / "core.py"
    before = marker.stat().st_mtime_ns
    demo_release.wheel.unlink()  # a second fetch must not even look for the artifact
    second = fetch_snapshot(s, "demo@1.0", lock_dir=locks)
    assert second == first
    assert marker.stat().st_mtime_ns == before


def test_store_commit_is_deterministic(demo_release, tmp_path: Path) -> None:
    a = fetch_snapshot(
        demo_release.settings, "demo@1.0", wheel=demo_release.wheel, lock_dir=demo_release.lock_dir
    )
    other = Settings(cache_dir=tmp_path / "other-cache")
    b = fetch_snapshot(other, "demo@1.0", wheel=demo_release.wheel, lock_dir=demo_release.lock_dir)
    assert a.store_commit == b.store_commit


def test_killed_after_extraction_leaves_no_snapshot_and_retry_succeeds(
    demo_release, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, locks = demo_release.settings, demo_release.lock_dir

    def killed(self: GitStore, *args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt("killed mid-fetch")

    monkeypatch.setattr(GitStore, "commit_tree", killed)
    with pytest.raises(KeyboardInterrupt):
        fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=locks)
    monkeypatch.undo()
    assert not is_fetched(s, "demo@1.0")
    assert [r.fetched for r in list_snapshots(s, lock_dir=locks)] == [False]
    with pytest.raises(SnapshotError, match=r"not fetched; run `atlas snapshot fetch demo@1.0`"):
        open_snapshot(s, "demo@1.0")
    snap = fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=locks)
    assert (snap.tree / "demo" / "core.py").is_file()


def test_killed_between_publish_steps_is_not_taken_as_complete(
    demo_release, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree was moved into place but the tag (the commit point) never written,
    plus a staging folder a SIGKILL left behind: both are discarded on retry."""
    s, locks = demo_release.settings, demo_release.lock_dir

    def publish_then_die(self: GitStore, name: str, commit: str, staged: Path) -> None:
        (staged / "demo" / "core.py").chmod(0o644)
        (staged / "demo" / "core.py").write_text("half-written\n")
        self.tree_path(name).parent.mkdir(parents=True, exist_ok=True)
        staged.rename(self.tree_path(name))
        raise KeyboardInterrupt("killed before the tag")

    monkeypatch.setattr(GitStore, "publish", publish_then_die)
    with pytest.raises(KeyboardInterrupt):
        fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=locks)
    monkeypatch.undo()
    leftover = s.snapshot_store / "tmp" / "fetch-sigkilled"
    (leftover / "tree").mkdir(parents=True)
    ghost = s.snapshot_store / "trees" / "ghost@1"  # an orphan of another, never-tagged fetch
    (ghost / "pkg").mkdir(parents=True)
    assert (s.snapshot_store / "trees" / "demo@1.0").exists()
    assert not is_fetched(s, "demo@1.0")
    assert [r.fetched for r in list_snapshots(s, lock_dir=locks)] == [False]

    snap = fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=locks)
    assert (snap.tree / "demo" / "core.py").read_text() == DEMO_FILES["demo/core.py"]
    assert not leftover.exists()
    assert not ghost.exists()


def test_missing_tree_is_rebuilt_from_the_store(demo_release) -> None:
    import shutil

    snap = fetch_snapshot(
        demo_release.settings, "demo@1.0", wheel=demo_release.wheel, lock_dir=demo_release.lock_dir
    )
    shutil.rmtree(snap.tree)
    again = open_snapshot(demo_release.settings, "demo@1.0")
    assert (again.tree / "demo" / "core.py").read_text() == DEMO_FILES["demo/core.py"]


def test_sdist_release(tmp_path: Path, settings: Settings) -> None:
    sdist = build_sdist(
        tmp_path / "demo-2.0.tar.gz",
        {
            "demo/__init__.py": "",
            "demo/mod.py": "A = 1\n",
            "setup.py": "pass\n",
            "demo/x.so": b"\0\0",
        },
        top="demo-2.0",
    )
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "2.0", sdist)
    assert load_locks(locks)["demo@2.0"].kind == "sdist"
    snap = fetch_snapshot(settings, "demo@2.0", find_links=tmp_path, lock_dir=locks)
    assert (snap.tree / "demo" / "mod.py").read_text() == "A = 1\n"
    assert snap.packages == ("demo",)
    assert not (snap.tree / "demo" / "x.so").exists()


def test_hostile_wheel_is_refused_without_a_snapshot(tmp_path: Path, settings: Settings) -> None:
    wheel = build_wheel(
        tmp_path / "demo-1.0-py3-none-any.whl", {"demo/__init__.py": "", "../../escape.py": "x"}
    )
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "1.0", wheel)
    with pytest.raises(SnapshotError, match="escapes the archive"):
        fetch_snapshot(settings, "demo@1.0", wheel=wheel, lock_dir=locks)
    assert not is_fetched(settings, "demo@1.0")
    assert not list(tmp_path.parent.glob("escape.py")) and not (tmp_path / "escape.py").exists()


def test_lock_commit_disagreeing_with_the_artifact_is_an_error(
    tmp_path: Path, settings: Settings
) -> None:
    wheel = build_wheel(tmp_path / "demo-1.0-py3-none-any.whl", DEMO_FILES)
    locks = tmp_path / "locks"
    write_lock(locks, "demo", "1.0", wheel, upstream_commit="0123456789")
    with pytest.raises(SnapshotError, match="artifact records abc1234de"):
        fetch_snapshot(settings, "demo@1.0", wheel=wheel, lock_dir=locks)


def test_unknown_ref_and_bad_inputs_are_clear_errors(demo_release, tmp_path: Path) -> None:
    s, locks = demo_release.settings, demo_release.lock_dir
    with pytest.raises(SnapshotError, match="not pinned"):
        fetch_snapshot(s, "demo@9.9", lock_dir=locks)
    with pytest.raises(SnapshotError, match="no such file"):
        fetch_snapshot(s, "demo@1.0", wheel=tmp_path / "nope.whl", lock_dir=locks)
    with pytest.raises(SnapshotError, match="invalid snapshot name"):
        fetch_snapshot(s, "demo@../../x", lock_dir=locks)
    with pytest.raises(SnapshotError, match="does not exist"):
        load_locks(tmp_path / "no-such-dir")


def test_pip_download_path_offline(
    demo_release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real pip, kept offline by PIP_NO_INDEX and fed from a find-links folder."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    entry = load_locks(demo_release.lock_dir)["demo@1.0"]
    got = pip_download(entry, tmp_path / "dl", find_links=demo_release.wheelhouse)
    assert got.name == entry.artifact and sha256(got) == entry.sha256
    missing = replace(entry, version="7.0")
    with pytest.raises(SnapshotError, match=r"pip could not download demo==7\.0"):
        pip_download(missing, tmp_path / "dl2", find_links=demo_release.wheelhouse)


def test_pip_command_asks_for_the_locked_wheel_tags() -> None:
    locks = load_locks()  # the repository's real lock files
    sglang = pip_download_command(locks["sglang@0.5.20"], Path("/d"), None)
    assert sglang[-1] == "sglang==0.5.20"
    assert sglang[sglang.index("--platform") + 1] == "manylinux_2_34_x86_64"
    assert sglang[sglang.index("--python-version") + 1] == "3.11"
    assert sglang[sglang.index("--abi") + 1] == "cp311"
    vllm = pip_download_command(locks["vllm@0.30.0"], Path("/d"), Path("/wh"))
    assert vllm[vllm.index("--abi") + 1] == "abi3"
    assert "--python-version" not in vllm  # abi3: the running interpreter qualifies
    assert vllm[vllm.index("--find-links") + 1] == "/wh"
    assert {"--no-deps", "--only-binary=:all:"} <= set(vllm)


_KILL_SCRIPT = """
import os, signal, sys
from pathlib import Path
from analyzer.settings import Settings
from analyzer.snapshots import fetch_snapshot
from analyzer.snapshots.gitstore import GitStore

def publish_and_die(self, name, commit, staged):
    self.tree_path(name).parent.mkdir(parents=True, exist_ok=True)
    staged.rename(self.tree_path(name))
    os.kill(os.getpid(), signal.SIGKILL)  # no finally, no cleanup, the lock dies with us

GitStore.publish = publish_and_die
cache, wheel, locks = map(Path, sys.argv[1:4])
fetch_snapshot(Settings(cache_dir=cache), "demo@1.0", wheel=wheel, lock_dir=locks)
"""


def test_sigkill_mid_publish_then_retry(demo_release) -> None:
    """A real SIGKILL between moving the tree and writing the tag."""
    import signal
    import subprocess
    import sys

    s = demo_release.settings
    args = [str(s.cache_dir), str(demo_release.wheel), str(demo_release.lock_dir)]
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_SCRIPT, *args], capture_output=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert (s.snapshot_store / "trees" / "demo@1.0").is_dir()  # the orphan is there...
    assert not is_fetched(s, "demo@1.0")  # ...but never taken as complete
    with pytest.raises(SnapshotError, match="not fetched"):
        open_snapshot(s, "demo@1.0")
    snap = fetch_snapshot(s, "demo@1.0", wheel=demo_release.wheel, lock_dir=demo_release.lock_dir)
    assert (snap.tree / "demo" / "core.py").read_text() == DEMO_FILES["demo/core.py"]
    assert list((s.snapshot_store / "tmp").iterdir()) == []
