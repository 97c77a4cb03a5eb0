"""`atlas engine profile`: a synthetic workload, a window of its steps under torch.profiler
(reference_engine/profiler.py), the trace written for Perfetto and the step time split by
phase. `atlas engine run --profile PATH` does the same for the prompts it is given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from reference_engine.exit_codes import guard

if TYPE_CHECKING:  # torch is imported only when a profile runs
    from reference_engine.profiler import StepProfiler

TRACE = typer.Option(
    Path("atlas-profile.json"), "--output", "-o", help="Chrome / Perfetto trace file to write."
)


def print_breakdown(console: Console, profiler: StepProfiler, trace: Path) -> None:
    """The step-time table, one row per phase (and per layer kind under forward)."""
    b = profiler.breakdown()
    table = Table(title=f"step time over {b.num_steps} profiled steps (trace: {trace})")
    table.add_column("phase")
    table.add_column("ms", justify="right")
    table.add_column("% of step", justify="right")
    for label, ms in b.rows():
        share = 100.0 * ms / b.step_ms if b.step_ms else 0.0
        table.add_row(label, f"{ms:.2f}", f"{share:.1f}")
    table.add_row("step (total)", f"{b.step_ms:.2f}", "100.0")
    console.print(table)


def breakdown_json(profiler: StepProfiler, trace: Path) -> dict[str, Any]:
    b = profiler.breakdown()
    return {
        "trace": str(trace),
        "num_steps": b.num_steps,
        "step_ms": b.step_ms,
        "phases_ms": b.phases_ms,
        "layer_kinds_ms": b.layer_kinds_ms,
        "other_ms": b.other_ms,
    }


def add_profile_command(app: typer.Typer) -> None:
    from reference_engine.commands import MODEL, THREADS

    @app.command("profile")
    def profile_command(
        ctx: typer.Context,
        model: Path = MODEL,
        output: Path = TRACE,
        num_prompts: int = typer.Option(8, "--num-prompts", min=1),
        prompt_len: int = typer.Option(64, "--prompt-len", min=1),
        max_tokens: int = typer.Option(16, "--max-tokens", min=1),
        warmup_steps: int = typer.Option(2, "--warmup-steps", min=0),
        steps: int = typer.Option(8, "--steps", min=1, help="Steps in the profiled window."),
        max_num_batched_tokens: int = typer.Option(512, "--max-num-batched-tokens", min=1),
        prefix_caching: str = typer.Option("hash", "--prefix-caching", help="none, hash or radix."),
        dtype: str = typer.Option("float32", "--dtype"),
        threads: int = THREADS,
        json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Profile a window of engine steps: a trace file and where the step time goes."""
        from reference_engine.commands import _make_engine, _settings

        settings = _settings(ctx)
        console = Console(stderr=json_output)

        def go() -> None:
            from reference_engine.bench import synthetic_workload
            from reference_engine.profiler import profile_engine
            from reference_engine.sampling_params import SamplingParams

            engine = _make_engine(
                settings, model, threads, dtype=dtype, prefix_caching=prefix_caching,
                max_num_batched_tokens=max_num_batched_tokens,
            )  # fmt: skip
            reqs = synthetic_workload(
                num_prompts, (prompt_len, prompt_len), (max_tokens, max_tokens),
                engine.model_config.vocab_size,
            )  # fmt: skip
            for i, r in enumerate(reqs):
                params = SamplingParams(temperature=0.0, max_tokens=r.max_tokens, ignore_eos=True)
                engine.add_request(str(i), r.prompt_token_ids, params)
            profiler = profile_engine(engine, warmup_steps, steps, lambda _outs: None)
            trace = profiler.export(output)
            if json_output:
                typer.echo(json.dumps(breakdown_json(profiler, trace), indent=2))
            else:
                print_breakdown(console, profiler, trace)

        guard(go)
