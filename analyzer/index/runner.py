"""Index a tree: hash, look up the cache, extract the misses in parallel, store.

Work is scheduled biggest file first so the longest parse (vLLM's
gpu_model_runner.py) starts at once instead of ending the run alone; small
files travel in batches to keep inter-process overhead negligible.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from analyzer.index.codec import CODEC_VERSION, Summary, encode_facts
from analyzer.index.extract import EXTRACTOR_VERSION, extract_file, fast_parsing, init_worker
from analyzer.index.models import FileError
from analyzer.index.snapshot_index import IndexStats, LazyModules, SnapshotIndex
from analyzer.index.source import SourceError, sha256_of
from analyzer.index.store import BlobReader, CachedFile, FactStore
from analyzer.settings import Settings
from analyzer.snapshots.models import Snapshot

_BATCH_BYTES = 256 * 1024  # small files share a task up to this much source
_COMMIT_EVERY = 2.0  # seconds between database commits during a run
# Cache key: a change to the extractor or to the blob format invalidates old entries.
CACHE_VERSION = f"{EXTRACTOR_VERSION}/{CODEC_VERSION}"

Result = tuple[str, CachedFile]


def list_python_files(root: Path) -> list[str]:
    """Every `.py` file under root (files, not packages: SGLang has folders without
    __init__), symlinks skipped. os.scandir: pathlib's rglob is ~5x slower here."""
    found: list[str] = []
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                stack.append((entry.path, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(".py") and entry.is_file():
                found.append(prefix + entry.name)
    return sorted(found)


def index_file(root: str, path: str) -> Result:
    """Read, hash and extract one file; every failure becomes a cached error entry."""
    try:
        data = (Path(root) / path).read_bytes()
    except OSError as exc:
        return path, CachedFile("", None, None, f"{type(exc).__name__}: {exc.strerror or exc}")
    sha = sha256_of(data)
    try:
        facts = extract_file(data, path)
    except SourceError as exc:
        return path, CachedFile(sha, None, None, str(exc))
    except Exception as exc:  # an extractor bug must cost one file, not the whole run
        return path, CachedFile(sha, None, None, f"InternalError: {type(exc).__name__}: {exc}")
    return path, CachedFile(sha, encode_facts(facts), Summary.of(facts).encode(), None)


def _index_batch(root: str, paths: list[str]) -> list[Result]:
    return [index_file(root, p) for p in paths]


def _plan(root: Path, paths: list[str]) -> list[list[str]]:
    """Tasks, largest first: big files alone, small ones grouped."""
    sized = []
    for p in paths:
        try:
            sized.append(((root / p).stat().st_size, p))
        except OSError:
            sized.append((0, p))
    sized.sort(reverse=True)
    tasks: list[list[str]] = []
    batch: list[str] = []
    batch_bytes = 0
    for size, p in sized:
        if size >= _BATCH_BYTES:
            tasks.append([p])
            continue
        batch.append(p)
        batch_bytes += size
        if batch_bytes >= _BATCH_BYTES:
            tasks.append(batch)
            batch, batch_bytes = [], 0
    if batch:
        tasks.append(batch)
    return tasks


def _extract_all(
    root: Path, paths: list[str], jobs: int, on_result: Callable[[list[Result]], None]
) -> None:
    tasks = _plan(root, paths)
    if jobs <= 1 or len(tasks) <= 1:
        with fast_parsing():
            for task in tasks:
                on_result(_index_batch(str(root), task))
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=init_worker) as pool:
        pending: set[Future[list[Result]]] = {pool.submit(_index_batch, str(root), t) for t in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                on_result(fut.result())


def _hash_all(root: Path, paths: Iterable[str]) -> tuple[dict[str, str], list[FileError]]:
    shas: dict[str, str] = {}
    errors: list[FileError] = []
    for p in paths:
        try:
            shas[p] = sha256_of((root / p).read_bytes())
        except OSError as exc:
            errors.append(FileError(p, f"{type(exc).__name__}: {exc.strerror or exc}"))
    return shas, errors


def _progress_bar(total: int, enabled: bool) -> tuple[Callable[[int], None], Callable[[], None]]:
    if not enabled or total == 0:
        return (lambda n: None), (lambda: None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(  # on stderr: stdout carries the command's output
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    )
    task = bar.add_task("index", total=total)
    bar.start()
    return (lambda n: bar.advance(task, n)), bar.stop


def index_tree(
    root: Path,
    paths: Iterable[str] | None = None,
    *,
    db: Path,
    jobs: int | None = None,
    progress: bool = False,
    name: str | None = None,
    layout_prefix: str = "",
    manifest_key: str | None = None,
    with_blobs: bool = False,
) -> SnapshotIndex:
    """Index every `.py` file under `root` (or the given package-relative `paths`).

    Facts come from the cache at `db` when a file's content was seen before;
    `manifest_key` names an immutable tree whose path -> hash map can be reused
    without re-hashing. `with_blobs`: read the cached facts of every file in the same
    pass (a caller about to decode them all); otherwise each is read on first use.
    """
    started = time.perf_counter()
    root = Path(root)
    jobs = jobs or os.cpu_count() or 1
    stats = IndexStats()
    with FactStore(db) as store:
        manifest = store.manifest(manifest_key) if manifest_key else None
        if manifest is not None and paths is None:
            shas, errors = dict(manifest), list[FileError]()
            stats.manifest_hit = True
        else:
            wanted = list(paths) if paths is not None else list_python_files(root)
            if manifest is not None and all(p in manifest for p in wanted):
                shas, errors = {p: manifest[p] for p in wanted}, []
                stats.manifest_hit = True
            else:
                shas, errors = _hash_all(root, wanted)
        unreadable = len(errors)
        cached = store.lookup(shas.values(), CACHE_VERSION, blobs=with_blobs)
        results: dict[str, CachedFile] = {p: cached[s] for p, s in shas.items() if s in cached}
        stats.cache_hits = len(results)
        missing = [p for p in shas if p not in results]
        advance, stop = _progress_bar(len(missing), progress)
        unsaved: list[CachedFile] = []
        last_commit = time.monotonic()

        def on_result(batch: list[Result]) -> None:
            nonlocal last_commit
            for path, entry in batch:
                results[path] = entry
                if entry.sha256:
                    unsaved.append(entry)
            advance(len(batch))
            if time.monotonic() - last_commit >= _COMMIT_EVERY:
                store.save(CACHE_VERSION, unsaved)
                unsaved.clear()
                last_commit = time.monotonic()

        try:
            _extract_all(root, missing, jobs, on_result)
        finally:
            stop()
            if unsaved:
                store.save(CACHE_VERSION, unsaved)  # also on Ctrl-C: keep what finished
        stats.extracted = len(missing)
        if manifest_key and not errors and not stats.manifest_hit:
            store.save_manifest(manifest_key, {p: e.sha256 for p, e in results.items()})

    blobs: dict[str, tuple[str, bytes | None]] = {}
    summaries: dict[str, Summary] = {}
    for path in sorted(results):
        entry = results[path]
        if entry.error is not None or entry.summary is None:
            errors.append(FileError(path, entry.error or "unknown error"))
            continue
        blobs[path] = (entry.sha256, entry.blob)
        summaries[path] = Summary.decode(entry.summary)
    stats.files = len(shas) + unreadable
    stats.seconds = time.perf_counter() - started
    errors.sort(key=lambda e: e.path)
    return SnapshotIndex(
        name=name or root.name,
        modules=LazyModules(blobs, BlobReader(db, CACHE_VERSION)),
        errors=errors,
        layout_prefix=layout_prefix,
        stats=stats,
        summaries=summaries,
    )


def snapshot_manifest_key(snapshot: Snapshot) -> str:
    return f"{snapshot.name}#{snapshot.store_commit}#{snapshot.package_root.name}"


def index_snapshot(
    settings: Settings, snapshot: Snapshot, *, jobs: int | None = None, progress: bool = False,
    with_blobs: bool = False,
) -> SnapshotIndex:
    """Index a fetched snapshot into the cache at `settings.index_db` (`with_blobs`: see `index_tree`)."""
    key = snapshot_manifest_key(snapshot)
    with FactStore(settings.index_db) as store:
        known = store.manifest(key) is not None
    # A stored tree never changes under its store commit: with a manifest, skip even the listing.
    paths = None if known else list(snapshot.python_files())
    return index_tree(
        snapshot.package_root,
        paths,
        db=settings.index_db,
        jobs=jobs,
        progress=progress,
        name=snapshot.name,
        layout_prefix=snapshot.layout_prefix,
        manifest_key=key,
        with_blobs=with_blobs,
    )
