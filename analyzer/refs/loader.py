"""Pin views for real snapshots: built once from the index and flag extraction, then cached.

The cache file is keyed by pin name and remembers the store commit it was
built from; a release pin never changes, a git pin re-fetched to a new commit
is rebuilt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from analyzer.pinned import PinnedTree, TreeError, release_tree
from analyzer.refs.build import (
    envs_from,
    flags_from,
    list_files,
    registry_architectures,
    source_literals,
    symbols_and_open_classes,
    symbols_from_native,
)
from analyzer.refs.config import RefsError
from analyzer.refs.lineage import Lineage, build_lineage, cached_lineage, save_lineage
from analyzer.refs.pinview import FORMAT_VERSION, PinView
from analyzer.refs.successors import (
    Successors,
    build_successors,
    cached_successors,
    deprecations,
    save_successors,
)
from analyzer.refs.words import FORMAT as WORDS_FORMAT
from analyzer.settings import Settings
from analyzer.snapshots import (
    SnapshotError,
    diff_changes,
    is_fetched,
    open_snapshot,
    resolve_ref,
)


def view_cache_path(settings: Settings, pin: str) -> Path:
    # The format version is in the name: checkouts of different versions sharing one cache
    # keep their own views instead of rebuilding each other's.
    return settings.cache_dir / "refs" / "views" / f"{pin}.v{FORMAT_VERSION}.sqlite"


def words_cache_path(settings: Settings, pin: str, store_commit: str | None) -> Path:
    """The identifiers of one stored snapshot (`words.py`): keyed by its store commit, so a git
    pin re-fetched to a new commit collects them again."""
    # The format is in the name, so checkouts of different formats sharing a cache keep their own.
    return settings.cache_dir / "refs" / "words" / f"{pin}.{(store_commit or 'none')[:12]}.w{WORDS_FORMAT}.json"


def _cached(path: Path) -> PinView | None:
    try:
        return PinView.load(path)
    except (OSError, ValueError, KeyError, IndexError, TypeError, json.JSONDecodeError):
        return None  # missing, from another format version, or damaged: rebuild


def load_pin(settings: Settings, pin: str) -> PinView:
    """The pin's view: from the cache when it matches the stored snapshot, else built
    (fetching the snapshot and indexing it first when needed)."""
    from analyzer.snapshots import (
        SnapshotError,
    )

    try:
        pin = str(resolve_ref(settings, pin))  # validates the name before it becomes a file name
        cache = view_cache_path(settings, pin)
        view = _cached(cache)
        fetched = is_fetched(settings, pin)
        if view is not None:
            view.words_path = str(words_cache_path(settings, pin, view.store_commit))
            if not fetched:
                return view  # the snapshot was removed from the store; its release can't change
            snapshot = open_snapshot(settings, pin)
            if view.store_commit == snapshot.store_commit:
                return view
        tree = release_tree(settings, pin)
    except (SnapshotError, TreeError) as exc:
        raise RefsError(str(exc)) from None
    try:
        view = build_view(tree)
    except TreeError as exc:
        raise RefsError(str(exc)) from None
    view.save(cache)
    view.words_path = str(words_cache_path(settings, pin, view.store_commit))
    return view


def _past_by_project(settings: Settings, past: Sequence[str]) -> dict[str, list[str]]:
    by_project: dict[str, list[str]] = {}
    for pin in past:
        try:
            name = str(resolve_ref(settings, pin))
        except SnapshotError as exc:
            raise RefsError(str(exc)) from None
        by_project.setdefault(name.split("@", 1)[0], []).append(name)
    return by_project


def load_lineages(settings: Settings, past: Sequence[str]) -> dict[str, Lineage]:
    """Project -> the lineage of its past pins (`lineage.py`): from the cache, else built from
    each past pin's view (fetched and indexed first when needed, as any pin)."""
    by_project = _past_by_project(settings, past)
    out: dict[str, Lineage] = {}
    for project, pins in by_project.items():
        lineage = cached_lineage(settings.cache_dir, project, pins)
        if lineage is None:
            lineage = build_lineage(project, [(pin, load_pin(settings, pin).symbols) for pin in pins])
            save_lineage(settings.cache_dir, project, pins, lineage)
        out[project] = lineage
    return out


def load_successors(settings: Settings, past: Sequence[str]) -> dict[str, Successors]:
    """Project -> the moves and renames the diff stage finds between its consecutive past pins
    (`successors.py`): from the cache, else diffed from the pins' indexes (tens of seconds, once)."""
    from analyzer.diff.pins import DiffError
    from analyzer.diff.run import file_renames
    from analyzer.diff.symbols import compare_symbols, symbol_table
    from analyzer.refs.classify import PACKAGE_ROOTS
    from analyzer.refs.lineage import version_key

    out: dict[str, Successors] = {}
    for project, pins in _past_by_project(settings, past).items():
        successors = cached_successors(settings.cache_dir, project, pins)
        if successors is None:
            chain = sorted(pins, key=version_key)
            root = PACKAGE_ROOTS.get(project, project)
            pairs, deprecated = [], []
            try:
                previous: tuple[str, PinnedTree] | None = None
                for pin in chain:  # each release opened once, two held at a time
                    tree = release_tree(settings, pin)
                    if previous is not None:
                        older, a = previous
                        pairs.append((older, pin, compare_symbols(a.index, tree.index, file_renames(settings, a, tree)).moved))
                    previous = pin, tree
                    base = tree.snapshot.package_root if tree.snapshot is not None else None
                    files = {rel: (base / rel).read_text(encoding="utf-8", errors="replace") for rel in tree.index.modules} if base else {}
                    classes = [(i.dotted, i.path, i.line, i.end_line) for i in symbol_table(tree.index).values() if i.kind == "class"]
                    deprecated += deprecations(root, pin, files, classes)
            except (SnapshotError, TreeError, DiffError, OSError) as exc:
                raise RefsError(str(exc)) from None
            successors = build_successors(root, pairs, deprecated)
            save_successors(settings.cache_dir, project, pins, successors)
        out[project] = successors
    return out


def build_view(tree: PinnedTree) -> PinView:
    """The checker's compact view of a release: its index (the index stage caches per
    file), flags and env vars, and its C/C++/CUDA/Rust definitions."""
    # Imported here, not at the top: a warm check never needs tree-sitter.
    from analyzer.index.native import index_native, native_files

    # First use of a pin indexes the whole tree (minutes); show progress on a terminal.
    tree.progress = sys.stderr.isatty()
    index = tree.index
    snapshot = tree.snapshot
    assert snapshot is not None
    flags: list[object] = []
    envs: list[object] = []
    try:
        flags, envs = list(tree.flag_list), list(tree.env_list)
    except TreeError as exc:
        # Flags and env vars then come out not-checkable, never broken.
        print(f"warning: {snapshot.name}: flags/env vars not extracted: {exc}", file=sys.stderr)
    root = snapshot.package_root
    literals = source_literals(root, snapshot.packages or (snapshot.ref.project,))
    symbols, open_classes = symbols_and_open_classes(index.modules.values())
    # C/C++/CUDA/Rust definitions (tree-sitter): kernels inside the package, and for a git pin
    # whose package sits below the root (`python/`), the repository's other folders too
    # (`sgl-kernel/csrc`, the Rust router), under repository-relative paths.
    native = index_native(root)
    outside: frozenset[str] = frozenset()
    repo_tree = None
    if snapshot.kind == "git" and snapshot.layout_prefix:
        prefix = snapshot.layout_prefix.rstrip("/") + "/"
        outside = frozenset(p for p in list_files(snapshot.tree) if not p.startswith(prefix) and not p.startswith(".git/"))
        native += index_native(snapshot.tree, [p for p in native_files(snapshot.tree) if p in outside])
        repo_tree = str(snapshot.tree)
    return PinView(
        pin=snapshot.name,
        project=snapshot.ref.project,
        kind=snapshot.kind,
        layout_prefix=snapshot.layout_prefix,
        packages=snapshot.packages or (snapshot.ref.project,),
        files=list_files(root),
        symbols=(
            symbols
            + symbols_from_native(native)
            + registry_architectures(root, snapshot.packages or (snapshot.ref.project,))
        ),
        flags=flags_from(flags),
        envs=envs_from(envs),
        env_literals=literals.envs,
        custom_ops=literals.ops,
        routes=literals.routes,
        values=literals.values,
        upstream_commit=snapshot.upstream_commit,
        store_commit=snapshot.store_commit,
        tree=str(root),
        outside_files=outside,
        repo_tree=repo_tree,
        open_classes=open_classes,
    )


def store_renames(settings: Settings, old: PinView, new: PinView) -> dict[str, tuple[str, float]]:
    """Renames git detects between two stored snapshots, package-relative; {} when unavailable."""
    try:
        changes = diff_changes(settings, old.pin, new.pin)
    except SnapshotError:
        return {}
    out: dict[str, tuple[str, float]] = {}
    for change in changes:
        if change.status == "R" and change.old_path and change.new_path:
            out[_package_rel(change.old_path, old)] = (_package_rel(change.new_path, new), (change.similarity or 50) / 100)
    return out


def _package_rel(path: str, view: PinView) -> str:
    if view.kind == "git" and view.layout_prefix:
        return path.removeprefix(view.layout_prefix)
    return path
