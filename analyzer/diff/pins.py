"""What a diff reads from one side: a release (`vllm@0.30.0`) or our `reference` engine,
opened as a `PinnedTree` (analyzer/pinned.py)."""

from __future__ import annotations

from analyzer.graphs.store import Graphs
from analyzer.mappings.models import REFERENCE
from analyzer.pinned import PinnedTree, TreeError, reference_tree, release_tree
from analyzer.settings import Settings


class DiffError(Exception):
    """A side that cannot be opened; the message is shown to the user."""


def open_pin(settings: Settings, ref: str, *, progress: bool = False, fetch: bool = True) -> PinnedTree:
    """Index a side (cached) and read its flags; raises DiffError with a readable message."""
    if ref != REFERENCE and "@" not in ref:
        raise DiffError(f"{ref!r}: expected a release like vllm@0.30.0, or `reference`")
    try:
        if ref == REFERENCE:
            return reference_tree(settings, progress=progress).prepare()
        return release_tree(settings, ref, fetch=fetch, progress=progress).prepare()
    except TreeError as exc:
        raise DiffError(str(exc)) from None


def load_pin_graphs(settings: Settings, pin: PinnedTree, *, progress: bool = False) -> Graphs:
    """The call / state graphs of a side, from the graphs cache (built on first use)."""
    pin.progress = progress
    try:
        return pin.graphs
    except TreeError as exc:
        raise DiffError(str(exc)) from None
