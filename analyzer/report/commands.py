"""CLI: `atlas report` renders the walkthrough site into `reports/`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from analyzer.commandline import fail, settings_of, stdout_console
from analyzer.report.build import FORMATS, ReportResult
from analyzer.report.run import run_report
from analyzer.report.sources import ReportError


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(
            None, "--out", "-o", help="Folder to write the site into (default: reports/ of the book or repository)."
        ),
        releases: list[str] = typer.Option(
            None, "--release", "-r",
            help="vllm@X / sglang@Y per column (default: the book's pins in atlas.toml, else the sample book's).",
        ),
        newest: bool = typer.Option(False, "--newest", help="Columns: the newest locked release of each project."),
        mappings_dir: Path = typer.Option(None, "--mappings", help="Concept mappings folder (default: mappings/)."),
        only: list[str] = typer.Option(None, "--concept", "-c", help="Only these concept ids."),
        fmt: str = typer.Option("both", "--format", help="html, md or both."),
        no_graphviz: bool = typer.Option(False, "--no-graphviz", help="Text call paths even if `dot` is installed."),
        as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    ) -> None:
        """Render the static walkthrough: per concept, reference engine | vLLM | SGLang."""
        if fmt not in FORMATS:
            raise fail(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        settings = settings_of(ctx)
        try:
            if newest and releases:
                raise ReportError("--newest and --release name the columns twice; give one")
            result = run_report(settings, out=out, releases=releases or None, newest=newest, mappings_dir=mappings_dir,
                                only=only or None, fmt=fmt, graphviz=not no_graphviz,
                                progress=sys.stderr.isatty() and not as_json)
        except ReportError as exc:
            raise fail(str(exc)) from None
        if as_json:
            typer.echo(json.dumps(result.to_dict(), indent=1))
            return
        print_result(stdout_console(), result)


def print_result(console: Console, result: ReportResult, *, show_open: bool = True) -> None:
    console.print(f"Report: {len(result.pages)} concepts, {len(result.files)} files under {result.out}")
    if not result.graphviz:
        console.print(f"No drawings: {result.no_graphviz_reason}; call paths are lists.", highlight=False, markup=False)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    warnings = result.warnings
    if warnings:
        console.print(f"[yellow]{len(warnings)} mapped names or knobs not found[/] (shown on the pages):")
        for w in warnings[:15]:
            console.print(f"  {w}", highlight=False, markup=False)
        if len(warnings) > 15:
            console.print(f"  … and {len(warnings) - 15} more")
    if result.index and show_open:
        console.print(f"Open: [bold]{result.index.resolve().as_uri()}[/]")
    if result.markdown_index:
        console.print(f"Markdown: {result.markdown_index}")
