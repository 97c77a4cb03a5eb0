"""`atlas engine run` and `atlas engine bench`: the reference engine from the command line.

Nothing here imports torch at module import time: the analyzer side of atlas
installs without it, and `atlas --help` must work there.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from reference_engine.cache_dir import CacheSettings as Settings
from reference_engine.cache_dir import default_cache_dir
from reference_engine.distributed.cli_options import CP, EP, PP, TBO, TP, parallel_kwargs
from reference_engine.exit_codes import OneLineErrors, guard

engine_app = typer.Typer(
    cls=OneLineErrors,  # `python -m reference_engine.server` runs this group alone
    help="The reference engine: generate text, measure throughput (CPU PyTorch).",
    no_args_is_help=True,
)

MODEL = typer.Option(
    None,
    "--model",
    help="Local Hugging Face checkpoint folder (default: the built-in tiny model, random weights).",
)
JSON = typer.Option(False, "--json", help="Print machine-readable JSON.")
THREADS = typer.Option(
    None,
    "--threads",
    min=1,
    help="torch CPU threads (default: 1 for the built-in tiny model, torch's default otherwise).",
)
SPECULATIVE_CONFIG = typer.Option(
    None,
    "--speculative-config",
    help='Speculative decoding as JSON (vLLM\'s), e.g. \'{"method": "ngram", '
    '"num_speculative_tokens": 4}\' or \'{"model": "DRAFT_DIR", "num_speculative_tokens": 4}\'.',
)


def parse_json_option(name: str, value: str | None) -> Any:
    """A JSON-valued option, or a clear error naming the option."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON: {exc}") from None


QUANTIZATION = typer.Option(
    None,
    "--quantization",
    "-q",
    help="Quantize the weights on load: int8 (W8A16), int4 (W4A16, group 128) or fp8 "
    "(e4m3, 128x128 blocks). A checkpoint from `atlas engine quantize` needs no flag.",
)
KV_CACHE_DTYPE = typer.Option(
    "auto", "--kv-cache-dtype", help="auto (the model's dtype), int8 or fp8 (per-token-head scales)."
)


def register(app: typer.Typer) -> None:
    app.add_typer(engine_app, name="engine")


def _settings(ctx: typer.Context) -> Settings:
    """The cache folder from the root CLI's settings (atlas --cache-dir), else the default."""
    cache_dir = getattr(ctx.find_root().obj, "cache_dir", None)
    return Settings(cache_dir=cache_dir if isinstance(cache_dir, Path) else default_cache_dir())


def _make_engine(
    settings: Settings, model: Path | None, threads: int | None = None, **kwargs: Any
) -> Any:
    import torch

    from reference_engine.config import EngineConfig
    from reference_engine.engine import Engine

    # The tiny model's matmuls are far too small to split; on a busy machine extra
    # threads only add hand-off waits (measured 10-100x slower per op).
    if threads is None and model is None:
        threads = 1
    if threads is not None:
        torch.set_num_threads(threads)

    cfg = EngineConfig(
        model=str(model) if model is not None else None, cache_dir=settings.cache_dir, **kwargs
    )
    return Engine(cfg)


def _random_weights_notice(engine: Any, console: Console) -> None:
    if engine.random_weights:
        from reference_engine.tiny_model import RANDOM_WEIGHTS_NOTICE

        console.print(f"[bold yellow]note:[/] {RANDOM_WEIGHTS_NOTICE}.", highlight=False)


@engine_app.command("run")
def run_command(
    ctx: typer.Context,
    prompt: list[str] = typer.Option(..., "--prompt", "-p", help="Prompt text (repeatable)."),
    model: Path = MODEL,
    max_tokens: int = typer.Option(32, "--max-tokens", min=1),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="0 = greedy."),
    top_p: float = typer.Option(1.0, "--top-p"),
    top_k: int = typer.Option(-1, "--top-k"),
    seed: int = typer.Option(None, "--seed", help="Per-request seed for reproducible sampling."),
    n: int = typer.Option(1, "--n", min=1, help="Samples per prompt."),
    chat: bool = typer.Option(False, "--chat", help="Wrap each prompt in the chat template."),
    stream: bool = typer.Option(False, "--stream", help="Print text as it is generated."),
    prefix_caching: str = typer.Option("hash", "--prefix-caching", help="none, hash or radix."),
    dtype: str = typer.Option("float32", "--dtype"),
    threads: int = THREADS,
    speculative_config: str = SPECULATIVE_CONFIG,
    quantization: str = QUANTIZATION,
    kv_cache_dtype: str = KV_CACHE_DTYPE,
    deterministic: bool = typer.Option(
        False, "--deterministic", help="Batch-invariant mode: logits independent of batch mates."
    ),
    async_scheduling: bool = typer.Option(
        False, "--async-scheduling", help="Overlap scheduling: plan step N+1 during step N."
    ),
    structured_outputs: str = typer.Option(
        None,
        "--structured-outputs",
        help='Constrain the output, as JSON: {"json": SCHEMA}, {"regex": "..."}, '
        '{"choice": [...]}, {"grammar": "EBNF"} or {"json_object": true}.',
    ),
    tp: int = TP,
    pp: int = PP,
    ep: int = EP,
    tbo: bool = TBO,
    cp: int = CP,
    profile: Path = typer.Option(
        None, "--profile", help="Write a torch.profiler trace of the run's steps (Perfetto JSON)."
    ),
    json_output: bool = JSON,
) -> None:
    """Generate text for one or more prompts."""
    settings = _settings(ctx)
    console = Console(stderr=json_output)

    def go() -> None:
        from reference_engine.sampling_params import SamplingParams
        from reference_engine.structured_output import StructuredOutputsParams

        constraint = parse_json_option("--structured-outputs", structured_outputs)
        if constraint is not None and not isinstance(constraint, dict):
            raise ValueError("--structured-outputs must be a JSON object")
        unknown = sorted(set(constraint or {}) - {"json", "regex", "choice", "grammar", "json_object"})
        if unknown:
            raise ValueError(f"--structured-outputs: unknown keys {unknown}")
        engine = _make_engine(
            settings,
            model,
            threads,
            prefix_caching=prefix_caching,
            dtype=dtype,
            speculative_config=parse_json_option("--speculative-config", speculative_config),
            deterministic=deterministic,
            async_scheduling=async_scheduling,
            quantization=quantization, kv_cache_dtype=kv_cache_dtype,
            **parallel_kwargs(tp, pp, ep, cp, tbo),
        )  # fmt: skip
        if not json_output:
            _random_weights_notice(engine, console)
        params = SamplingParams(
            n=n,
            temperature=temperature,
            top_p=top_p,
            top_k=top_k,
            seed=seed,
            max_tokens=max_tokens,
            structured_outputs=StructuredOutputsParams(**constraint) if constraint else None,
        )
        for i, text in enumerate(prompt):
            if chat:
                rendered = engine.tokenizer.apply_chat_template([{"role": "user", "content": text}])
                engine.add_request(str(i), rendered, params, add_special_tokens=False)
            else:
                engine.add_request(str(i), text, params)
        try:
            if profile is not None:
                finals = _drive_profiled(engine, console, profile, json_output)
            else:
                finals = _drive(engine, console, stream and not json_output and len(prompt) * n == 1)
        finally:
            engine.shutdown()  # stops the worker processes of a multi-rank engine
        if json_output:
            payload = {
                "model": str(engine.model_config.model_dir),
                "random_weights": engine.random_weights,
                "outputs": [_output_json(finals[str(i)]) for i in range(len(prompt))],
            }
            typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        elif not (stream and len(prompt) * n == 1):
            _print_outputs(console, [finals[str(i)] for i in range(len(prompt))])

    guard(go)


def _drive(engine: Any, console: Console, stream: bool) -> dict[str, Any]:
    finals: dict[str, Any] = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            if stream:
                console.print(out.outputs[0].text_delta, end="", markup=False, highlight=False)
            if out.finished:
                finals[out.request_id] = out
    if stream:
        console.print()
        for out in finals.values():
            console.print(f"[dim]finish_reason={out.outputs[0].finish_reason}[/]")
    return finals


def _drive_profiled(engine: Any, console: Console, trace: Path, json_output: bool) -> dict[str, Any]:
    """Every step of the run profiled (reference_engine/profiler.py); the breakdown printed."""
    from reference_engine.profile_cli import print_breakdown
    from reference_engine.profiler import profile_engine

    finals: dict[str, Any] = {}

    def keep(outputs: list[Any]) -> None:
        finals.update({o.request_id: o for o in outputs if o.finished})

    profiler = profile_engine(engine, 0, 1 << 30, keep)
    profiler.export(trace)
    print_breakdown(Console(stderr=True) if json_output else console, profiler, trace)
    return finals


def _print_outputs(console: Console, outputs: list[Any]) -> None:
    for out in outputs:
        console.print(f"[bold]prompt:[/] {out.prompt!r}", highlight=False)
        for c in out.outputs:
            label = f"[{c.index}] " if len(out.outputs) > 1 else ""
            console.print(f"[bold green]{label}output:[/] {c.text!r}", highlight=False)
            console.print(f"[dim]{len(c.token_ids)} tokens, finish_reason={c.finish_reason}[/]")


def _output_json(out: Any) -> dict[str, Any]:
    return {
        "request_id": out.request_id,
        "prompt": out.prompt,
        "prompt_token_ids": out.prompt_token_ids,
        "outputs": [
            {
                "index": c.index,
                "text": c.text,
                "token_ids": c.token_ids,
                "finish_reason": c.finish_reason,
                "stop_reason": c.stop_reason,
            }
            for c in out.outputs
        ],
    }


@engine_app.command("bench")
def bench_command(
    ctx: typer.Context,
    model: Path = MODEL,
    num_prompts: int = typer.Option(32, "--num-prompts", min=1),
    min_prompt_len: int = typer.Option(16, "--min-prompt-len", min=1),
    max_prompt_len: int = typer.Option(96, "--max-prompt-len", min=1),
    min_output_len: int = typer.Option(8, "--min-output-len", min=1),
    max_output_len: int = typer.Option(48, "--max-output-len", min=1),
    shared_prefix_len: int = typer.Option(0, "--shared-prefix-len", min=0),
    max_num_seqs: int = typer.Option(32, "--max-num-seqs", min=1),
    max_num_batched_tokens: int = typer.Option(512, "--max-num-batched-tokens", min=1),
    prefix_caching: str = typer.Option("hash", "--prefix-caching", help="none, hash or radix."),
    seed: int = typer.Option(0, "--seed"),
    threads: int = THREADS,
    json_output: bool = JSON,
) -> None:
    """Throughput and latency of the engine on a synthetic workload (engine only; the
    comparison with Hugging Face transformers is benchmarks/engine_bench.py)."""
    settings = _settings(ctx)
    console = Console(stderr=json_output)

    def go() -> None:
        from reference_engine.bench import run_engine, synthetic_workload

        if min_prompt_len > max_prompt_len or min_output_len > max_output_len:
            raise ValueError("each --min-* length must not exceed its --max-* length")
        engine = _make_engine(
            settings,
            model,
            threads,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            prefix_caching=prefix_caching,
        )
        if not json_output:
            _random_weights_notice(engine, console)
        reqs = synthetic_workload(
            num_prompts,
            (min_prompt_len, max_prompt_len),
            (min_output_len, max_output_len),
            engine.model_config.vocab_size,
            seed=seed,
            shared_prefix_len=shared_prefix_len,
        )
        result = run_engine(engine, reqs)
        figures = {
            **asdict(result),
            "output_tokens_per_s": result.output_tokens_per_s,
            "total_tokens_per_s": result.total_tokens_per_s,
        }
        if json_output:
            typer.echo(json.dumps(figures, indent=2))
            return
        table = Table(title="atlas engine bench")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, value in figures.items():
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
        console.print(table)

    guard(go)


# `serve` and `loadtest` live beside their packages; importing them loads neither torch nor
# fastapi. Imported last: they use the helpers above when they run.
from reference_engine.capacity.cli import add_simulate_command  # noqa: E402
from reference_engine.compare_cli import add_compare_command  # noqa: E402
from reference_engine.loadtest.cli import add_loadtest_command  # noqa: E402
from reference_engine.profile_cli import add_profile_command  # noqa: E402
from reference_engine.quantize_cli import add_quantize_command  # noqa: E402
from reference_engine.router.cli import add_router_commands  # noqa: E402
from reference_engine.server.cli import add_serve_command  # noqa: E402
from reference_engine.train_cli import add_train_tiny_command  # noqa: E402

add_serve_command(engine_app)
add_loadtest_command(engine_app)
add_train_tiny_command(engine_app)
add_quantize_command(engine_app)
add_router_commands(engine_app)
add_profile_command(engine_app)
add_compare_command(engine_app)
add_simulate_command(engine_app)
