"""`atlas snapshot ...`: fetch, add, list, path, diff, remove."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from analyzer.commandline import fail, settings_of, stdout_console
from analyzer.snapshots.lock import lock_releases
from analyzer.snapshots.locks import load_locks
from analyzer.snapshots.models import Snapshot, SnapshotError
from analyzer.snapshots.releases import IndexOptions
from analyzer.snapshots.store import (
    add_git_pin,
    diff_changes,
    diff_snapshots,
    fetch_snapshot,
    is_fetched,
    list_snapshots,
    open_snapshot,
    remove_snapshot,
)

T = TypeVar("T")

snapshot_app = typer.Typer(
    help="Pinned vLLM / SGLang source trees: fetch releases, pin git commits, diff them.",
    no_args_is_help=True,
)

LOCK_DIR = typer.Option(
    None, "--lock-dir", help="Folder of lock files (default: the book project's lock folder, "
    "then the toolkit's own snapshots/).",
)
JSON = typer.Option(False, "--json", help="Print machine-readable JSON.")


def register(app: typer.Typer) -> None:
    app.add_typer(snapshot_app, name="snapshot")


def _run(action: Callable[[], T]) -> T:
    """Turn SnapshotError into a one-line message and exit status 2 (no traceback)."""
    try:
        return action()
    except (SnapshotError, OSError) as exc:  # OSError: disk full, permissions, ...
        raise fail(str(exc)) from None




def _snapshot_json(snap: Snapshot) -> dict[str, Any]:
    return {
        "ref": snap.name,
        "kind": snap.kind,
        "tree": str(snap.tree),
        "package_root": str(snap.package_root),
        "layout_prefix": snap.layout_prefix,
        "upstream_commit": snap.upstream_commit,
        "store_commit": snap.store_commit,
        "packages": list(snap.packages),
        "source": snap.source,
    }


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@snapshot_app.command("fetch")
def fetch_cmd(
    ctx: typer.Context,
    refs: list[str] = typer.Argument(None, help="Snapshots to fetch, e.g. vllm@0.30.0."),
    all_: bool = typer.Option(False, "--all", help="Fetch every locked release."),
    wheel: Path = typer.Option(None, "--wheel", help="Use this local artifact instead of pip."),
    find_links: Path = typer.Option(
        None, "--find-links", help="Wheelhouse folder searched first (works offline)."
    ),
    lock_dir: Path = LOCK_DIR,
    as_json: bool = JSON,
) -> None:
    """Download, verify (sha256) and store locked releases; re-fetching is a no-op."""
    settings = settings_of(ctx)
    names = list(refs or [])
    if all_:
        names += sorted(_run(lambda: load_locks(lock_dir)))
    if not names:
        raise typer.BadParameter("name at least one snapshot, or pass --all")
    if wheel is not None and len(names) != 1:
        raise typer.BadParameter("--wheel applies to exactly one snapshot")
    console = Console(stderr=True)
    results = []
    for name in names:
        already = _run(partial(is_fetched, settings, name))
        if already:
            snap = _run(partial(open_snapshot, settings, name))
            if not as_json:
                console.print(
                    f"{snap.name}: already fetched (nothing to do) at {snap.tree}", soft_wrap=True
                )
        else:
            with console.status(f"fetching {name} ..."):
                snap = _run(
                    partial(
                        fetch_snapshot, settings, name, wheel=wheel, find_links=find_links, lock_dir=lock_dir
                    )
                )
            if not as_json:
                console.print(f"[green]{snap.name}[/]: fetched into {snap.tree}", soft_wrap=True)
        results.append(_snapshot_json(snap) | {"already_fetched": already})
    if as_json:
        _echo_json(results)


@snapshot_app.command("lock")
def lock_cmd(
    ctx: typer.Context,
    refs: list[str] = typer.Argument(
        ..., help="Releases to pin, e.g. vllm@0.31.0 sglang@latest (@latest: newest on the index)."
    ),
    find_links: list[Path] = typer.Option(
        [], "--find-links", "-f", help="Folder of wheels/sdists searched before the index."
    ),
    index_url: str = typer.Option(
        None, "--index-url", "-i", help="PEP 691 simple index (default $PIP_INDEX_URL, else PyPI)."
    ),
    no_index: bool = typer.Option(False, "--no-index", help="Only the --find-links folders."),
    lock_dir: Path = LOCK_DIR,
    as_json: bool = JSON,
) -> None:
    """Pin releases in one command: download, verify, store, and record file name,
    sha256 and upstream commit in the lock file. Re-running is a no-op."""
    settings = settings_of(ctx)
    options = IndexOptions(tuple(find_links), index_url, no_index)
    console = Console(stderr=True, soft_wrap=True)
    results = []
    for text in refs:
        with console.status(f"locking {text} ..."):
            (result,) = _run(
                partial(lock_releases, settings, [text], options, lock_dir=lock_dir)
            )
        results.append(result)
        if as_json:
            continue
        commit = result.upstream_commit or "no upstream commit recorded in the artifact"
        verb = {
            "locked": "[green]locked[/]",
            "fetched": "[green]fetched[/] (was locked)",
            "unchanged": "already locked and fetched (nothing to do)",
        }[result.action]
        console.print(f"{result.ref}: {verb} {result.artifact}, {commit}, in {result.lock_file}")
    if as_json:
        _echo_json([asdict(r) for r in results])


@snapshot_app.command("add")
def add_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="NAME (ref NAME@<sha12>) or PROJECT@LABEL (used as is)."),
    url: str = typer.Option(..., "--git", help="Repository URL or local path."),
    commit: str = typer.Option(None, "--commit", help="Commit SHA (short SHAs are resolved)."),
    git_ref: str = typer.Option(
        None, "--ref", help="Tag or branch instead of --commit, resolved to its commit now."
    ),
    layout_prefix: str = typer.Option(
        None,
        "--layout-prefix",
        help="Where the package sits in the repository, e.g. python/ "
        "(default: the locked project's, else the root).",
    ),
    lock_dir: Path = LOCK_DIR,
    as_json: bool = JSON,
) -> None:
    """Pin a git commit as a snapshot (recorded in the user's store, not the repository)."""
    settings = settings_of(ctx)
    if (commit is None) == (git_ref is None):
        raise typer.BadParameter("give exactly one of --commit SHA and --ref TAG_OR_BRANCH")
    with Console(stderr=True).status(f"pinning {commit or git_ref} of {url} ..."):
        snap, added = _run(
            lambda: add_git_pin(
                settings,
                name,
                url,
                commit,
                layout_prefix=layout_prefix,
                lock_dir=lock_dir,
                git_ref=git_ref,
            )
        )
    if as_json:
        _echo_json(_snapshot_json(snap) | {"added": added})
        return
    verb = "pinned" if added else "already pinned (nothing to do)"
    stdout_console().print(
        f"[green]{snap.name}[/]: {verb} {snap.upstream_commit} at {snap.tree}", soft_wrap=True
    )


@snapshot_app.command("list")
def list_cmd(ctx: typer.Context, lock_dir: Path = LOCK_DIR, as_json: bool = JSON) -> None:
    """What is pinned (lock files and git pins) and what is fetched."""
    settings = settings_of(ctx)
    rows = _run(lambda: list_snapshots(settings, lock_dir=lock_dir))
    if as_json:
        _echo_json([asdict(r) for r in rows])
        return
    table = Table(title=f"snapshots ({settings.snapshot_store})")
    table.add_column("ref", no_wrap=True)
    table.add_column("kind")
    table.add_column("fetched")
    table.add_column("upstream commit", no_wrap=True)
    table.add_column("source", overflow="fold")
    table.add_column("pinned in", overflow="fold")
    for r in rows:
        table.add_row(
            r.name,
            r.kind,
            "[green]yes[/]" if r.fetched else "[dim]no[/]",
            r.upstream_commit[:12] if r.upstream_commit else "[dim]not recorded[/]",
            r.source,
            Path(r.pinned_in).name if r.pinned_in else "[dim]store only[/]",
        )
    stdout_console().print(table)


@snapshot_app.command("path")
def path_cmd(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="A fetched snapshot, e.g. vllm@0.30.0."),
    package: bool = typer.Option(
        False, "--package", help="Print the package root (under the layout prefix) instead."
    ),
    as_json: bool = JSON,
) -> None:
    """Print the snapshot's tree path (for scripts)."""
    snap = _run(lambda: open_snapshot(settings_of(ctx), ref))
    if as_json:
        _echo_json(_snapshot_json(snap))
        return
    typer.echo(str(snap.package_root if package else snap.tree))


@snapshot_app.command("diff")
def diff_cmd(
    ctx: typer.Context,
    a: str = typer.Argument(..., help="Old snapshot."),
    b: str = typer.Argument(..., help="New snapshot."),
    stat: bool = typer.Option(False, "--stat", help="Summary per file instead of the patch."),
    as_json: bool = JSON,
) -> None:
    """git diff between two stored snapshots, with rename detection."""
    settings = settings_of(ctx)
    if as_json:
        changes = _run(lambda: diff_changes(settings, a, b))
        _echo_json([asdict(c) for c in changes])
        return
    typer.echo(_run(lambda: diff_snapshots(settings, a, b, stat=stat)), nl=False)


@snapshot_app.command("remove")
def remove_cmd(ctx: typer.Context, ref: str = typer.Argument(...), as_json: bool = JSON) -> None:
    """Delete a snapshot from the store (and its git pin, if it is one)."""
    removed = _run(lambda: remove_snapshot(settings_of(ctx), ref))
    if as_json:
        _echo_json({"removed": removed})
        return
    for item in removed:
        stdout_console().print(f"removed {item}")
