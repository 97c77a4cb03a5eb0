"""`atlas snapshot lock vllm@0.31.0`: pin a release in one command.

Find the release on the index (see `releases.py` for the artifact rule),
download it, verify it (the index's sha256 when it vouches for one; the lock's
when the release is already locked), store its tree, and only then append its
table to the project's lock file. Nothing is stored or written when any step
fails; a release already locked and fetched is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from analyzer.settings import Settings
from analyzer.snapshots.download import sha256_file
from analyzer.snapshots.gitstore import GitStore, discard
from analyzer.snapshots.locks import (
    check_ref,
    default_lock_dir,
    load_locks,
    normalise_prefix,
    project_defaults,
    record_release,
    write_lock_dir,
)
from analyzer.snapshots.models import LockEntry, SnapshotError, SnapshotRef
from analyzer.snapshots.releases import (
    IndexFile,
    IndexOptions,
    choose_artifact,
    download,
    latest,
    list_files,
    nearest,
    versions,
)
from analyzer.snapshots.store import _store_artifact

LATEST = "latest"


@dataclass(frozen=True, slots=True)
class LockResult:
    """What `lock` did for one requested ref."""

    requested: str  # as asked, e.g. vllm@latest
    ref: str  # as locked, e.g. vllm@0.33.1
    action: str  # "locked" | "fetched" (locked before, stored now) | "unchanged"
    artifact: str
    sha256: str
    upstream_commit: str | None
    lock_file: str


def lock_releases(
    settings: Settings,
    refs: list[str],
    options: IndexOptions,
    *,
    lock_dir: Path | None = None,
) -> list[LockResult]:
    """Lock each ref in turn; the first failure stops (earlier ones stay locked)."""
    folder = write_lock_dir(lock_dir)
    return [_lock_one(settings, text, options, folder) for text in refs]


def _package_and_defaults(project: str, folder: Path) -> dict[str, str]:
    bundled = default_lock_dir()
    defaults = project_defaults(project, folder, bundled if bundled != folder else None)
    defaults.setdefault("package", project)
    return defaults


def _lock_one(settings: Settings, text: str, options: IndexOptions, folder: Path) -> LockResult:
    asked = SnapshotRef.parse(text)
    check_ref(SnapshotRef(asked.project, "0" if asked.version == LATEST else asked.version))
    defaults = _package_and_defaults(asked.project, folder)
    package = defaults["package"]
    locks = load_locks(folder) if folder.is_dir() else {}

    files: list[IndexFile] | None = None
    version = asked.version
    if version == LATEST:
        files = list_files(package, options)
        newest = latest(files)
        if newest is None:
            raise SnapshotError(f"no release of {package} found in {_where(options)}")
        version = str(newest)
    ref = check_ref(SnapshotRef(asked.project, version))
    locked = locks.get(str(ref))
    # Pinned elsewhere (the toolkit's own locks): the book records that very artifact.
    known = locked or _elsewhere(str(ref), folder)

    store = GitStore(settings.snapshot_store)
    try:
        with store.locked():
            store.clean_tmp()
            if locked is not None:
                if store.tag_commit(str(ref)) is not None:
                    return _result(text, locked, "unchanged")
                files = files if files is not None else list_files(package, options)
                match = [f for f in files if f.filename == locked.artifact]
                if not match:
                    raise SnapshotError(
                        f"{ref} is locked to {locked.artifact}, which {_where(options)} does not offer"
                    )
                _download_and_store(store, locked, match[0])
                return _result(text, locked, "fetched")

            if known is not None:
                if store.tag_commit(str(ref)) is None:
                    files = files if files is not None else list_files(package, options)
                    match = [f for f in files if f.filename == known.artifact]
                    if not match:
                        raise SnapshotError(
                            f"{ref} is locked in {known.lock_file} to {known.artifact}, "
                            f"which {_where(options)} does not offer"
                        )
                    _download_and_store(store, known, match[0])
                path = record_release(
                    folder,
                    ref,
                    artifact=known.artifact,
                    sha256=known.sha256,
                    upstream_commit=known.upstream_commit,
                    defaults=defaults,
                )
                return _result(text, replace(known, lock_file=path), "locked")

            files = files if files is not None else list_files(package, options)
            wanted = [v for v in versions(files) if str(v) == version]
            if not wanted:
                raise SnapshotError(_missing(package, version, files, options))
            chosen = choose_artifact(files, wanted[0])
            entry = LockEntry(
                ref=ref,
                package=package,
                version=version,
                artifact=chosen.filename,
                sha256=chosen.sha256 or "0" * 64,  # replaced by the file's own below
                layout_prefix=normalise_prefix(defaults.get("layout_prefix", "")),
            )
            stored = store.read(str(ref))
            if stored is not None:
                entry = _adopt_stored(ref, chosen, stored.meta, entry)
                commit = stored.meta.get("upstream_commit")
            else:
                entry, commit = _download_and_store(store, entry, chosen)
            path = record_release(
                folder,
                ref,
                artifact=entry.artifact,
                sha256=entry.sha256,
                upstream_commit=commit,
                defaults=defaults,
            )
            entry = LockEntry(
                ref=ref,
                package=package,
                version=version,
                artifact=entry.artifact,
                sha256=entry.sha256,
                layout_prefix=entry.layout_prefix,
                upstream_commit=commit,
                lock_file=path,
            )
            return _result(text, entry, "locked")
    finally:
        store.close()


def _elsewhere(name: str, folder: Path) -> LockEntry | None:
    if folder == default_lock_dir():
        return None
    return load_locks().get(name)


def _download_and_store(
    store: GitStore, entry: LockEntry, file: IndexFile
) -> tuple[LockEntry, str | None]:
    """Download `file`, check it against the index's sha256 and, for a release
    locked before, the lock's; then store it. Returns the entry with the file's
    sha256 and the commit the artifact records."""
    staging = store.staging_dir("lock-")
    try:
        path = download(file, staging / "download")
        actual = sha256_file(path)
        if file.sha256 and actual != file.sha256.lower():
            raise SnapshotError(
                f"sha256 mismatch for {file.filename}: the index says {file.sha256.lower()}, "
                f"the download has {actual}; nothing was stored"
            )
        if entry.lock_file is not None and actual != entry.sha256:
            raise SnapshotError(
                f"sha256 mismatch for {file.filename}: the lock {entry.lock_file} expects "
                f"{entry.sha256}, the download has {actual}; nothing was stored"
            )
        entry = LockEntry(
            ref=entry.ref,
            package=entry.package,
            version=entry.version,
            artifact=entry.artifact,
            sha256=actual,
            layout_prefix=entry.layout_prefix,
            upstream_commit=entry.upstream_commit,
            lock_file=entry.lock_file,
        )
        commit = _store_artifact(store, entry, path, staging)
        return entry, commit
    finally:
        discard(staging)


def _adopt_stored(ref: SnapshotRef, chosen: IndexFile, meta: dict, entry: LockEntry) -> LockEntry:
    """The store already holds `ref` (locked under another lock folder): record it
    when it is the very file the index offers, refuse otherwise."""
    sha = str(meta.get("sha256") or "")
    if meta.get("source") != chosen.filename or (chosen.sha256 and chosen.sha256.lower() != sha):
        raise SnapshotError(
            f"the store already holds {ref} from {meta.get('source')} (sha256 {sha[:12]}...), "
            f"not {chosen.filename}; `atlas snapshot remove {ref}` first to re-lock it"
        )
    return LockEntry(
        ref=ref,
        package=entry.package,
        version=entry.version,
        artifact=chosen.filename,
        sha256=sha,
        layout_prefix=str(meta.get("layout_prefix", entry.layout_prefix)),
    )


def _result(requested: str, entry: LockEntry, action: str) -> LockResult:
    return LockResult(
        requested=requested,
        ref=str(entry.ref),
        action=action,
        artifact=entry.artifact,
        sha256=entry.sha256,
        upstream_commit=entry.upstream_commit,
        lock_file=str(entry.lock_file or ""),
    )


def _where(options: IndexOptions) -> str:
    places = [str(p) for p in options.find_links]
    if options.index() is not None:
        places.append(str(options.index()))
    return " and ".join(places) or "no index (--no-index without --find-links)"


def _missing(package: str, version: str, files: list[IndexFile], options: IndexOptions) -> str:
    found = versions(files)
    if not found:
        return f"no release of {package} found in {_where(options)}"
    close = ", ".join(str(v) for v in nearest(version, found))
    return (
        f"{package} {version} is not on {_where(options)}; nearest versions: {close} "
        f"(newest: {found[-1]}; `@latest` picks it)"
    )
