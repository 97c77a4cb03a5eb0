"""`atlas demo`: the main job on the embedded default.

Fetches and indexes every release pinned in `snapshots/`, reads their flags and
environment variables, indexes the reference engine's own source, checks the
sample manuscript in `examples/book` against the book's pins, and renders the
walkthrough site (reference engine | vLLM | SGLang per concept, the columns being
the sample book's pins from its atlas.toml; `--newest` for the newest locked
releases) into `reports/`. Each stage is called through its public API, so the demo is
also a smoke test of the pipeline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from analyzer.commandline import fail, settings_of
from analyzer.settings import Settings


@dataclass(slots=True)
class ReleaseSummary:
    ref: str
    upstream_commit: str | None
    counts: dict[str, int]
    flags: int
    envs: int
    warnings: int
    seconds: float


def summarize_release(settings: Settings, ref: str, *, progress: bool) -> ReleaseSummary:
    """Fetch, index and read the knobs of one release. Raises TreeError."""
    from analyzer.pinned import release_tree

    start = time.perf_counter()
    tree = release_tree(settings, ref, progress=progress).prepare()
    assert tree.snapshot is not None
    return ReleaseSummary(
        ref=ref,
        upstream_commit=tree.snapshot.upstream_commit,
        counts=tree.index.counts(),
        flags=len(tree.flag_list),
        envs=len(tree.env_list),
        warnings=len(tree.warnings),
        seconds=time.perf_counter() - start,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        ctx: typer.Context,
        releases: list[str] = typer.Option(
            None, "--release", "-r", help="Releases to index (default: every locked release)."
        ),
        book: Path = typer.Option(
            None, help="Book project to check against its pins (default: the sample book, examples/book)."
        ),
        report_dir: Path = typer.Option(
            None, "--report-dir", help="Where to write the walkthrough site (default: reports/ of the checkout)."
        ),
        newest: bool = typer.Option(
            False, "--newest", help="Walkthrough columns: the newest locked releases, not the book's pins."
        ),
    ) -> None:
        """Fetch and index the pinned releases, check the sample manuscript, render the walkthrough."""
        from analyzer.paths import sample_book
        from analyzer.pinned import TreeError
        from analyzer.report.run import default_out
        from analyzer.snapshots import load_locks

        settings = settings_of(ctx)
        book = book if book is not None else sample_book()
        report_dir = report_dir if report_dir is not None else default_out()
        # Logs and CI have no terminal width; the release table needs about 100 columns.
        console = Console() if Console().is_terminal else Console(width=120)
        refs = releases or sorted(load_locks())
        console.print(f"[bold]Serving Atlas demo[/] — cache: {settings.cache_dir}")
        summaries: list[ReleaseSummary] = []
        for ref in refs:
            console.print(f"• {ref}: fetch, index, flags, env vars")
            try:
                summaries.append(summarize_release(settings, ref, progress=console.is_terminal))
            except TreeError as exc:
                raise fail(str(exc)) from None
        console.print(_release_table(summaries))
        console.print(_engine_summary(settings))
        _check_book(settings, console, book)
        index = _build_report(settings, console, refs, report_dir, book=None if newest else book)
        console.print(
            "\nNext: `atlas show vllm@0.30.0 Scheduler.schedule`, `atlas flags sglang@0.5.20`,"
            " `atlas check examples/book`, `atlas engine run --prompt 'Hello'`."
        )
        if index is not None:
            console.print(f"\n[bold]Open the walkthrough:[/] {index.resolve().as_uri()}")


def _release_table(summaries: list[ReleaseSummary]) -> Table:
    # Short headers: the demo often prints into an 80-column log, not a wide terminal.
    table = Table(title="Pinned releases", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("release", no_wrap=True)
    table.add_column("commit", no_wrap=True)
    for column in ("files", "classes", "funcs", "methods", "calls", "errors", "flags", "envs", "s"):
        table.add_column(column, justify="right", no_wrap=True)
    for s in summaries:
        c = s.counts
        table.add_row(
            s.ref, (s.upstream_commit or "—")[:9], str(c["files"]), str(c["classes"]),
            str(c["functions"]), str(c["methods"]), str(c["call_sites"]), str(c["errors"]),
            str(s.flags), str(s.envs), f"{s.seconds:.1f}",
        )
    return table


def _engine_summary(settings: Settings) -> str:
    from analyzer.pinned import reference_tree

    c = reference_tree(settings).index.counts()
    return (
        f"Reference engine (reference_engine/): {c['modules']} modules, {c['classes']} classes, "
        f"{c['functions'] + c['methods']} functions and methods, {c['lines']} lines"
    )


def _check_book(settings: Settings, console: Console, book: Path) -> None:
    """Check the manuscript. Broken references are a finding to show, not a demo failure."""
    from analyzer.refs.loader import load_pin
    from analyzer.refs.run import run_check

    if not book.exists():
        console.print(f"[yellow]no manuscript at {book}; skipping the reference check[/]")
        return
    _, findings, title = run_check(settings, [book], [], None, None, load_pin)
    by_status: dict[str, int] = {}
    for finding in findings:
        by_status[finding.status] = by_status.get(finding.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
    console.print(f"Manuscript {book} against {title}: {len(findings)} findings ({parts})")
    console.print(f"  details: atlas check {book}")


def _build_report(
    settings: Settings, console: Console, refs: list[str], out: Path, *, book: Path | None
) -> Path | None:
    """The walkthrough site; its failure fails the demo (it is the main job's product).
    Its columns are the book's pins (newest locked ones with `--newest`, or when the
    book pins neither project)."""
    from analyzer.project import ProjectError, find_config, read_project
    from analyzer.report.commands import print_result
    from analyzer.report.run import book_columns, newest_per_project, run_report
    from analyzer.report.sources import ReportError

    columns, why = newest_per_project(refs), "the newest locked release of each project"
    config = find_config(book) if book is not None and book.exists() else None
    if config is not None:
        try:
            pinned = book_columns(read_project(config).pins)
        except ProjectError as exc:
            raise fail(str(exc)) from None
        if pinned:
            columns, why = pinned, f"the pins of {config} (`atlas demo --newest` for the newest locked)"
    console.print(f"• walkthrough: reference engine | {' | '.join(columns)} (call and state graphs)")
    console.print(f"  columns: {why}", highlight=False)
    try:
        result = run_report(
            settings, out=out, releases=columns, columns_from=why, progress=console.is_terminal
        )
    except ReportError as exc:
        raise fail(str(exc)) from None
    print_result(console, result, show_open=False)  # the demo ends with the link
    return result.index
