"""`atlas engine serve`: the OpenAI-compatible server. Imports neither torch nor fastapi
until the command runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from reference_engine.distributed.cli_options import CP, EP, PP, TBO, TP, parallel_kwargs
from reference_engine.exit_codes import fail, guard


def add_serve_command(engine_app: typer.Typer) -> None:
    engine_app.command("serve")(serve_command)


def serve_command(
    ctx: typer.Context,
    model: Path = typer.Option(
        None,
        "--model",
        help="Local Hugging Face checkpoint folder (default: the built-in tiny model, random weights).",
    ),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", min=0, max=65535),
    served_model_name: str = typer.Option(
        None, "--served-model-name", help="The `model` name clients send (default: folder name)."
    ),
    chat_template: Path = typer.Option(
        None, "--chat-template", help="Jinja chat template file, for checkpoints without one."
    ),
    max_num_seqs: int = typer.Option(64, "--max-num-seqs", min=1),
    max_num_batched_tokens: int = typer.Option(1024, "--max-num-batched-tokens", min=1),
    max_model_len: int = typer.Option(None, "--max-model-len", min=2),
    num_gpu_blocks: int = typer.Option(None, "--num-blocks", min=1, help="KV blocks in the pool."),
    block_size: int = typer.Option(16, "--block-size", min=1),
    prefix_caching: str = typer.Option("hash", "--prefix-caching", help="none, hash or radix."),
    dtype: str = typer.Option("float32", "--dtype"),
    quantization: str = typer.Option(
        None, "--quantization", "-q", help="int8, int4 or fp8 weights, quantized on load."
    ),
    kv_cache_dtype: str = typer.Option(
        "auto", "--kv-cache-dtype", help="auto, int8 or fp8 (per-token-head scales)."
    ),
    enable_lora: bool = typer.Option(False, "--enable-lora", help="Serve LoRA adapters."),
    lora_modules: list[str] = typer.Option(
        [], "--lora-modules", help="NAME=PATH of a PEFT adapter (repeatable; implies --enable-lora)."
    ),
    max_loras: int = typer.Option(1, "--max-loras", min=1, help="Adapters in one batch."),
    max_lora_rank: int = typer.Option(16, "--max-lora-rank", min=1),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    generation_config: str = typer.Option(
        "auto",
        "--generation-config",
        help="auto: unset sampling fields take the checkpoint's generation_config.json; none: ignore it.",
    ),
    max_n: int = typer.Option(8, "--max-n", min=1, help="Largest `n` a request may ask for."),
    async_scheduling: bool = typer.Option(
        False,
        "--async-scheduling",
        help="Overlap scheduling: step N+1 is scheduled while step N's forward pass runs.",
    ),
    deterministic: bool = typer.Option(
        False,
        "--deterministic",
        help="Batch-invariant mode: a request's logits do not depend on its batch mates.",
    ),
    speculative_config: str = typer.Option(
        None,
        "--speculative-config",
        help='Speculative decoding as JSON, e.g. \'{"method": "ngram", "num_speculative_tokens": 4}\'.',
    ),
    torch_threads: int = typer.Option(
        0, "--torch-threads", min=0, help="torch intra-op threads (0: torch's default)."
    ),
    graceful_s: float = typer.Option(
        5.0, "--graceful-timeout", min=0.0, help="Seconds open streams get on shutdown."
    ),
    access_log: bool = typer.Option(False, "--access-log/--no-access-log"),
    api_key: str = typer.Option(
        None,
        "--api-key",
        envvar="ATLAS_API_KEY",
        help="Require 'Authorization: Bearer KEY' on every route but /health and /metrics.",
    ),
    max_waiting_requests: int = typer.Option(
        256, "--max-waiting-requests", min=1, help="Queued requests before 429 Retry-After."
    ),
    max_queued_tokens: int = typer.Option(
        262_144, "--max-queued-tokens", min=1, help="Queued prompt tokens before 429."
    ),
    max_body_bytes: int = typer.Option(
        8 << 20, "--max-body-bytes", min=1024, help="Larger request bodies get 413."
    ),
    allowed_local_media_path: Path = typer.Option(
        None,
        "--allowed-local-media-path",
        help="Folder whose files chat image_url parts may name (file://...); none by default.",
    ),
    kv_host_blocks: int = typer.Option(
        0, "--kv-host-blocks", min=0, help="Host-memory tier for evicted prefix blocks (0: none)."
    ),
    kv_disk_dir: Path = typer.Option(
        None, "--kv-disk-dir", help="Disk tier folder for evicted prefix blocks (kept across restarts)."
    ),
    kv_disk_blocks: int = typer.Option(4096, "--kv-disk-blocks", min=1),
    kv_shared_url: str = typer.Option(
        None, "--kv-shared-url", help="redis://host:port/db: a KV tier shared with other instances."
    ),
    kv_tier_policy: str = typer.Option(
        "write_back", "--kv-tier-policy", help="write_back (on eviction) or write_through."
    ),
    role: str = typer.Option(
        "colocated",
        "--role",
        help="colocated, prefill or decode: disaggregated instances behind `atlas engine router`.",
    ),
    kv_host: str = typer.Option(
        None, "--kv-host", help="Prefill: where to listen for KV transfers (default: --host)."
    ),
    kv_port: int = typer.Option(0, "--kv-port", min=0, max=65535, help="Prefill: 0 picks a free port."),
    kv_lease_s: float = typer.Option(
        60.0, "--kv-lease-timeout", min=0.1, help="Prefill: seconds pinned KV waits for its decode."
    ),
    kv_timeout_s: float = typer.Option(
        5.0, "--kv-timeout", min=0.1, help="Decode: seconds to wait for each answer of a prefill."
    ),
    tp: int = TP,
    pp: int = PP,
    ep: int = EP,
    tbo: bool = TBO,
    profile: Path = typer.Option(
        None, "--profile", help="Write a Perfetto trace of the first steps of traffic here."
    ),
    profile_steps: int = typer.Option(20, "--profile-steps", min=1, help="Steps to profile."),
    elastic_ep: bool = typer.Option(
        False,
        "--elastic-ep",
        help="With --ep: a lost rank re-forms the expert-parallel group at a smaller size "
        "and serving goes on (requests in flight are recomputed).",
    ),
    cp: int = CP,
) -> None:
    """Serve the engine over an OpenAI-compatible HTTP API (completions, chat, SSE
    streaming, /metrics) until Ctrl-C."""
    from reference_engine.commands import _settings, parse_json_option
    from reference_engine.server.launch import ServeConfig, serve
    from reference_engine.server.serving import ServingLimits

    settings = _settings(ctx)
    console = Console(stderr=True)
    engine_kwargs = {
        "model": str(model) if model is not None else None,
        "cache_dir": settings.cache_dir,
        "max_num_seqs": max_num_seqs,
        "max_num_batched_tokens": max_num_batched_tokens,
        "max_model_len": max_model_len,
        "num_gpu_blocks": num_gpu_blocks,
        "block_size": block_size,
        "prefix_caching": prefix_caching,
        "dtype": dtype,
        "device": device,
        "generation_config": generation_config,
        "kv_host_blocks": kv_host_blocks,
        "kv_disk_dir": str(kv_disk_dir) if kv_disk_dir is not None else None,
        "kv_disk_blocks": kv_disk_blocks,
        "kv_tier_policy": kv_tier_policy,
        "kv_shared_url": kv_shared_url,
        "quantization": quantization,
        "kv_cache_dtype": kv_cache_dtype,
        "enable_lora": enable_lora or bool(lora_modules),
        "max_loras": max_loras,
        "max_lora_rank": max_lora_rank,
        **parallel_kwargs(tp, pp, ep, cp, tbo),
        "deterministic": deterministic,
        "async_scheduling": async_scheduling,
    }
    modules = []
    for item in lora_modules:
        lora_name, sep, path = item.partition("=")
        if not sep or not lora_name or not path:
            raise fail(f"--lora-modules wants NAME=PATH, got {item!r}")
        modules.append((lora_name, path))

    cfg = ServeConfig(
        host=host,
        port=port,
        served_model_name=served_model_name,
        chat_template=chat_template,
        limits=ServingLimits(
            max_n=max_n,
            max_waiting_requests=max_waiting_requests,
            max_queued_tokens=max_queued_tokens,
            allowed_local_media_path=(
                str(allowed_local_media_path) if allowed_local_media_path else None
            ),
        ),
        torch_threads=torch_threads,
        graceful_s=graceful_s,
        access_log=access_log,
        api_key=api_key or None,
        max_body_bytes=max_body_bytes,
        role=role,
        kv_host=kv_host,
        kv_port=kv_port,
        kv_lease_s=kv_lease_s,
        kv_timeout_s=kv_timeout_s,
        lora_modules=tuple(modules),
        elastic_ep=elastic_ep,
        profile=profile,
        profile_steps=profile_steps,
    )

    def ready(name: str, engine: object) -> None:
        if getattr(engine, "random_weights", False):
            from reference_engine.tiny_model import RANDOM_WEIGHTS_NOTICE

            console.print(f"[bold yellow]note:[/] {RANDOM_WEIGHTS_NOTICE}.", highlight=False)
        console.print(
            f"serving [bold]{name}[/] ({role}) at http://{host}:{port}/v1 "
            f"(metrics at /metrics); Ctrl-C stops",
            highlight=False,
        )

    def go() -> None:
        spec = parse_json_option("--speculative-config", speculative_config)
        serve({**engine_kwargs, "speculative_config": spec}, cfg, on_ready=ready)

    guard(go)
