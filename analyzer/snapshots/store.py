"""Public API of the snapshots stage: open, fetch, pin, list and diff snapshots."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from analyzer.settings import Settings
from analyzer.snapshots import pins as pinning
from analyzer.snapshots.archive import ExtractReport, extract_tar, extract_zip
from analyzer.snapshots.download import locate_artifact, verify_sha256
from analyzer.snapshots.gitstore import GitStore, StoredSnapshot, discard
from analyzer.snapshots.inspect_tree import detect_packages, recorded_commit
from analyzer.snapshots.locks import (
    check_ref,
    default_lock_dir,
    load_locks,
    normalise_prefix,
    project_lock_dir,
)
from analyzer.snapshots.models import GitPin, LockEntry, Snapshot, SnapshotError, SnapshotRef


@dataclass(frozen=True, slots=True)
class SnapshotStatus:
    """One row of `atlas snapshot list`."""

    name: str
    kind: str  # "release" | "git"
    pinned_in: str  # lock file, the pins file, or "" when only the store knows it
    fetched: bool
    source: str
    upstream_commit: str | None
    store_commit: str | None
    tree: Path | None


@dataclass(frozen=True, slots=True)
class DiffChange:
    status: str  # git's letter: A, D, M, R (rename), C, T
    old_path: str | None
    new_path: str | None
    similarity: int | None  # for renames and copies, percent


# ------------------------------------------------------------------ refs


def resolve_ref(settings: Settings, ref: str | SnapshotRef) -> SnapshotRef:
    """`project@version` as is; a bare git-pin name (`mytree`) when exactly one pin has it."""
    if isinstance(ref, SnapshotRef):
        return check_ref(ref)
    text = ref.strip()
    if "@" in text:
        return check_ref(SnapshotRef.parse(text))
    matches = [p.ref for p in pinning.load_pins(settings.snapshot_store).values()]
    matches = [r for r in matches if r.project == text.lower()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(sorted(str(r) for r in matches))
        raise SnapshotError(f"{text!r} names several git pins ({names}); say which")
    raise SnapshotError(f"expected PROJECT@VERSION (e.g. vllm@0.30.0), got {text!r}")


# ------------------------------------------------------------------ open / fetch


def open_snapshot(settings: Settings, ref: str | SnapshotRef) -> Snapshot:
    """A fetched snapshot; never touches the network. Its tree is recreated from
    the store if it went missing."""
    name = str(resolve_ref(settings, ref))
    store = GitStore(settings.snapshot_store)
    try:
        stored = store.read(name)
        if stored is None:
            raise SnapshotError(f"{name} is not fetched; run `atlas snapshot fetch {name}`")
        tree = store.tree_path(name)
        if not tree.is_dir():
            with store.locked():
                if not tree.is_dir():
                    store.materialize(name, stored.commit)
        return _snapshot(stored, tree)
    finally:
        store.close()


def is_fetched(settings: Settings, ref: str | SnapshotRef) -> bool:
    store = GitStore(settings.snapshot_store)
    try:
        return store.tag_commit(str(resolve_ref(settings, ref))) is not None
    finally:
        store.close()


def fetch_snapshot(
    settings: Settings,
    ref: str | SnapshotRef,
    *,
    wheel: Path | None = None,
    find_links: Path | None = None,
    lock_dir: Path | None = None,
) -> Snapshot:
    """Fetch a locked release (or re-create a git pin) into the store. A no-op
    when already fetched. Nothing is visible until the final tag update."""
    name = str(resolve_ref(settings, ref))
    store = GitStore(settings.snapshot_store)
    try:
        with store.locked():
            if store.tag_commit(name) is None:
                store.clean_tmp()  # leftovers of killed runs; safe under the lock
                locks = load_locks(lock_dir)
                pins = pinning.load_pins(settings.snapshot_store)
                if name in locks:
                    _fetch_release(store, locks[name], wheel=wheel, find_links=find_links)
                elif name in pins:
                    if wheel is not None or find_links is not None:
                        raise SnapshotError(
                            f"{name} is a git pin; --wheel/--find-links do not apply"
                        )
                    _fetch_pin(store, pins[name])
                else:
                    raise SnapshotError(
                        f"{name} is not pinned: no lock file in {_lock_dir_text(lock_dir)} names it "
                        f"and no git pin has that name; `atlas snapshot lock {name}` pins a release "
                        "(see `atlas snapshot list`)"
                    )
    finally:
        store.close()
    return open_snapshot(settings, name)


def ensure_snapshot(
    settings: Settings, ref: str | SnapshotRef, *, lock_dir: Path | None = None
) -> Snapshot:
    """Open the snapshot, fetching it first when it is pinned but not fetched."""
    if is_fetched(settings, ref):
        return open_snapshot(settings, ref)
    return fetch_snapshot(settings, ref, lock_dir=lock_dir)


def _fetch_release(
    store: GitStore, entry: LockEntry, *, wheel: Path | None, find_links: Path | None
) -> None:
    staging = store.staging_dir("fetch-")
    try:
        artifact = locate_artifact(entry, staging / "download", wheel=wheel, find_links=find_links)
        _store_artifact(store, entry, artifact, staging)
    finally:
        discard(staging)


def _store_artifact(store: GitStore, entry: LockEntry, artifact: Path, staging: Path) -> str | None:
    """Verify `artifact` against the entry's sha256, extract it and publish it
    under the entry's name; returns the commit the artifact records."""
    name = str(entry.ref)
    verify_sha256(artifact, entry.sha256)
    tree = staging / "tree"
    if entry.kind == "wheel":
        report = extract_zip(artifact, tree)
    else:
        report = extract_tar(artifact, tree, strip_top=True)
    packages = detect_packages(tree)
    found = recorded_commit(tree, packages)
    if entry.upstream_commit and found and not _same_commit(entry.upstream_commit, found):
        raise SnapshotError(
            f"{name}: the lock says upstream commit {entry.upstream_commit}, "
            f"the artifact records {found}"
        )
    meta = _meta(
        "release",
        name,
        source=entry.artifact,
        layout_prefix=entry.layout_prefix,
        upstream_commit=entry.upstream_commit or found,
        packages=packages,
        report=report,
        sha256=entry.sha256,
    )
    commit = store.commit_tree(tree, name, meta)
    store.publish(name, commit, tree)
    return entry.upstream_commit or found


def _fetch_pin(store: GitStore, pin: GitPin) -> None:
    name = str(pin.ref)
    staging = store.staging_dir("pin-")
    try:
        mirror, full = pinning.find_commit(store, pin.url, pin.commit)
        archive = staging / "source.tar"
        pinning.export_commit(mirror, full, archive)
        tree = staging / "tree"
        report = extract_tar(archive, tree, links="skip")
        root = tree / pin.layout_prefix if pin.layout_prefix else tree
        packages = detect_packages(root) if root.is_dir() else ()
        meta = _meta(
            "git",
            name,
            source=pin.url,
            layout_prefix=pin.layout_prefix,
            upstream_commit=full,
            packages=packages,
            report=report,
        )
        commit = store.commit_tree(tree, name, meta)
        store.publish(name, commit, tree)
    finally:
        discard(staging)


def _same_commit(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def _meta(
    kind: str,
    name: str,
    *,
    source: str,
    layout_prefix: str,
    upstream_commit: str | None,
    packages: tuple[str, ...],
    report: ExtractReport,
    sha256: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "ref": name,
        "source": source,
        "sha256": sha256,
        "layout_prefix": layout_prefix,
        "upstream_commit": upstream_commit,
        "packages": list(packages),
        "files": report.written,
        "skipped_binary": report.skipped_binary,
        "skipped_links": report.skipped_links,
    }


def _snapshot(stored: StoredSnapshot, tree: Path) -> Snapshot:
    meta = stored.meta
    return Snapshot(
        ref=SnapshotRef.parse(stored.name),
        kind=str(meta.get("kind", "release")),
        tree=tree,
        layout_prefix=str(meta.get("layout_prefix", "")),
        upstream_commit=meta.get("upstream_commit"),
        store_commit=stored.commit,
        packages=tuple(meta.get("packages", ())),
        source=str(meta.get("source", "")),
    )


def _lock_dir_text(lock_dir: Path | None) -> str:
    if lock_dir is not None:
        return str(lock_dir)
    book = project_lock_dir()
    return str(default_lock_dir()) + (f" or {book}" if book is not None else "")


# ------------------------------------------------------------------ git pins


def add_git_pin(
    settings: Settings,
    name: str,
    url: str,
    commit: str | None,
    *,
    layout_prefix: str | None = None,
    lock_dir: Path | None = None,
    git_ref: str | None = None,
) -> tuple[Snapshot, bool]:
    """Pin `commit` of `url` (or the commit tag/branch `git_ref` names now) as a
    snapshot; returns it and whether anything was added."""
    source = pinning.check_url(url)
    if git_ref is not None:
        sha = pinning.check_git_ref(git_ref)
    elif commit is not None:
        sha = pinning.check_sha(commit)
    else:
        raise SnapshotError("name a commit or a git ref to pin")
    # Validate the name before any network traffic.
    if "@" in name:
        check_ref(SnapshotRef.parse(name))
    else:
        check_ref(SnapshotRef(name.strip().lower(), "0"))
    store = GitStore(settings.snapshot_store)
    added = False
    try:
        with store.locked():
            store.clean_tmp()
            if git_ref is None:
                _mirror, full = pinning.find_commit(store, source, sha)
            else:
                _mirror, full = pinning.resolve_named_ref(store, source, sha)
            ref = pinning.pin_ref(name, full)
            key = str(ref)
            locks = load_locks(lock_dir)
            if key in locks:
                raise SnapshotError(f"{key} is a locked release; pick another name for the git pin")
            pins = pinning.load_pins(settings.snapshot_store)
            existing = pins.get(key)
            if existing is not None and (existing.commit, existing.url) != (full, source):
                raise SnapshotError(
                    f"{key} is already pinned to {existing.commit[:12]} of {existing.url}; "
                    f"remove it first (`atlas snapshot remove {key}`) or pick another name"
                )
            if existing is None:
                if store.tag_commit(key) is not None:
                    raise SnapshotError(f"the store already holds a snapshot named {key}")
                prefix = _default_prefix(ref, locks) if layout_prefix is None else layout_prefix
                pin = GitPin(ref, source, full, normalise_prefix(prefix))
                pins[key] = pin
                pinning.save_pins(settings.snapshot_store, pins)
                added = True
            else:
                pin = existing
            if store.tag_commit(key) is None:
                _fetch_pin(store, pin)
                added = True
    finally:
        store.close()
    return open_snapshot(settings, key), added


def _default_prefix(ref: SnapshotRef, locks: dict[str, LockEntry]) -> str:
    """A pin of a known project inherits its repository layout (sglang -> python/)."""
    for entry in locks.values():
        if entry.ref.project == ref.project:
            return entry.layout_prefix
    return ""


def remove_snapshot(settings: Settings, ref: str | SnapshotRef) -> list[str]:
    """Drop a snapshot from the store (and its git pin). Returns what was removed."""
    name = str(resolve_ref(settings, ref))
    store = GitStore(settings.snapshot_store)
    removed: list[str] = []
    try:
        with store.locked():
            if store.tag_commit(name) is not None or store.tree_path(name).exists():
                store.delete(name)
                removed.append(f"snapshot {name}")
            pins = pinning.load_pins(settings.snapshot_store)
            pin = pins.pop(name, None)
            if pin is not None:
                pinning.save_pins(settings.snapshot_store, pins)
                pinning.remove_mirror_if_unused(store, pin.url, pins)
                removed.append(f"git pin {name}")
    finally:
        store.close()
    if not removed:
        raise SnapshotError(f"{name} is neither fetched nor pinned")
    return removed


# ------------------------------------------------------------------ list / diff


def list_snapshots(settings: Settings, *, lock_dir: Path | None = None) -> list[SnapshotStatus]:
    store = GitStore(settings.snapshot_store)
    try:
        tags = store.tags()
        rows: dict[str, SnapshotStatus] = {}
        for name, entry in load_locks(lock_dir).items():
            rows[name] = _status(
                store,
                name,
                "release",
                str(entry.lock_file or ""),
                entry.artifact,
                entry.upstream_commit,
                tags,
            )
        for name, pin in pinning.load_pins(settings.snapshot_store).items():
            rows[name] = _status(
                store,
                name,
                "git",
                str(settings.snapshot_store / pinning.PINS_FILE),
                pin.url,
                pin.commit,
                tags,
            )
        for name in tags.keys() - rows.keys():  # fetched under a lock dir not in use now
            stored = store.read(name)
            meta = stored.meta if stored else {}
            rows[name] = _status(
                store,
                name,
                str(meta.get("kind", "release")),
                "",
                str(meta.get("source", "")),
                meta.get("upstream_commit"),
                tags,
            )
        return [rows[k] for k in sorted(rows)]
    finally:
        store.close()


def _status(
    store: GitStore,
    name: str,
    kind: str,
    pinned_in: str,
    source: str,
    upstream: str | None,
    tags: dict[str, str],
) -> SnapshotStatus:
    commit = tags.get(name)
    return SnapshotStatus(
        name=name,
        kind=kind,
        pinned_in=pinned_in,
        fetched=commit is not None,
        source=source,
        upstream_commit=upstream,
        store_commit=commit,
        tree=store.tree_path(name) if commit is not None else None,
    )


def _diff_sides(settings: Settings, a: str | SnapshotRef, b: str | SnapshotRef) -> tuple[str, str]:
    """Tree-ishes to compare. A git pin compared with a release is compared from
    its package root (`<commit>:python`), so both sides share the package layout."""
    snaps = [open_snapshot(settings, r) for r in (a, b)]
    mixed = {s.kind for s in snaps} == {"release", "git"}
    sides = []
    for snap in snaps:
        if mixed and snap.kind == "git" and snap.layout_prefix:
            sides.append(f"{snap.store_commit}:{snap.layout_prefix.rstrip('/')}")
        else:
            sides.append(snap.store_commit)
    return sides[0], sides[1]


def diff_snapshots(
    settings: Settings, a: str | SnapshotRef, b: str | SnapshotRef, *, stat: bool = False
) -> str:
    """`git diff` with rename detection between two stored snapshots, as text."""
    left, right = _diff_sides(settings, a, b)
    args = ["--find-renames", "--no-color"] + (["--stat=200"] if stat else [])
    return _git_diff(settings, *args, left, right)


def diff_changes(
    settings: Settings, a: str | SnapshotRef, b: str | SnapshotRef
) -> list[DiffChange]:
    left, right = _diff_sides(settings, a, b)
    out = _git_diff(settings, "--find-renames", "--name-status", "-z", left, right)
    fields = out.split("\0")
    changes: list[DiffChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        letter, score = status[0], status[1:]
        if letter in "RC":
            changes.append(DiffChange(letter, fields[i + 1], fields[i + 2], int(score or 0)))
            i += 3
        else:
            old = None if letter == "A" else fields[i + 1]
            new = None if letter == "D" else fields[i + 1]
            changes.append(DiffChange(letter, old, new, None))
            i += 2
    return changes


def _git_diff(settings: Settings, *args: str) -> str:
    store = GitStore(settings.snapshot_store)
    try:
        return store.repo().git.diff(*args, strip_newline_in_stdout=False)
    except git.GitCommandError as exc:
        raise SnapshotError(f"git diff failed: {exc.stderr.strip()}") from None
    finally:
        store.close()
