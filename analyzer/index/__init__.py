"""Per-file facts (libcst), cached by content hash.

Public API for later stages: `index_tree`, `index_snapshot`, `SnapshotIndex`.
"""

from analyzer.index.models import FileError, ModuleFacts
from analyzer.index.runner import index_snapshot, index_tree
from analyzer.index.snapshot_index import IndexStats, SnapshotIndex, SymbolMatch

__all__ = [
    "FileError",
    "IndexStats",
    "ModuleFacts",
    "SnapshotIndex",
    "SymbolMatch",
    "index_snapshot",
    "index_tree",
]
