"""`atlas engine quantize`: write a quantized copy of a float checkpoint (compressed-tensors
layout, see layers/quantization/checkpoint.py) that `--model` then loads as is."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from reference_engine.exit_codes import guard


def add_quantize_command(app: typer.Typer) -> None:
    @app.command("quantize")
    def quantize_command(
        model: Path = typer.Option(..., "--model", help="Float Hugging Face checkpoint folder."),
        output: Path = typer.Option(..., "--output", "-o", help="New folder to write."),
        quantization: str = typer.Option(..., "--quantization", "-q", help="int8, int4 or fp8."),
        json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Quantize a checkpoint's decoder projections (embeddings, norms, lm_head stay)."""
        def go() -> None:
            from reference_engine.layers.quantization.checkpoint import quantize_checkpoint

            sizes = quantize_checkpoint(model, output, quantization)
            if json_output:
                typer.echo(json.dumps({"output": str(output), **sizes}))
                return
            Console().print(
                f"wrote {output} ({quantization}, compressed-tensors layout): weights "
                f"{sizes['bytes_before']:,} -> {sizes['bytes_after']:,} bytes",
                highlight=False,
            )

        guard(go)
