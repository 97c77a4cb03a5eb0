"""Pinned upstream source trees: lock files, fetching, a git-backed store.

Later stages use only what is re-exported here (and `models`).
"""

from analyzer.snapshots.locks import load_locks
from analyzer.snapshots.models import GitPin, LockEntry, Snapshot, SnapshotError, SnapshotRef
from analyzer.snapshots.store import (
    add_git_pin,
    diff_changes,
    diff_snapshots,
    ensure_snapshot,
    fetch_snapshot,
    is_fetched,
    list_snapshots,
    open_snapshot,
    remove_snapshot,
    resolve_ref,
)

__all__ = [
    "GitPin",
    "LockEntry",
    "Snapshot",
    "SnapshotError",
    "SnapshotRef",
    "add_git_pin",
    "diff_changes",
    "diff_snapshots",
    "ensure_snapshot",
    "fetch_snapshot",
    "is_fetched",
    "list_snapshots",
    "load_locks",
    "open_snapshot",
    "remove_snapshot",
    "resolve_ref",
]
