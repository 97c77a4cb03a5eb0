"""`atlas engine loadtest URL`: drive an OpenAI-compatible server and report latencies."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from reference_engine.exit_codes import EXIT_FINDINGS, fail, guard


def add_loadtest_command(engine_app: typer.Typer) -> None:
    engine_app.command("loadtest")(loadtest_command)


def loadtest_command(
    url: str = typer.Argument(..., help="Server root, e.g. http://127.0.0.1:8000"),
    model: str = typer.Option(
        None, "--model", help="Model name to send (default: the server's first)."
    ),
    endpoint: str = typer.Option("completions", "--endpoint", help="completions or chat."),
    concurrency: int = typer.Option(
        None, "--concurrency", "-c", min=1, help="Closed loop: clients in flight."
    ),
    rate: float = typer.Option(
        None, "--rate", "-r", min=0.0, help="Open loop: Poisson arrivals per second."
    ),
    num_prompts: int = typer.Option(
        None, "--num-prompts", "-n", min=1, help="Requests to send in all."
    ),
    duration: float = typer.Option(
        None, "--duration", "-d", min=0.0, help="Seconds to keep sending."
    ),
    dataset: Path = typer.Option(
        None, "--dataset", help='JSONL: {"prompt": ..., "max_tokens": ...} per line.'
    ),
    min_prompt_words: int = typer.Option(16, "--min-prompt-words", min=1),
    max_prompt_words: int = typer.Option(64, "--max-prompt-words", min=1),
    shared_prefix_words: int = typer.Option(
        0, "--shared-prefix-words", min=0, help="The same first words in every prompt."
    ),
    min_output_len: int = typer.Option(16, "--min-output-len", min=1),
    max_output_len: int = typer.Option(64, "--max-output-len", min=1),
    ignore_eos: bool = typer.Option(
        True, "--ignore-eos/--stop-at-eos", help="Ask for exactly max_tokens (vLLM extension)."
    ),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0),
    seed: int = typer.Option(0, "--seed"),
    timeout: float = typer.Option(
        300.0, "--timeout", min=0.1, help="Per-request timeout, seconds."
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Also write the JSON result here."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
) -> None:
    """Load-test a server: throughput and TTFT / TPOT / ITL / end-to-end percentiles."""
    console = Console(stderr=True)

    def go() -> None:
        from reference_engine.loadtest.client import Target
        from reference_engine.loadtest.report import summarize
        from reference_engine.loadtest.runner import LoadPlan
        from reference_engine.loadtest.workload import load_jsonl, synthetic_workload

        if endpoint not in ("completions", "chat"):
            raise ValueError(f"--endpoint must be completions or chat, got {endpoint}")
        total = num_prompts if num_prompts is not None or duration is not None else 100
        if dataset is not None:
            requests = load_jsonl(dataset)
        else:
            requests = synthetic_workload(
                min(total or 1000, 1000),
                (min_prompt_words, max_prompt_words),
                (min_output_len, max_output_len),
                seed=seed,
                shared_prefix_words=shared_prefix_words,
            )
        plan = LoadPlan(
            requests=requests,
            concurrency=concurrency if concurrency or rate else 16,
            rate=rate,
            num_requests=total,
            duration_s=duration,
            seed=seed,
            timeout_s=timeout,
        )
        name = model or _first_model(url)
        extra: dict[str, Any] = {"temperature": temperature}
        if ignore_eos:
            extra["ignore_eos"] = True
        target = Target(url, name, endpoint, extra)
        run_result = _run_with_progress(plan, target, console, progress)
        report = summarize(run_result.results, run_result.wall_s, run_result.loop_lag_s)
        payload = {
            "url": url,
            "model": name,
            "endpoint": endpoint,
            "mode": "closed" if plan.concurrency else "open",
            "concurrency": plan.concurrency,
            "rate": plan.rate,
            "duration_s": duration,
            **report.to_json(),
        }
        if output is not None:
            output.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        if json_output:
            typer.echo(json.dumps(payload, indent=2))
        else:
            _print_report(Console(), payload)
        if report.num_completed == 0:  # it ran, and every request failed: a finding
            raise fail("no request completed", EXIT_FINDINGS)

    guard(go)


def _first_model(url: str) -> str:
    import httpx

    root = url.rstrip("/")
    root = root if root.endswith("/v1") else root + "/v1"
    try:
        data = httpx.get(root + "/models", timeout=10).json()["data"]
        return str(data[0]["id"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"cannot list models at {root}/models ({exc}); pass --model") from None


def _run_with_progress(plan: Any, target: Any, console: Console, show: bool) -> Any:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from reference_engine.loadtest.runner import run

    if not show:
        return asyncio.run(run(plan, target))
    by_time = plan.num_requests is None
    counts = {"done": 0, "errors": 0}
    columns = (
        TextColumn("[bold]loadtest[/]"),
        BarColumn(),
        TextColumn("{task.fields[done]} done, {task.fields[errors]} errors"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        total = plan.duration_s if by_time else plan.num_requests
        task = bar.add_task("run", total=total, done=0, errors=0)
        start = time.perf_counter()

        def on_result(result: Any) -> None:
            counts["done"] += 1
            counts["errors"] += 0 if result.ok else 1
            done = min(time.perf_counter() - start, total) if by_time else counts["done"]
            bar.update(task, completed=done, done=counts["done"], errors=counts["errors"])

        result = asyncio.run(run(plan, target, on_result))
        bar.update(task, completed=total, done=counts["done"], errors=counts["errors"])
        return result


def _print_report(console: Console, payload: dict[str, Any]) -> None:
    summary = Table(title=f"atlas engine loadtest ({payload['mode']} loop)", show_header=False)
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    for key in (
        "num_requests", "num_completed", "num_errors", "wall_s", "request_throughput",
        "output_throughput", "total_token_throughput", "total_prompt_tokens", "total_output_tokens",
    ):  # fmt: skip
        value = payload[key]
        summary.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(summary)
    latency = Table(title="latency (ms)")
    latency.add_column("metric")
    for col in ("mean", "p50", "p90", "p95", "p99", "max"):
        latency.add_column(col, justify="right")
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        dist = payload[key]
        cells = [
            ("-" if dist[c] is None else f"{dist[c]:.2f}")
            for c in ("mean", "p50", "p90", "p95", "p99", "max")
        ]
        latency.add_row(key.removesuffix("_ms").upper(), *cells)
    console.print(latency)
    lag = payload["client_loop_lag_ms"]
    if lag["p99"] is not None:
        console.print(
            f"load generator event-loop lag: p50 {lag['p50']:.1f} ms, p99 {lag['p99']:.1f} ms "
            "(large values mean the client, not the server, is the bottleneck)",
            highlight=False,
        )
    for message, count in payload["errors"].items():
        console.print(f"[red]{count} x[/] {message}", highlight=False, markup=False)
