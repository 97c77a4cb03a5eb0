"""`atlas map list|show|verify`: the concept catalogue and its check against the pins."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analyzer.commandline import EXIT_FINDINGS, fail, settings_of, stdout_console
from analyzer.mappings.load import load_concepts
from analyzer.mappings.models import REFERENCE, UPSTREAMS, ConceptMapping, MappingError
from analyzer.mappings.render import print_concept, print_concept_list, print_verify
from analyzer.mappings.verify import run_verify
from analyzer.pinned import TreeError, open_tree

JSON_OPT = typer.Option(False, "--json", help="Print machine-readable JSON.")
DIR_OPT = typer.Option(None, "--mappings", help="Folder of concept files (default: the repository's mappings/).")


def register(app: typer.Typer) -> None:
    map_app = typer.Typer(help="The concept catalogue: where each idea of the book lives.", no_args_is_help=True)
    map_app.command("list")(list_command)
    map_app.command("show")(show_command)
    map_app.command("verify")(verify_command)
    map_app.command("trace")(trace_command)
    app.add_typer(map_app, name="map")




def load_or_fail(directory: Path | None, concept_ids: list[str] | None = None) -> list[ConceptMapping]:
    """`load_concepts` for a command: its error is printed and the command exits 2."""
    try:
        return load_concepts(directory, concept_ids)
    except MappingError as exc:
        raise fail(str(exc)) from None


CHAPTERS_OPT = typer.Option(
    False, "--chapters", help="The book's chapters, part by part, with their concepts and statuses."
)


def list_command(mappings: Path = DIR_OPT, chapters: bool = CHAPTERS_OPT, as_json: bool = JSON_OPT) -> None:
    """Every concept and, per side, whether it is implemented and mapped."""
    concepts = load_or_fail(mappings)
    if chapters:
        _list_chapters(mappings, concepts, as_json)
        return
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in concepts], indent=2))
        return
    print_concept_list(stdout_console(), concepts)


def _list_chapters(mappings: Path | None, concepts: list[ConceptMapping], as_json: bool) -> None:
    from analyzer.mappings.book import chapter_table, load_contents
    from analyzer.mappings.load import default_mappings_dir
    from analyzer.mappings.render import print_chapter_table

    try:
        table = chapter_table(load_contents(mappings or default_mappings_dir()), concepts)
    except MappingError as exc:
        raise fail(str(exc)) from None
    if as_json:
        payload = {
            "parts": [
                {
                    "title": part.title,
                    "chapters": [
                        {
                            "title": ch,
                            "concepts": [
                                {"id": c.id, **{s: c.side(s).status for s in (REFERENCE, *UPSTREAMS)}}
                                for c in table.concepts.get(ch, [])
                            ],
                        }
                        for ch in part.chapters
                    ],
                }
                for part in table.parts
            ],
            "uncovered": table.uncovered,
            "unknown_chapters": table.unknown,
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    print_chapter_table(stdout_console(), table)


def show_command(
    concept: str = typer.Argument(..., help="Concept id, e.g. paged-kv (see `atlas map list`)."),
    mappings: Path = DIR_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """One concept: its symbols, entry points, flags and process bridges per project."""
    found = load_or_fail(mappings, [concept])[0]
    if as_json:
        typer.echo(json.dumps(found.to_dict(), indent=2))
        return
    print_concept(stdout_console(), found)


def verify_command(
    ctx: typer.Context,
    pins: list[str] = typer.Option(
        None, "--pin", help="Check only these releases (repeatable); default: every locked release."
    ),
    concepts: list[str] = typer.Option(None, "--concept", help="Check only these concepts (repeatable)."),
    mappings: Path = DIR_OPT,
    no_reference: bool = typer.Option(False, "--no-reference", help="Skip the reference engine."),
    fetch: bool = typer.Option(True, "--fetch/--no-fetch", help="Fetch pinned releases not fetched yet."),
    chains: bool = typer.Option(
        True, "--chains/--no-chains",
        help="Check that the steps of each concept are connected (builds each pin's call graph, cached)."),
    as_json: bool = JSON_OPT,
) -> None:
    """Check every mapped symbol, flag, env var and bridge against each pin; exit 1 on a stale one.

    Coverage is printed too: concepts the reference engine does not implement,
    or that no upstream mapping covers yet, are listed (and do not fail the run)."""
    settings = settings_of(ctx)
    catalogue = load_or_fail(mappings)
    selected = load_or_fail(mappings, concepts)
    try:
        report = run_verify(settings, selected, pins or None, reference=not no_reference, fetch=fetch,
                            progress=not as_json and sys.stderr.isatty(), chains=chains, catalogue=catalogue)
    except TreeError as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_verify(stdout_console(), report)
    if not report.ok:
        raise typer.Exit(EXIT_FINDINGS)


def trace_command(
    ctx: typer.Context,
    target: str = typer.Argument(..., help="A release (vllm@0.30.0) or `reference`."),
    source: str = typer.Argument(..., help="Where the request starts, e.g. AsyncLLM.generate."),
    dest: str = typer.Argument(..., help="Where it should arrive, e.g. Scheduler.add_request."),
    max_length: int = typer.Option(16, "--max-length", min=1, max=60, help="Most hops (calls + bridges)."),
    mappings: Path = DIR_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Shortest path from SOURCE to DEST through the call graph and across the
    process bridges of the mappings (ZMQ sockets, queues between threads)."""
    from analyzer.graphs.queries import QueryError, find_one
    from analyzer.mappings.trace import bridges_for, trace_path

    settings = settings_of(ctx)
    concepts = load_or_fail(mappings)
    try:
        graph = open_tree(settings, target, progress=not as_json and sys.stderr.isatty()).graphs.calls
    except TreeError as exc:
        raise fail(str(exc)) from None
    project, _, version = target.partition("@")
    bridges = bridges_for(concepts, project, version or None)
    kinds = ("function", "method")
    try:
        start = find_one(graph, source, kinds)
        # The destination may be a bridge target the call graph never reaches by a call.
        end = dest if dest in graph or dest in {b.target for bs in bridges.values() for b in bs} else find_one(graph, dest, kinds)
    except QueryError as exc:
        raise fail(str(exc)) from None
    steps = trace_path(graph, start, end, bridges, max_length=max_length)
    if as_json:
        typer.echo(json.dumps({"target": target, "from": start, "to": end,
                               "path": [s.to_dict() for s in steps] if steps is not None else None}, indent=2))
    else:
        from analyzer.mappings.render import print_trace

        print_trace(stdout_console(), start, end, steps)
    if steps is None:
        raise typer.Exit(EXIT_FINDINGS)
