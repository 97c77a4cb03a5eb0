"""`atlas init`: make a folder a book project (see analyzer/project.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from analyzer.commandline import EXIT_FINDINGS, fail, settings_of
from analyzer.project import DEFAULT_LOCK_DIR, ProjectError, write_config
from analyzer.refs.config import MARKDOWN_SUFFIXES


def _has_manuscript(folder: Path) -> bool:
    return any(p.suffix.lower() in MARKDOWN_SUFFIXES and p.is_file() for p in folder.rglob("*"))


def guess_manuscript(root: Path, lock_dir: str) -> list[str]:
    """Folders holding Markdown or notebooks, and Markdown files at the top (a
    README is about the repository, not the book); the whole folder when none."""
    found: list[str] = []
    for path in sorted(root.iterdir()):
        if path.name.startswith((".", "_")) or path.name in (lock_dir, "reports"):
            continue
        is_chapter = (
            path.is_file()
            and path.suffix.lower() in MARKDOWN_SUFFIXES
            and path.stem.lower() not in ("readme", "license", "changelog")
        )
        if is_chapter or (path.is_dir() and _has_manuscript(path)):
            found.append(path.name)
    return found or ["."]


def default_pins() -> list[str]:
    """The newest release of vLLM and SGLang the toolkit locks."""
    from analyzer.report.run import newest_releases

    return newest_releases()


def init_project(
    root: Path,
    *,
    pins: list[str],
    manuscript: list[str],
    ignore: list[str],
    lock_dir: str = DEFAULT_LOCK_DIR,
) -> tuple[Path, list[str], list[str]]:
    """Write atlas.toml and copy the lock tables of pins the toolkit already locks
    into the book's lock folder (so the book does not depend on the toolkit's
    copy). Returns the config and the pins copied and still to lock."""
    from analyzer.snapshots.locks import load_locks, project_defaults, record_release
    from analyzer.snapshots.models import SnapshotError, SnapshotRef

    for pin in pins:
        project, sep, version = pin.partition("@")
        if not sep or not project or not version:
            raise ProjectError(f"expected PROJECT@VERSION (e.g. vllm@0.30.0), got {pin!r}")
    for item in manuscript:
        if not (root / item).exists():
            raise ProjectError(f"manuscript {item!r}: no such file or folder under {root}")
    config = write_config(root, manuscript=manuscript, pins=pins, ignore=ignore, lock_dir=lock_dir)
    locks = load_locks()
    folder = root / lock_dir
    copied, missing = [], []
    for pin in pins:
        entry = locks.get(pin.strip().lower()) or locks.get(pin.strip())
        if entry is None:
            missing.append(pin)
            continue
        existing = load_locks(folder) if folder.is_dir() else {}
        if str(entry.ref) not in existing:
            try:
                record_release(
                    folder,
                    SnapshotRef(entry.ref.project, entry.ref.version),
                    artifact=entry.artifact,
                    sha256=entry.sha256,
                    upstream_commit=entry.upstream_commit,
                    defaults=project_defaults(entry.ref.project, entry.lock_file.parent)
                    if entry.lock_file
                    else {},
                )
            except SnapshotError as exc:
                raise ProjectError(str(exc)) from None
        copied.append(pin)
    return config, copied, missing


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_cmd(
        folder: Path = typer.Argument(Path("."), help="The book's folder (default: here)."),
        pin: list[str] = typer.Option(
            [], "--pin", help="PROJECT@VERSION the book is written against (repeat; default: newest locked)."
        ),
        manuscript: list[str] = typer.Option(
            [], "--manuscript", "-m", help="File or folder of the manuscript (repeat; default: guessed)."
        ),
        ignore: list[str] = typer.Option([], "--ignore", help="Glob of code-font names that are not references."),
        lock_dir: str = typer.Option(DEFAULT_LOCK_DIR, "--lock-dir", help="Lock folder, relative to the book."),
    ) -> None:
        """Write atlas.toml here: the manuscript, the pins, and a lock folder beside it.
        Every command run in the folder then uses them (check, report, snapshot lock)."""
        console = Console(stderr=True, soft_wrap=True)
        root = folder.resolve()
        if not root.is_dir():
            raise fail(f"{folder} is not a folder")
        try:
            pins = pin or default_pins()
            chosen = manuscript or guess_manuscript(root, lock_dir)
            config, copied, missing = init_project(
                root, pins=pins, manuscript=chosen, ignore=ignore, lock_dir=lock_dir
            )
        except ProjectError as exc:
            raise fail(str(exc)) from None
        console.print(f"wrote {escape(str(config))}")
        console.print(f"  manuscript: {escape(', '.join(chosen))}")
        console.print(f"  pins: {escape(', '.join(pins))}" + ("" if pin else " (the newest locked; --pin to choose)"))
        if copied:
            console.print(f"  locked in {escape(str(root / lock_dir))}: {escape(', '.join(copied))}")
        for ref in missing:
            console.print(
                f"  [yellow]{escape(ref)} is not locked yet[/]: run `atlas snapshot lock {escape(ref)}` here"
                " (or `atlas snapshot add` for a git commit)"
            )
        console.print("next: `atlas check` (the manuscript against the pins), `atlas report` (the walkthrough)")

    @app.command("watch")
    def watch_cmd(
        ctx: typer.Context,
        find_links: list[Path] = typer.Option(
            [], "--find-links", "-f", help="Folder of wheels/sdists searched before the index."
        ),
        index_url: str = typer.Option(None, "--index-url", "-i", help="PEP 691 simple index (default PyPI)."),
        no_index: bool = typer.Option(False, "--no-index", help="Only the --find-links folders."),
        sarif: Path = typer.Option(
            Path("atlas-watch.sarif"), "--sarif", help="Where to write SARIF when something broke ('-': stdout)."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the timelines as JSON."),
    ) -> None:
        """For CI: lock the newest release of every project the book pins, check the book
        through every locked release newer than its pins, and exit 1 (writing SARIF)
        when a reference broke. Run it in the book's folder."""
        from analyzer.follow import LATEST, follow_command
        from analyzer.project import find_project
        from analyzer.snapshots.lock import lock_releases
        from analyzer.snapshots.models import SnapshotError
        from analyzer.snapshots.releases import IndexOptions

        console = Console(stderr=True, soft_wrap=True)
        try:
            project = find_project()
        except ProjectError as exc:
            raise fail(str(exc)) from None
        if project is None:
            raise fail("no atlas.toml here or above; run `atlas init` in the book's folder")
        projects = sorted({p.partition("@")[0].strip().lower() for p in project.pins})
        options = IndexOptions(tuple(find_links), index_url, no_index)
        try:
            results = lock_releases(settings_of(ctx), [f"{p}@{LATEST}" for p in projects], options)
        except SnapshotError as exc:
            raise fail(str(exc)) from None
        for r in results:
            console.print(f"newest {r.ref.partition('@')[0]}: {r.ref} ({r.action})")
        code = follow_command(settings_of(ctx), [], [LATEST], as_json, sarif, False)
        if sarif != Path("-"):
            console.print(f"SARIF ({'something broke' if code == EXIT_FINDINGS else 'nothing broke'}): {escape(str(sarif))}")
        raise typer.Exit(code)
