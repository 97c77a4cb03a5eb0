"""`atlas flags TARGET [--command CMD]` and `atlas envs TARGET`: a release's server flags (or
another command's) / env vars."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from analyzer.commandline import fail, settings_of, stdout_console
from analyzer.flags.entry_flags import EntryFlags
from analyzer.flags.models import EnvReport, FlagReport
from analyzer.pinned import PinnedTree, TreeError, open_tree

TARGET_HELP = "A release ref (vllm@0.30.0, opened from the snapshot store) or a directory holding vllm/ or sglang/."
JSON_OPT = typer.Option(False, "--json", help="Print machine-readable JSON.")
PROJECT_OPT = typer.Option(None, "--project", help="vllm or sglang (default: from the ref or the tree).")
GREP_OPT = typer.Option(None, "--grep", help="Only entries whose name contains this text.")
COMMAND_OPT = typer.Option(
    None, "--command",
    help="Another command's parser instead of the server's: `sglang generate`, `vllm bench serve`, or a module (`sglang.bench_serving`).",
)


def register(app: typer.Typer) -> None:
    app.command("flags")(flags_command)
    app.command("envs")(envs_command)


def _tree(ctx: typer.Context, target: str) -> PinnedTree:
    """The release (opened from the snapshot store, not fetched) or directory named."""
    try:
        return open_tree(settings_of(ctx), target, fetch=False)
    except TreeError as exc:
        raise fail(str(exc)) from None


def flags_command(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    project: str = PROJECT_OPT,
    grep: str = GREP_OPT,
    as_json: bool = JSON_OPT,
    command: str = COMMAND_OPT,
) -> None:
    """Options the server's parser accepts (`vllm serve`, `sglang.launch_server`), with where each is defined."""
    extra: list[str] = []
    try:
        if command:
            entry = _tree(ctx, target).command_report(command)
            report = entry.report
            extra = _entry_notes(command, entry)
        else:
            report = _tree(ctx, target).flag_report(project)
    except TreeError as exc:
        raise fail(str(exc)) from None
    if grep:
        report.flags = [f for f in report.flags if any(grep in a for a in (*f.aliases, *f.hidden_aliases))]
    if as_json:
        # A plain list, as other tools expect; the rest goes to stderr as in table mode.
        typer.echo(json.dumps([f.to_dict() for f in report.flags], indent=2))
        _print_positionals(report, Console(stderr=True))
        _print_notes(extra, Console(stderr=True))
        _print_warnings(report.warnings)
        return
    _print_flags(report, extra)


def _entry_notes(command: str, entry: EntryFlags) -> list[str]:
    """What a command accepts beyond its parser's options, and whether the listing is whole."""
    notes = []
    if entry.by_hand:
        notes.append(f"read from argv by `{command}` itself: {', '.join(entry.by_hand)}")
    families = [f"{p}<name>" for p in entry.prefixes] + [f"--<name>{s}" for s in entry.suffixes]
    if families:
        notes.append(f"option families read from the arguments the parser leaves: {', '.join(families)}")
    if not entry.complete:
        notes.append("incomplete: some options are built at run time (see the warnings)")
    return notes


def _print_notes(notes: list[str], console: Console) -> None:
    for note in notes:
        console.print(note, markup=False, highlight=False)


def envs_command(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    project: str = PROJECT_OPT,
    grep: str = GREP_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Environment variables the release reads, with their defaults and where each is defined."""
    try:
        report = _tree(ctx, target).env_report(project)
    except TreeError as exc:
        raise fail(str(exc)) from None
    if grep:
        report.envs = [e for e in report.envs if grep in e.name or any(grep in d for d in e.deprecated_names)]
        report.retired = [e for e in report.retired if grep in e.name]
    if as_json:
        typer.echo(json.dumps([e.to_dict() for e in report.envs], indent=2))
        _print_retired(report, Console(stderr=True))
        _print_warnings(report.warnings)
        return
    _print_envs(report)


def _print_flags(report: FlagReport, notes: list[str] | None = None) -> None:
    console = stdout_console()
    table = Table(title=f"{report.project}: {len(report.flags)} options", show_lines=False)
    table.add_column("flag", no_wrap=True)  # the one column a reader scans and copies
    for column in ("other forms", "dest", "default", "group", "defined at"):
        table.add_column(column, overflow="fold")
    for f in report.flags:
        others = ", ".join(a for a in f.aliases if a != f.flag)
        if f.hidden_aliases:  # accepted, but the parser hides them from --help
            others += f"{'; ' if others else ''}hidden: {', '.join(f.hidden_aliases)}"
        table.add_row(f.flag, others, f.dest, f.default or "", f.group or "", f.defined_at)
    console.print(table)
    _print_positionals(report, console)
    _print_notes(notes or [], console)
    _print_warnings(report.warnings)


def _print_positionals(report: FlagReport, console: Console) -> None:
    for p in report.positionals:
        console.print(f"positional: {p.name} (nargs={p.nargs}) at {p.defined_at}", markup=False, highlight=False)


def _print_envs(report: EnvReport) -> None:
    console = stdout_console()
    table = Table(title=f"{report.project}: {len(report.envs)} environment variables")
    table.add_column("name", no_wrap=True)
    for column in ("default", "deprecated names", "defined at"):
        table.add_column(column, overflow="fold")
    for e in report.envs:
        table.add_row(e.name, e.default or "", ", ".join(e.deprecated_names), e.defined_at)
    console.print(table)
    _print_retired(report, console)
    _print_warnings(report.warnings)


def _print_retired(report: EnvReport, console: Console) -> None:
    if report.retired:
        names = ", ".join(e.name for e in report.retired)
        console.print(f"retired (read only to warn): {names}", markup=False, highlight=False)


def _print_warnings(warnings: list[str]) -> None:
    if not warnings:
        return
    console = Console(stderr=True, soft_wrap=True)
    console.print(f"[yellow]{len(warnings)} warning(s): not statically resolvable[/]")
    for w in warnings:
        console.print(f"  {w}", markup=False, highlight=False)
