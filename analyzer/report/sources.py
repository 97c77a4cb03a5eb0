"""One column's raw material: a `PinnedTree` (analyzer/pinned.py) opened for a page,
its index, graphs, flags and env vars all loaded.

`snapshot_side` opens a pinned release (fetching it if needed); `tree_side`
opens a package directory (the reference engine, or a test fixture). The page
builder never knows where the code came from.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.pinned import (
    REPOSITORIES,
    Permalinks,
    PinnedTree,
    TreeError,
    directory_tree,
    release_tree,
)
from analyzer.settings import Settings

__all__ = ["ReportError", "snapshot_side", "tree_side"]


class ReportError(Exception):
    """A report that cannot be built; the message is shown to the user."""


def tree_side(
    settings: Settings,
    project: str,
    package_dir: Path,
    *,
    version: str | None = None,
    permalinks: Permalinks | None = None,
    knobs: bool = True,
) -> PinnedTree:
    """A package directory: indexed from its parent so names read `pkg.mod.Class`."""
    try:
        tree = directory_tree(settings, package_dir, project, version=version, permalinks=permalinks,
                              read_knobs=knobs and project in REPOSITORIES)
        _ = tree.index, tree.graphs
    except TreeError as exc:
        raise ReportError(str(exc)) from None
    _read_knobs(tree)
    return tree


def snapshot_side(settings: Settings, ref: str, *, progress: bool = False) -> PinnedTree:
    """A pinned release (`vllm@0.33.0`), fetched and indexed on first use."""
    try:
        tree = release_tree(settings, ref, progress=progress)
        _ = tree.index, tree.graphs
    except TreeError as exc:
        raise ReportError(f"{ref}: {exc}") from None
    assert tree.permalinks is not None and tree.snapshot is not None
    if not tree.permalinks.is_commit:
        tree.notes.append(f"{tree.snapshot.name}: the wheel records no commit; links point at tag {tree.permalinks.revision}")
    _read_knobs(tree)
    return tree


def _read_knobs(tree: PinnedTree) -> None:
    try:
        _ = tree.flags
    except TreeError as exc:
        tree.notes.append(f"{tree.heading}: flags and env vars not read: {exc}")
