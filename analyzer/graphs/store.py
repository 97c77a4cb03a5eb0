"""Where graphs come from: a target (snapshot or directory) -> facts -> graphs,
cached under `settings.cache_dir/graphs/<key>/` so queries never rebuild.

The key is the snapshot's identity (name + store commit: its tree is immutable)
or, for a plain directory, a fingerprint of its files' paths, sizes and mtimes;
both include GRAPHS_VERSION so a change of the algorithm invalidates old caches,
and SCHEMA, a fingerprint of the pickled classes' fields and the interpreter, so
a tree whose `Access` (say) differs from the one that wrote a shared cache never
reads its entries field by field into the wrong slots; an entry whose recorded
schema differs anyway is rebuilt.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import multiprocessing.connection
import os
import pickle
import sys
import tempfile
import traceback
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, fields, is_dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from analyzer.graphs.callgraph import CallGraphResult, Unresolved, build_call_graph
from analyzer.graphs.compact import CompactCallGraph
from analyzer.graphs.state import Access, ClassState, StateAttr, StateIndex, build_state
from analyzer.graphs.state_source import SourceReader
from analyzer.index.models import ModuleFacts
from analyzer.resolve import CallResolver, Project
from analyzer.settings import Settings
from analyzer.snapshots.models import Snapshot

GRAPHS_VERSION = "75"


# Set to a list in a build process that ends with os._exit (`_build_worker`): what a
# build made is parked here instead of freed, as freeing millions of small objects
# one by one costs seconds and that process's memory goes back to the system anyway.
_PARKED: list[object] | None = None


class GraphError(Exception):
    """A target that cannot be opened / indexed; the message is shown to the user."""


def _schema(*classes: type) -> str:
    """What decides how a cached entry unpickles: each pickled dataclass's fields in
    order (a frozen slots dataclass restores them by position), whether it is frozen,
    and the interpreter's version (its slots pickling changed between releases)."""
    parts = [GRAPHS_VERSION, f"py{sys.version_info[0]}.{sys.version_info[1]}"]
    for cls in classes:
        params = getattr(cls, "__dataclass_params__", None)
        frozen = bool(params is not None and params.frozen)
        names = [f"{f.name}:{f.type}" for f in fields(cls)] if is_dataclass(cls) else []
        parts.append(f"{cls.__module__}.{cls.__qualname__}:{frozen}:{','.join(names)}")
    return _digest(parts)


@dataclass(frozen=True, slots=True)
class Target:
    label: str  # `vllm@0.30.0` or the directory as given
    root: Path  # directory handed to the indexer
    paths: tuple[str, ...] | None  # files under root to index (None: all)
    key: str
    snapshot: Snapshot | None = None


@dataclass(slots=True)
class Graphs:
    calls: CompactCallGraph  # `.to_nx()` for the full networkx DiGraph
    state: StateIndex  # class name -> ClassState (classes that own state)
    meta: dict[str, object] = field(default_factory=dict)


def _digest(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


SCHEMA = _schema(Graphs, ClassState, StateAttr, Access, Unresolved)


def directory_target(path: Path, *, as_package: bool = True) -> Target:
    """A plain directory. A package directory (with `__init__.py`) is indexed from
    its parent so names read `reference_engine.scheduler...`; otherwise (or with
    as_package=False) names are relative to the directory itself."""
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise GraphError(f"{path} is not a directory")
    files = sorted(p for p in path.rglob("*.py") if p.is_file() and ".venv" not in p.parts)
    if not files:
        raise GraphError(f"{path} holds no Python files")
    root = path.parent if as_package and (path / "__init__.py").is_file() else path
    rel = tuple(p.relative_to(root).as_posix() for p in files)
    stats = (f"{r}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for r, p in zip(rel, files, strict=True))
    key = _digest([SCHEMA, "dir", str(root), *stats])
    return Target(str(path), root, rel, key)


def open_target(settings: Settings, text: str) -> Target:
    """The graphs key of what a user names (`vllm@0.30.0`, fetched if pinned but missing;
    `reference`; a directory), opened the one way: `analyzer.pinned.open_tree`."""
    from analyzer.pinned import TreeError, open_tree

    try:
        target = open_tree(settings, text).target
    except TreeError as exc:
        raise GraphError(str(exc)) from None
    if target is None:  # open_tree always opens files; only an index-only tree lacks them
        raise GraphError(f"{text}: no files to build graphs from")
    return target


def snapshot_target(snap: Snapshot) -> Target:
    """A stored snapshot: its tree never changes under its store commit."""
    key = _digest([SCHEMA, "snapshot", snap.name, snap.store_commit])
    return Target(snap.name, snap.package_root, None, key, snap)


def load_facts(settings: Settings, target: Target, *, progress: bool = False) -> list[ModuleFacts]:
    # Imported here: the indexer pulls in libcst, which a query on cached graphs never needs.
    from analyzer.index import index_snapshot, index_tree

    # Every file's facts are decoded below: read them with the summaries, in one pass.
    if target.snapshot is not None:
        result = index_snapshot(settings, target.snapshot, progress=progress, with_blobs=True)
    else:
        paths = list(target.paths) if target.paths else None
        result = index_tree(target.root, paths, db=settings.index_db, progress=progress, with_blobs=True)
    return list(result.modules.values())


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The build allocates millions of small objects and frees almost none; the
    cyclic collector would rescan them over and over for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def build_graphs(
    facts: list[ModuleFacts], label: str = "", root: Path | None = None
) -> tuple[Graphs, list[Unresolved]]:
    """`root`: the indexed tree, whose function bodies the state graph reads where
    the facts fall short (loop variables, returned attributes); None: facts only."""
    with _gc_paused():
        project = Project(facts)
        source = SourceReader(root)
        resolver = CallResolver(project, source if root is not None else None)
        calls = build_call_graph(project, resolver)
        state = build_state(project, resolver, source, keep=_PARKED)
        graphs = pack_graphs(project, calls, state, label)
        if _PARKED is not None:
            _PARKED.append((facts, project, source, resolver, calls, state))
        return graphs, calls.unresolved


def pack_graphs(
    project: Project, calls: CallGraphResult, state: dict[str, ClassState], label: str = ""
) -> Graphs:
    """The cached, query-side form of freshly built graphs."""
    by_conf: dict[str, int] = {}
    for _, _, conf in calls.graph.edges.data("confidence"):
        by_conf[conf] = by_conf.get(conf, 0) + 1
    meta: dict[str, object] = {
        "schema": SCHEMA,
        "target": label,
        "modules": len(project.modules),
        "functions": len(project.functions),
        "classes": len(project.classes),
        "edges": calls.graph.number_of_edges(),
        "edges_by_confidence": by_conf,
        "unresolved_sites": len(calls.unresolved),
        "external_sites": sum(calls.external.values()),
    }
    return Graphs(CompactCallGraph.from_nx(calls.graph), StateIndex(state), meta)


def _cache_dir(settings: Settings, target: Target) -> Path:
    return settings.cache_dir / "graphs" / target.key


def _dump(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_graphs(settings: Settings, target: Target, *, rebuild: bool = False, progress: bool = False) -> Graphs:
    cached = _cache_dir(settings, target) / "graphs.pickle"
    if cached.is_file() and not rebuild:
        try:
            with cached.open("rb") as fh, _gc_paused():
                graphs = pickle.load(fh)
            if _current(graphs):
                return graphs
        except Exception:  # whatever a damaged or stale entry raises, it is rebuilt
            pass
    graphs, unresolved = build_graphs(load_facts(settings, target, progress=progress), target.label, target.root)
    save_graphs(settings, target, graphs, unresolved)
    return graphs


def _current(graphs: object) -> bool:
    """An entry this code wrote: same schema, and a class's state unpickles into
    well-typed accesses (checked on one class: the rest are read on demand)."""
    if not isinstance(graphs, Graphs) or graphs.meta.get("schema") != SCHEMA:
        return False
    state = graphs.state
    if not isinstance(state, StateIndex):
        return False
    for name in state:
        st = state[name]
        if not isinstance(st, ClassState) or st.cls != name:
            return False
        for attr in st.attrs.values():
            if not isinstance(attr, StateAttr):
                return False
            for a in (*attr.writes[:1], *attr.reads[:1]):
                # (stored as rows of fields by position: another layout shows as a wrong type)
                if not (isinstance(a, Access) and isinstance(a.outside, bool)
                        and all(isinstance(getattr(a, k), str) for k in ("function", "kind", "site", "via", "by"))
                        and all(isinstance(getattr(a, k), str | None) for k in ("method", "detail", "writer_class"))):
                    return False
        break
    return True


def _build_worker(settings: Settings, target: Target, conn: Connection) -> None:
    """Child process body: build one target's graphs into the cache and report
    None or (kind, message) back. The collector stays off (nothing here is ever
    garbage) and the process ends with os._exit, so the heap of millions of
    objects is neither scanned nor freed one object at a time."""
    global _PARKED
    gc.disable()
    _PARKED = []
    outcome: tuple[str, str] | None = None
    try:
        _PARKED.append(load_graphs(settings, target, rebuild=True))
    except GraphError as exc:
        outcome = ("GraphError", str(exc))
    except BaseException:  # reported to the parent, which raises it there
        outcome = ("error", traceback.format_exc())
    try:
        conn.send(outcome)
        conn.close()
    finally:
        os._exit(0)


def _source_bytes(target: Target) -> int:
    """The size of a target's Python source: what a build's time grows with, read
    off the file system (no index lookup) to order the builds."""
    if target.paths is not None:
        files: Iterable[Path] = (target.root / p for p in target.paths)
    else:
        files = (Path(d) / f for d, _, names in os.walk(target.root) for f in names if f.endswith(".py"))
    total = 0
    for path in files:
        with suppress(OSError):  # (a file gone since: the order is only a guess anyway)
            total += path.stat().st_size
    return total


def _build_in_children(settings: Settings, targets: list[Target], workers: int) -> None:
    """One child per target, at most `workers` at a time, the largest first and the
    next started as soon as any ends: four releases on two cores then take about
    half their summed time, where fixed pairs waited for each pair's slower build."""
    ctx = multiprocessing.get_context("fork")  # no re-import: the parent has the analyzer loaded
    # (all at once when they fit: no order to choose, nor files to walk for it)
    waiting = sorted(targets, key=_source_bytes, reverse=True) if len(targets) > workers else list(targets)
    running: dict[Connection, tuple[Target, multiprocessing.process.BaseProcess]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                target = waiting.pop(0)
                parent_end, child_end = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_build_worker, args=(settings, target, child_end), daemon=True)
                proc.start()
                child_end.close()
                running[parent_end] = (target, proc)
            for ready in multiprocessing.connection.wait(list(running)):
                assert isinstance(ready, Connection)
                done, ended = running.pop(ready)
                try:
                    outcome = ready.recv()
                except EOFError:  # the child died without a word (killed, out of memory)
                    outcome = ("error", f"the process building {done.label} ended early")
                ready.close()
                ended.join()
                if outcome is not None:
                    kind, message = outcome
                    if kind == "GraphError":
                        raise GraphError(message)
                    raise RuntimeError(f"building graphs for {done.label} failed:\n{message}")
    finally:
        for _, left in running.values():  # after a failure: the other builds are stopped
            left.terminate()
            left.join()


def build_missing(settings: Settings, targets: Sequence[Target], *, rebuild: bool = False) -> None:
    """Build the graphs of every target not cached yet (all of them with rebuild),
    one process per target, as many at once as there are cores: each build is
    single-threaded CPU work, so two snapshots on two cores take the time of the
    slower one instead of the sum (more targets than cores: `_build_in_children`)."""
    unique = {t.key: t for t in targets}.values()
    todo = [t for t in unique if rebuild or not (_cache_dir(settings, t) / "graphs.pickle").is_file()]
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if len(todo) <= 1 or workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for target in todo:
            load_graphs(settings, target, rebuild=True)
        return
    _build_in_children(settings, todo, workers)


def load_graphs_many(settings: Settings, targets: Sequence[Target], *, rebuild: bool = False) -> list[Graphs]:
    """`load_graphs` for several targets, building the missing ones in parallel."""
    build_missing(settings, targets, rebuild=rebuild)
    return [load_graphs(settings, t) for t in targets]


def save_graphs(settings: Settings, target: Target, graphs: Graphs, unresolved: list[Unresolved]) -> None:
    folder = _cache_dir(settings, target)
    _dump(folder / "graphs.pickle", graphs)
    _dump(folder / "unresolved.pickle", unresolved)


def load_unresolved(settings: Settings, target: Target) -> list[Unresolved]:
    path = _cache_dir(settings, target) / "unresolved.pickle"
    if not path.is_file():
        load_graphs(settings, target, rebuild=True)
    with path.open("rb") as fh:
        return pickle.load(fh)
