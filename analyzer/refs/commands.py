"""`atlas check`: resolve a manuscript's references against its pins."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from analyzer.commandline import EXIT_FINDINGS, EXIT_OK, fail, settings_of, stdout_console
from analyzer.refs.check import pick_fixes
from analyzer.refs.config import RefsError
from analyzer.refs.fix import plan_fixes, write_atomic
from analyzer.refs.models import BROKEN, HIGH_CONFIDENCE
from analyzer.refs.report import render_table, to_json, to_sarif
from analyzer.refs.run import run_check, source_uri


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        ctx: typer.Context,
        paths: list[Path] = typer.Argument(
            None, help="Markdown files or folders (default: the manuscript atlas.toml names here)."
        ),
        pin: list[str] = typer.Option([], "--pin", help="PROJECT@VERSION; replaces atlas.toml's pin for that project."),
        past: list[str] = typer.Option(
            [], "--past",
            help="PROJECT@VERSION of a past release (repeat; e.g. vllm@0.6.6-src, see benchmarks/past_pins.py): "
            "evidence that a name the pins no longer define was the project's; replaces atlas.toml's `past` for that project. "
            "Without it, the evidence of the default past releases that ships with the toolkit is read.",
        ),
        no_past: bool = typer.Option(
            False, "--no-past", help="Judge against the pins alone: no past release as evidence (neither atlas.toml's `past` nor the shipped evidence).",
        ),
        from_pin: str = typer.Option(None, "--from", help="Old pin: list what breaks when moving to --to."),
        to_pin: str = typer.Option(None, "--to", help="New pin of the same project."),
        json_output: bool = typer.Option(False, "--json", help="Print findings as JSON."),
        sarif: Path = typer.Option(None, "--sarif", help="Write SARIF 2.1.0 to FILE ('-' for stdout)."),
        fix: bool = typer.Option(False, "--fix", help="Show a diff applying high-confidence replacements."),
        min_confidence: float = typer.Option(
            HIGH_CONFIDENCE, "--min-confidence", min=0.0, max=1.0,
            help=f"With --fix: apply only suggestions at least this confident (default {HIGH_CONFIDENCE}; "
            "benchmarks/check_real_docs.py prints how often each confidence band is right).",
        ),
        write: bool = typer.Option(False, "--write", help="With --fix: rewrite the files (atomically)."),
        show_all: bool = typer.Option(False, "--all", help="List ok references in the table too."),
        against: list[str] = typer.Option(
            [], "--against",
            help="Follow the book through newer releases: `latest` (every locked release newer than "
            "each pin) or PROJECT@VERSION (repeat); prints where each reference first broke and where it went.",
        ),
    ) -> None:
        """Check every path, symbol, flag and env var a book cites against its pins.

        Exit status 1 when any reference is broken, 0 otherwise.
        """
        settings = settings_of(ctx)
        console = stdout_console()
        err = Console(stderr=True, soft_wrap=True)
        if write and not fix:
            raise fail("--write only applies with --fix")
        if json_output and sarif == Path("-"):
            raise fail("--json and --sarif - would both write to stdout")
        from analyzer.refs.loader import load_pin

        if against:
            from analyzer.follow import follow_command

            raise typer.Exit(follow_command(settings, list(paths or []), against, json_output, sarif, show_all))
        try:
            if no_past and past:
                raise RefsError("--no-past and --past exclude each other")
            book, findings, title = run_check(settings, list(paths or []), pin, from_pin, to_pin, load_pin, past, use_past=not no_past)
        except RefsError as exc:
            raise fail(str(exc)) from None
        broken = [f for f in findings if f.status == BROKEN]
        fixed: set[int] = set()
        if fix:
            chosen = pick_fixes(findings, min_confidence)
            files = {book.display(p): p for p in book.files}
            try:
                plans = plan_fixes(chosen, files)
            except (OSError, UnicodeDecodeError) as exc:
                raise fail(f"cannot read a chapter to fix: {exc}") from None
            out = err if json_output or sarif == Path("-") else console
            diff = "".join(p.diff() for p in plans)
            if diff:
                sys.stdout.flush()
                (sys.stderr if out is err else sys.stdout).write(diff)
            else:
                out.print(f"no replacements with confidence >= {min_confidence} to apply")
            for plan in plans:
                for reason in plan.skipped:
                    out.print(f"[yellow]skipped[/] {escape(reason)}")
            if write:
                for plan in plans:
                    if plan.applied:
                        try:
                            write_atomic(plan.path, plan.new)
                        except OSError as exc:
                            raise fail(f"{plan.display} left unchanged: {exc}") from None
                applied = {(plan.display, line, col) for plan in plans for line, col in plan.done}
                fixed = {id(f) for f in broken if (f.ref.file, f.ref.line, f.ref.col) in applied}
                out.print(f"rewrote {sum(1 for p in plans if p.applied)} file(s)")
        if json_output:
            sys.stdout.write(json.dumps(to_json(findings), indent=2) + "\n")
        elif sarif != Path("-"):
            render_table(console, findings, show_ok=show_all, title=title)
        if sarif is not None:
            text = json.dumps(to_sarif(findings, {book.display(p): source_uri(p) for p in book.files}), indent=2)
            if sarif == Path("-"):
                sys.stdout.write(text + "\n")
            else:
                sarif.write_text(text + "\n", encoding="utf-8")
        remaining = [f for f in broken if id(f) not in fixed]
        raise typer.Exit(EXIT_FINDINGS if remaining else EXIT_OK)
