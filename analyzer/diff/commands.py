"""`atlas diff A B`: a version diff (same project) or a design diff (two projects)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analyzer.commandline import fail, stdout_console
from analyzer.diff.html import write_html
from analyzer.diff.models import VersionDiff
from analyzer.diff.pins import DiffError
from analyzer.diff.render import print_design, print_version
from analyzer.diff.run import run_diff
from analyzer.settings import Settings


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)


def _book_pin_for(release: str) -> str:
    """The pin of `release`'s project in the book project around the working directory."""
    from analyzer.project import ProjectError, find_project

    try:
        project = find_project()
    except ProjectError as exc:
        raise fail(str(exc)) from None
    name = release.partition("@")[0].strip().lower()
    pins = [p for p in (project.pins if project else ()) if p.partition("@")[0].strip().lower() == name]
    if not pins:
        where = f"{project.config} pins no {name} release" if project else "no atlas.toml here"
        raise fail(f"name two releases (OLD NEW); {where} to compare {release} with")
    return pins[0]


def diff_command(
    ctx: typer.Context,
    left: str = typer.Argument(..., help="A release (vllm@0.30.0) or `reference` (our engine)."),
    right: str = typer.Argument(
        None,
        help="Another release of the same project (version diff) or of another one (design diff). "
        "Omitted in a book project: LEFT is the new release, the book's pin of its project the old one.",
    ),
    concept: str = typer.Option(None, "--concept", help="Only this concept (see `atlas map list`)."),
    calls: bool = typer.Option(True, "--calls/--no-calls", help="Use the call graphs (built once per release; minutes when cold)."),
    html: Path = typer.Option(None, "--html", help="Also write a standalone HTML page here."),
    mappings: Path = typer.Option(None, "--mappings", help="Folder of concept files (default: the repository's mappings/)."),
    fetch: bool = typer.Option(True, "--fetch/--no-fetch", help="Fetch pinned releases not fetched yet."),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    cited_by: list[Path] = typer.Option(
        None, "--cited-by",
        help="A book (Markdown files or folders): only changes to the symbols, modules, flags and "
        "env vars it cites (a changelog for its author). No call graphs are built.",
    ),
) -> None:
    """Compare two releases of one project (symbols, flags, call edges per concept),
    or two projects side by side per concept (state owners, call structure, knobs)."""
    from analyzer.mappings.commands import load_or_fail

    if right is None:
        left, right = _book_pin_for(left), left
    settings = ctx.find_root().obj
    if not isinstance(settings, Settings):
        from analyzer.settings import default_cache_dir

        settings = Settings(cache_dir=default_cache_dir())
    concepts = load_or_fail(mappings, [concept] if concept else None)
    progress = not as_json and sys.stderr.isatty()
    if cited_by:
        calls = False  # a book cites names, not call edges
    try:
        result = run_diff(settings, left, right, concepts, concept=concept, calls=calls, fetch=fetch, progress=progress)
    except DiffError as exc:
        raise fail(str(exc)) from None
    if cited_by:
        from analyzer.follow import limit_to_cited
        from analyzer.refs.config import RefsError

        if not isinstance(result, VersionDiff):
            raise fail("--cited-by applies to two releases of one project (a version diff)")
        try:
            result = limit_to_cited(result, list(cited_by))
        except RefsError as exc:
            raise fail(str(exc)) from None
    if html is not None:
        try:
            write_html(result, html)
        except OSError as exc:
            raise fail(f"cannot write {html}: {exc}") from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    elif isinstance(result, VersionDiff):
        print_version(stdout_console(), result)
    else:
        print_design(stdout_console(), result)
