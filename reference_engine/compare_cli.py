"""`atlas engine compare --model DIR`: the engine against transformers, module by module
(reference_engine/compare.py). Exit status 0 when every compared module agrees within the
tolerance, 1 with the first divergence named otherwise, 2 when it cannot run (exit_codes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from reference_engine.exit_codes import EXIT_FINDINGS, guard


def add_compare_command(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_command(
        model: Path = typer.Option(..., "--model", help="Hugging Face checkpoint folder."),
        prompt: str = typer.Option(
            "The scheduler admits waiting requests while the token budget lasts.",
            "--prompt",
            "-p",
        ),
        dtype: str = typer.Option("float32", "--dtype", help="Both sides run in this dtype."),
        atol: float = typer.Option(1e-4, "--atol"),
        rtol: float = typer.Option(1e-3, "--rtol"),
        show_all: bool = typer.Option(False, "--all", help="Every compared module, not a window."),
        json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Find the first module where the engine and transformers diverge on one prompt."""
        def go() -> bool:  # True: a module diverged
            import torch

            from reference_engine.compare import (
                compare_with_transformers,
                engine_runner,
                load_transformers,
            )
            from reference_engine.loader import load_tokenizer

            torch.manual_seed(0)
            token_ids = load_tokenizer(model).encode(prompt)
            runner = engine_runner(model, dtype, len(token_ids))
            report = compare_with_transformers(
                runner, load_transformers(model, dtype), token_ids, atol=atol, rtol=rtol
            )
            first = report.first_divergence
            if json_output:
                payload = {
                    "first_divergence": None if first is None else first.name,
                    "first_layer": report.first_layer,
                    "atol": atol,
                    "rtol": rtol,
                    "modules": [d.__dict__ for d in report.diffs],
                    "not_compared": report.not_compared,
                }
                typer.echo(json.dumps(payload, indent=2))
                return first is not None
            console = Console()
            rows = report.diffs
            if first is not None and not show_all:
                at = rows.index(first)
                rows = rows[max(0, at - 3) : at + 4]
            table = Table(title=f"engine vs transformers on {len(token_ids)} tokens ({dtype})")
            for col in ("module", "shape", "max |diff|", "rel", ""):
                table.add_column(col)
            for d in rows:
                mark = "[red]diverged[/]" if d.diverged else "ok"
                table.add_row(d.name, str(list(d.shape)), f"{d.max_abs:.3g}", f"{d.max_rel:.3g}", mark)
            console.print(table)
            if first is None:
                console.print(
                    f"[green]all {len(report.diffs)} compared modules agree[/] "
                    f"(atol {atol:g}, rtol {rtol:g}; {len(report.not_compared)} engine modules "
                    "have no same-named module in transformers)"
                )
                return False
            layer = "" if report.first_layer is None else f" in decoder layer {report.first_layer}"
            console.print(f"[bold red]first divergence{layer}:[/] {first.describe()}", highlight=False)
            return True

        if guard(go):
            raise typer.Exit(EXIT_FINDINGS)
