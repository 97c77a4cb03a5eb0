"""`atlas index TARGET` and `atlas show TARGET QUERY`.

TARGET is a release (`vllm@0.30.0`), `reference` or a directory (`./reference_engine`),
opened as a `PinnedTree` (analyzer/pinned.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from analyzer.commandline import fail, settings_of, stdout_console
from analyzer.index.models import Class, Function, ModuleFacts
from analyzer.index.render import class_header, function_kind, signature, summary_line
from analyzer.index.snapshot_index import SnapshotIndex, SymbolMatch
from analyzer.pinned import TreeError, open_tree

JSON = typer.Option(False, "--json", help="Print machine-readable JSON.")
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: CPU count).")
MAX_ERRORS_SHOWN = 20


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)
    app.command("show")(show_command)


def _open_index(ctx: typer.Context, target: str, jobs: int | None, as_json: bool) -> SnapshotIndex:
    """The target's index (cached runs are quick); a stored release is not fetched here."""
    try:
        tree = open_tree(settings_of(ctx), target, fetch=False, progress=_progress_wanted(as_json))
        tree.jobs = jobs
        return tree.index
    except TreeError as exc:
        raise fail(str(exc)) from None


def _progress_wanted(as_json: bool) -> bool:
    return not as_json and sys.stderr.isatty()


def index_command(
    ctx: typer.Context,
    target: str = typer.Argument(..., help="Release (vllm@0.30.0), reference, or a directory."),
    jobs: int = JOBS,
    as_json: bool = JSON,
) -> None:
    """Index every Python file of a snapshot or directory and print counts."""
    index = _open_index(ctx, target, jobs, as_json)
    counts = index.counts() | {"seconds": round(index.stats.seconds, 3)}
    if as_json:
        errors = [{"path": e.path, "reason": e.reason} for e in index.errors]
        typer.echo(json.dumps({"name": index.name, "counts": counts, "errors": errors}, indent=2))
        return
    console = stdout_console()
    table = Table(title=f"index of {index.name}", show_header=False)
    for key, value in counts.items():
        table.add_row(key.replace("_", " "), f"{value:,}" if isinstance(value, int) else str(value))
    console.print(table)
    for err in index.errors[:MAX_ERRORS_SHOWN]:
        console.print(f"[yellow]skipped[/] {err.path}: ", end="")
        console.print(err.reason, markup=False, highlight=False)
    if len(index.errors) > MAX_ERRORS_SHOWN:
        console.print(f"... and {len(index.errors) - MAX_ERRORS_SHOWN} more (see --json)")


def show_command(
    ctx: typer.Context,
    target: str = typer.Argument(..., help="Release (vllm@0.30.0), reference, or a directory."),
    query: str = typer.Argument(
        ..., help="Dotted name, repository path, PATH:Qual.name, or a bare suffix like Scheduler.schedule."
    ),
    jobs: int = JOBS,
    as_json: bool = JSON,
) -> None:
    """Show a module, class or function: kind, where it is, signature, docstring."""
    index = _open_index(ctx, target, jobs, as_json)
    matches = index.find_symbol(query)
    if not matches:
        raise fail(f"nothing named {query!r} in {index.name}")
    described = [describe(index, m) for m in matches]
    if as_json:
        typer.echo(json.dumps({"name": index.name, "query": query, "matches": described}, indent=2))
        return
    console = stdout_console()
    if len(described) > 1:
        table = Table(title=f"{len(described)} matches for {query} in {index.name}")
        for col in ("kind", "name", "where"):
            table.add_column(col)
        for d in described:
            table.add_row(d["kind"], d["dotted"], f"{d['repo_path']}:{d['line']}-{d['end_line']}")
        console.print(table)
        return
    _print_one(console, described[0])


def describe(index: SnapshotIndex, match: SymbolMatch) -> dict[str, Any]:
    """A match as plain data: what `show` prints and `--json` emits."""
    fact = index.fact(match)
    out: dict[str, Any] = {
        "kind": match.kind,
        "dotted": match.dotted,
        "module": match.module,
        "qualname": match.qualname,
        "path": match.path,
        "repo_path": index.layout_prefix + match.path,
        "line": match.line,
        "end_line": match.end_line,
    }
    if isinstance(fact, Function):
        out["kind"] = function_kind(fact)
        out["signature"] = signature(fact)
        out["decorators"] = fact.decorators
        out["docstring"] = summary_line(fact.docstring)
    elif isinstance(fact, Class):
        out["signature"] = class_header(fact)
        out["decorators"] = fact.decorators
        out["docstring"] = summary_line(fact.docstring)
        out["methods"] = [
            f.name for f in _module_of(index, match).functions if f.qualname == f"{fact.qualname}.{f.name}"
        ]
        out["fields"] = _unique(f"{a.target}: {a.annotation}" for a in fact.fields)
        # What a reader looks up next: the names an instance carries besides its fields.
        out["attributes"] = _unique(
            a.target.split(".", 1)[-1] for a in (*fact.class_attributes, *fact.instance_attributes)
        )
    elif isinstance(fact, ModuleFacts):
        out["docstring"] = summary_line(fact.docstring)
        out["classes"] = [c.qualname for c in fact.classes if "." not in c.qualname]
        out["functions"] = [f.qualname for f in fact.functions if "." not in f.qualname]
        out["lines"] = fact.lines
    return out


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _module_of(index: SnapshotIndex, match: SymbolMatch) -> ModuleFacts:
    return index.modules[match.path]


def _print_one(console: Console, d: dict[str, Any]) -> None:
    console.print(f"[bold]{d['kind']}[/] [cyan]{d['dotted']}[/]", highlight=False)
    console.print(f"  {d['repo_path']}:{d['line']}-{d['end_line']}", highlight=False)
    if d.get("signature"):
        for dec in d.get("decorators", []):
            console.print(f"  @{dec}", markup=False, highlight=False)
        console.print(f"  {d['signature']}", markup=False, highlight=False)
    if d.get("docstring"):
        console.print(f"  [dim]{_escape(d['docstring'])}[/]", highlight=False)
    for key in ("classes", "functions", "fields", "methods", "attributes"):
        if d.get(key):
            console.print(f"  {key}: ", end="")
            console.print(", ".join(d[key]), markup=False, highlight=False)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
