"""`atlas engine train-tiny`: train (or reuse from the cache) the small code model of
trained_model.py and print its held-out perplexity beside the unigram baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer
from rich.console import Console

from reference_engine.exit_codes import guard


def add_train_tiny_command(app: typer.Typer) -> None:
    @app.command("train-tiny")
    def train_tiny_command(
        ctx: typer.Context,
        variant: str = typer.Option(
            "default", "--variant", help="default (~3M parameters, minutes) or small (tests)."
        ),
        output: Path = typer.Option(
            None, "--output", "-o", help="Also copy the checkpoint folder here."
        ),
        json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Train a small Qwen3-architecture model on Python source code (cached).

        It is a small model trained on code, not a chat model; it gives perplexity,
        quantization and speculative-decoding measurements real statistics offline."""
        from reference_engine.commands import _settings

        settings = _settings(ctx)
        console = Console(stderr=True)

        def go() -> None:
            from reference_engine.trained_model import NOTICE, read_report, trained_model_dir

            folder = trained_model_dir(
                variant,
                settings.cache_dir,
                log=None if json_output else lambda m: console.print(m, highlight=False),
            )
            if output is not None:
                if output.exists():
                    raise ValueError(f"--output {output} exists; choose a new folder")
                shutil.copytree(folder, output)
            report = read_report(folder)
            report.pop("losses", None)
            report["path"] = str(output or folder)
            if json_output:
                typer.echo(json.dumps(report, indent=2))
                return
            out = Console()
            out.print(f"[bold yellow]note:[/] {NOTICE}.", highlight=False)
            out.print(f"checkpoint: {report['path']}", highlight=False)
            out.print(
                f"parameters {report['parameters']:,}, trained on {report['train_tokens']:,} "
                f"tokens in {report['seconds']} s",
                highlight=False,
            )
            ratio = report["unigram_perplexity"] / report["heldout_perplexity"]
            out.print(
                f"held-out perplexity {report['heldout_perplexity']:.2f} vs unigram baseline "
                f"{report['unigram_perplexity']:.2f} ({ratio:.1f}x lower) on "
                f"{report['heldout_tokens']:,} tokens of unseen files",
                highlight=False,
            )

        guard(go)
