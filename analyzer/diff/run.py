"""`run_diff`: open both sides and compute the diff `atlas diff` prints (no CLI code here)."""

from __future__ import annotations

from analyzer.diff.design import design_diff, version_diff
from analyzer.diff.models import DesignDiff, VersionDiff
from analyzer.diff.pins import DiffError, load_pin_graphs, open_pin
from analyzer.mappings.models import REFERENCE, ConceptMapping
from analyzer.pinned import PinnedTree
from analyzer.settings import Settings
from analyzer.snapshots.models import Snapshot


def run_diff(
    settings: Settings,
    left: str,
    right: str,
    concepts: list[ConceptMapping],
    *,
    concept: str | None = None,
    calls: bool = True,
    fetch: bool = True,
    progress: bool = False,
) -> VersionDiff | DesignDiff:
    """The plain data behind `atlas diff` (what `atlas report` renders). Raises DiffError."""
    if left == right:
        raise DiffError(f"both sides are {left}; name two different releases")
    a = open_pin(settings, left, progress=progress, fetch=fetch)
    b = open_pin(settings, right, progress=progress, fetch=fetch)
    if calls:
        load_pin_graphs(settings, a, progress=progress)
        load_pin_graphs(settings, b, progress=progress)
    if a.project == b.project and a.project != REFERENCE:
        return version_diff(a, b, concepts, file_renames=file_renames(settings, a, b), concept=concept)
    return design_diff(a, b, concepts, concept=concept)


def file_renames(settings: Settings, a: PinnedTree, b: PinnedTree) -> list[tuple[str, str, int]]:
    """Git's rename detection between the two stored trees, as package paths."""
    from analyzer.snapshots import SnapshotError, diff_changes

    snap_a, snap_b = a.snapshot, b.snapshot
    if snap_a is None or snap_b is None:
        return []  # a directory tree has no stored history to detect renames in
    try:
        changes = diff_changes(settings, a.label, b.label)
    except SnapshotError as exc:
        raise DiffError(str(exc)) from None
    out = []
    for change in changes:
        if change.status == "R" and change.old_path and change.new_path:
            old, new = _package_path(snap_a, change.old_path), _package_path(snap_b, change.new_path)
            if old and new and old.endswith(".py") and new.endswith(".py"):
                out.append((old, new, change.similarity or 0))
    return out


def _package_path(snapshot: Snapshot, path: str) -> str | None:
    """Release trees are stored in package layout already; git pins in repository layout."""
    if snapshot.kind == "git" and snapshot.layout_prefix:
        return snapshot.repo_to_package_path(path) if path.startswith(snapshot.layout_prefix) else path
    return path
