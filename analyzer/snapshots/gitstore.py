"""The local git store: one bare repository holding every snapshot as a commit.

Layout under `settings.snapshot_store`:

    store.git/            bare repository; `refs/tags/<project>@<version>` per snapshot
    trees/<ref>/          checked-out tree per snapshot (read-only use by later stages)
    tmp/                  staging; anything here is unpublished and may be deleted
    mirrors/<hash>.git    bare clones of git-pin sources (see pins.py)
    pins.toml             the user's git pins

A snapshot is complete exactly when its tag exists. Publishing renames the
staged tree into `trees/` first and creates the tag last (an atomic ref
update), so a process killed at any point leaves either nothing or an
untagged leftover that the next fetch discards.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from analyzer.snapshots.models import SnapshotError

TAG_PREFIX = "refs/tags/"
_MESSAGE_HEAD = "atlas snapshot "
# Fixed identity and date: the same tree always gives the same store commit.
_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "serving-atlas",
    "GIT_AUTHOR_EMAIL": "atlas@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "serving-atlas",
    "GIT_COMMITTER_EMAIL": "atlas@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
# Stored bytes must be exactly the archive's: no eol conversion, no filters.
_ATTRIBUTES = "* -text -filter -ident -eol -working-tree-encoding\n"


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    name: str
    commit: str
    meta: dict[str, Any]


class GitStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = root / "store.git"
        self.trees = root / "trees"
        self.tmp = root / "tmp"
        self._repo: git.Repo | None = None

    def __enter__(self) -> GitStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ setup

    def repo(self) -> git.Repo:
        if self._repo is None:
            if not (self.git_dir / "HEAD").exists():
                self._init()
            self._repo = git.Repo(self.git_dir)
        return self._repo

    def _init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="init-", dir=self._tmp()))
        repo = git.Repo.init(staging, bare=True)
        with repo.config_writer() as cfg:
            cfg.set_value("core", "autocrlf", "false")
            cfg.set_value("gc", "auto", "0")  # no surprise background repacks mid-fetch
        (staging / "info").mkdir(exist_ok=True)
        (staging / "info" / "attributes").write_text(_ATTRIBUTES)
        repo.close()
        try:
            staging.rename(self.git_dir)
        except OSError:  # another process initialised it first
            shutil.rmtree(staging, ignore_errors=True)
            if not (self.git_dir / "HEAD").exists():
                raise SnapshotError(
                    f"could not create the snapshot store at {self.git_dir}"
                ) from None

    def _tmp(self) -> Path:
        self.tmp.mkdir(parents=True, exist_ok=True)
        return self.tmp

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Serialise writers (fetch, add, re-materialise); never nest."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def staging_dir(self, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self._tmp()))

    # ------------------------------------------------------------ reading

    def tags(self) -> dict[str, str]:
        """Snapshot name -> store commit, for every published snapshot."""
        if not (self.git_dir / "HEAD").exists():
            return {}
        out = self.repo().git.for_each_ref("--format=%(refname:strip=2) %(objectname)", "refs/tags")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def tag_commit(self, name: str) -> str | None:
        return self.tags().get(name)

    def read(self, name: str) -> StoredSnapshot | None:
        commit = self.tag_commit(name)
        if commit is None:
            return None
        message = self.repo().git.cat_file("commit", commit).split("\n\n", 1)[-1]
        _, _, body = message.partition("\n\n")
        try:
            meta = json.loads(body)
        except json.JSONDecodeError:
            raise SnapshotError(
                f"store commit {commit[:12]} for {name} has no readable metadata"
            ) from None
        return StoredSnapshot(name, commit, meta)

    def tree_path(self, name: str) -> Path:
        return self.trees / name

    # ------------------------------------------------------------ writing

    def commit_tree(self, work_tree: Path, name: str, meta: dict[str, Any]) -> str:
        """Record `work_tree` as a root commit (not yet published) and return its SHA."""
        self.repo()
        index = self.staging_dir("index-") / "index"
        env = self._env(work_tree, index, **_COMMIT_ENV)
        cmd = git.Git(str(work_tree))  # runs inside the tree; GIT_DIR points at the store
        try:
            # -f: trees may ship their own .gitignore; the snapshot keeps what was extracted.
            cmd.add("--all", "--force", ".", env=env)
            tree = cmd.write_tree(env=env)
            message = f"{_MESSAGE_HEAD}{name}\n\n{json.dumps(meta, indent=1, sort_keys=True)}\n"
            return cmd.commit_tree(tree, "-m", message, env=env)
        except git.GitCommandError as exc:
            raise SnapshotError(f"git could not store {name}: {exc.stderr.strip()}") from None
        finally:
            shutil.rmtree(index.parent, ignore_errors=True)

    def _env(self, work_tree: Path, index: Path, **extra: str) -> dict[str, str]:
        # Explicit GIT_DIR: never let git discover some enclosing repository instead.
        return {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(work_tree),
            "GIT_INDEX_FILE": str(index),
            **extra,
        }

    def publish(self, name: str, commit: str, staged_tree: Path) -> None:
        """Move the staged tree into place, then create the tag (the commit point)."""
        target = self.tree_path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():  # an unpublished leftover: it was never tagged
            discard(target)
        _make_read_only(staged_tree)
        staged_tree.rename(target)
        try:
            # The empty old value makes this a create-only update: two racing fetches can't both win.
            self.repo().git.update_ref(TAG_PREFIX + name, commit, "")
        except git.GitCommandError as exc:
            raise SnapshotError(f"could not publish {name}: {exc.stderr.strip()}") from None

    def materialize(self, name: str, commit: str) -> Path:
        """Recreate a missing tree from the store (no network)."""
        staged = self.staging_dir("tree-") / "tree"
        staged.mkdir()
        index = staged.parent / "index"
        env = self._env(staged, index)
        self.repo()
        cmd = git.Git(str(staged))
        try:
            cmd.read_tree(commit, env=env)
            cmd.checkout_index("--all", env=env)
        except git.GitCommandError as exc:
            discard(staged.parent)
            raise SnapshotError(
                f"could not rebuild the tree of {name}: {exc.stderr.strip()}"
            ) from None
        index.unlink()
        _make_read_only(staged)
        target = self.tree_path(name)
        if target.exists():
            discard(target)
        staged.rename(target)
        discard(staged.parent)
        return target

    def delete(self, name: str) -> None:
        if self.tag_commit(name) is not None:
            self.repo().git.update_ref("-d", TAG_PREFIX + name)
        target = self.tree_path(name)
        if target.exists():
            discard(target)

    def clean_tmp(self) -> None:
        """Drop what killed processes left: staging folders, and trees moved into
        place whose tag was never written. Call only under `locked()`."""
        if self.tmp.exists():
            for child in self.tmp.iterdir():
                discard(child)
        if self.trees.exists():
            tags = self.tags()
            for child in self.trees.iterdir():
                if child.name not in tags:
                    discard(child)

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None


def _make_read_only(tree: Path) -> None:
    for dirpath, _dirs, files in os.walk(tree):
        for f in files:
            os.chmod(os.path.join(dirpath, f), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def discard(path: Path) -> None:
    """Remove a staged or stale tree; files are read-only, folders are not."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()
