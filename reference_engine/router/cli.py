"""`atlas engine router` and `atlas engine cluster`. Imports neither torch nor the web
stack until a command runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from reference_engine.exit_codes import fail, guard

POLICY_HELP = (
    "cache_aware (prefix affinity balanced against load), least_outstanding or round_robin."
)


def add_router_commands(engine_app: typer.Typer) -> None:
    engine_app.command("router")(router_command)
    engine_app.command("cluster")(cluster_command)


def router_command(
    worker: list[str] = typer.Option(
        None, "--worker", help="A colocated engine server's URL (repeat)."
    ),
    prefill: list[str] = typer.Option(
        None, "--prefill", help="A --role prefill server's URL (repeat)."
    ),
    decode: list[str] = typer.Option(
        None, "--decode", help="A --role decode server's URL (repeat)."
    ),
    policy: str = typer.Option("cache_aware", "--policy", help=POLICY_HELP),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8080, "--port", min=0, max=65535),
    api_key: str = typer.Option(
        None, "--api-key", envvar="ATLAS_API_KEY", help="Key clients must send."
    ),
    worker_api_key: str = typer.Option(None, "--worker-api-key", help="Key sent to the workers."),
    health_interval_s: float = typer.Option(2.0, "--health-interval", min=0.1),
) -> None:
    """An OpenAI-compatible router in front of engine servers: streaming passthrough,
    health checks, retries before the first token, prefill/decode pairs."""
    from reference_engine.router.launch import make_pool, serve_router
    from reference_engine.router.policies import make_policy
    from reference_engine.router.proxy import RouterConfig
    from reference_engine.server.launch import bind_listener

    console = Console(stderr=True)
    try:
        pool = make_pool(worker or [], prefill or [], decode or [])
        make_policy(policy)
    except ValueError as exc:
        raise fail(str(exc)) from None
    cfg = RouterConfig(policy, api_key or None, worker_api_key or None, health_interval_s)

    listener = guard(lambda: bind_listener(host, port))
    console.print(f"routing ({policy}) {len(pool.workers)} workers at http://{host}:{port}/v1; Ctrl-C stops",
                  highlight=False)  # fmt: skip
    serve_router(pool, cfg, listener)


def cluster_command(
    ctx: typer.Context,
    workers: int = typer.Option(0, "--workers", min=0, help="Colocated workers."),
    prefill: int = typer.Option(0, "--prefill", min=0, help="Prefill workers (with --decode)."),
    decode: int = typer.Option(
        0, "--decode", min=0, help="Decode workers: P:D is --prefill:--decode."
    ),
    policy: str = typer.Option("cache_aware", "--policy", help=POLICY_HELP),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8080, "--port", min=0, max=65535),
    model: Path = typer.Option(
        None, "--model", help="Checkpoint folder (default: the built-in tiny model)."
    ),
    prefix_caching: str = typer.Option("radix", "--prefix-caching"),
    num_blocks: int = typer.Option(None, "--num-blocks", min=1),
    torch_threads: int = typer.Option(1, "--torch-threads", min=0),
    api_key: str = typer.Option(None, "--api-key", envvar="ATLAS_API_KEY"),
) -> None:
    """Start N workers (or P prefill + D decode workers) and a router in front, in one
    command; Ctrl-C stops them all."""
    from reference_engine.commands import _settings
    from reference_engine.router.launch import Cluster, serve_router
    from reference_engine.router.proxy import RouterConfig
    from reference_engine.server.launch import bind_listener

    console = Console(stderr=True)
    if bool(workers) == bool(prefill or decode) or bool(prefill) != bool(decode):
        raise fail("give --workers N, or --prefill P and --decode D")
    roles = ["colocated"] * workers + ["prefill"] * prefill + ["decode"] * decode
    args = ["--prefix-caching", prefix_caching, "--torch-threads", str(torch_threads)]
    if model is not None:
        args += ["--model", str(model)]
    if num_blocks is not None:
        args += ["--num-blocks", str(num_blocks)]
    if api_key:
        args += ["--api-key", api_key]
    settings = _settings(ctx)
    if settings.cache_dir is not None:
        import os

        os.environ["ATLAS_CACHE_DIR"] = str(settings.cache_dir)
    listener = guard(lambda: bind_listener(host, port))  # before minutes of worker start-up
    cluster = Cluster(roles, args)
    console.print(f"starting {len(roles)} workers ({', '.join(roles)}) ...", highlight=False)
    try:
        with cluster.running():
            for role, url in zip(roles, cluster.urls, strict=True):
                console.print(f"  {role:9} {url}", highlight=False)
            console.print(f"routing ({policy}) at http://{host}:{port}/v1; Ctrl-C stops everything",
                          highlight=False)  # fmt: skip
            serve_router(cluster.pool(), RouterConfig(policy, api_key or None, api_key or None), listener)
    except RuntimeError as exc:  # a worker did not come up: the cluster could not run
        raise fail(str(exc)) from None
    finally:
        listener.close()
