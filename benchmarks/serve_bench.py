"""Serving benchmark: 64 concurrent streaming clients against the built-in model for 60 s.

Starts `python -m reference_engine.server` on 127.0.0.1 (a free port), waits for
/health, drives it with the load generator (closed loop), then checks that the
run was clean: zero failed requests and, once idle, zero KV blocks held (from
/debug/kv, which also runs the block pool's integrity check). A second phase
has clients walk away mid-stream and checks the blocks again. Finally SIGINT
must stop the server with exit code 0. Prints p50/p99 TTFT, TPOT, ITL and
end-to-end latency from the client side, with throughput.

    .venv/bin/python benchmarks/serve_bench.py                 # the 64 x 60 s target
    .venv/bin/python benchmarks/serve_bench.py --duration 10   # a quick look

All traffic goes to 127.0.0.1; the run is bounded by --duration and --timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference_engine.loadtest.client import Target  # noqa: E402
from reference_engine.loadtest.report import LoadReport, summarize  # noqa: E402
from reference_engine.loadtest.runner import LoadPlan, run  # noqa: E402
from reference_engine.loadtest.workload import synthetic_workload  # noqa: E402
from reference_engine.server.metrics import parse_prometheus  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(base: str, proc: subprocess.Popen[str], timeout_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early with code {proc.returncode}")
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return time.monotonic() - start
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server not healthy after {timeout_s} s")


def _proc_cpu_s(pid: int) -> float | None:
    """user + system CPU seconds of a process (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_idle(base: str, timeout_s: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        report: dict[str, Any] = httpx.get(base + "/debug/kv", timeout=10).json()
        if report["idle"] or time.monotonic() > deadline:
            return report
        time.sleep(0.1)


def _leak_check(report: dict[str, Any]) -> list[str]:
    problems = []
    if not report["idle"]:
        problems.append(f"{report['num_unfinished_requests']} requests still in the engine")
    if report["num_blocks_held"] != 0:
        problems.append(f"{report['num_blocks_held']} KV blocks still held")
    if report["num_block_tables"] != 0:
        problems.append(f"{report['num_block_tables']} block tables left")
    if report["integrity"] != "ok":
        problems.append(f"block pool integrity: {report['integrity']}")
    return problems


async def _abandon(base: str, model: str, clients: int) -> int:
    """Clients that read a few chunks of a long stream and hang up; returns how many did."""
    body = {"model": model, "prompt": "walk away " * 8, "max_tokens": 200, "ignore_eos": True}

    async def one(client: httpx.AsyncClient, i: int) -> bool:
        payload = {**body, "stream": True}
        async with client.stream("POST", base + "/v1/completions", json=payload) as resp:
            seen = 0
            async for line in resp.aiter_lines():
                seen += line.startswith("data: ")
                if seen >= 2 + i % 4:
                    return True
        return False

    async with httpx.AsyncClient(timeout=60) as client:
        done = await asyncio.gather(*(one(client, i) for i in range(clients)))
    return sum(done)


def _engine_only(args: argparse.Namespace, reqs: list[Any]) -> dict[str, float]:
    import torch

    from reference_engine.bench import WorkloadRequest, run_engine
    from reference_engine.config import EngineConfig
    from reference_engine.engine import Engine

    torch.set_num_threads(args.torch_threads)
    with tempfile.TemporaryDirectory(prefix="atlas-serve-bench-engine-") as tmp:
        engine = Engine(
            EngineConfig(
                cache_dir=args.cache_dir or Path(tmp),
                max_num_seqs=args.max_num_seqs,
                max_num_batched_tokens=2048,
            )
        )
        work = [WorkloadRequest(engine.tokenizer.encode(r.prompt), r.max_tokens) for r in reqs]
        cpu0 = time.process_time()
        result = run_engine(engine, work)
        cpu = time.process_time() - cpu0
    return {
        "num_requests": result.num_requests,
        "output_tokens_per_s": result.output_tokens_per_s,
        "total_tokens_per_s": result.total_tokens_per_s,
        "cpu_ms_per_output_token": 1000 * cpu / max(1, result.num_output_tokens),
        "cpu_fraction": cpu / result.seconds,
    }


def _print(figures: dict[str, Any], report: LoadReport) -> None:
    print(f"\n== atlas serve bench: {figures['concurrency']} streaming clients, "
          f"{figures['duration_s']:.0f} s, closed loop ==")  # fmt: skip
    print(f"server start (to /health)  {figures['startup_s']:.1f} s")
    print(
        f"requests                   {report.num_completed} completed, {report.num_errors} errors"
    )
    print(f"request throughput         {report.request_throughput:.2f} req/s")
    print(f"output throughput          {report.output_throughput:.1f} tok/s")
    print(f"total token throughput     {report.total_token_throughput:.1f} tok/s")
    for name, d in (("TTFT", report.ttft_ms), ("TPOT", report.tpot_ms),
                    ("ITL", report.itl_ms), ("E2E", report.e2e_ms)):  # fmt: skip
        print(f"{name:<5} ms  p50 {d.p50:9.2f}   p90 {d.p90:9.2f}   p99 {d.p99:9.2f}   "
              f"mean {d.mean:9.2f}")  # fmt: skip
    print(f"load generator CPU         {figures['client_cpu_fraction']:.2f} cores busy on average")
    lag = report.client_loop_lag_ms
    print(f"load generator loop lag    p50 {lag.p50:.1f} ms, p99 {lag.p99:.1f} ms")
    if figures["server_cpu_fraction"] is not None:
        print(
            f"server CPU                 {figures['server_cpu_fraction']:.2f} cores busy on average"
        )
    print(f"machine load average (1m)  {figures['load_average_1m']:.1f} on {os.cpu_count()} CPUs")
    srv = figures["server"]
    print(f"server-side TTFT mean      {srv['ttft_mean_ms']:.2f} ms over {srv['ttft_count']:.0f}")
    print(f"preemptions                {srv['preemptions']:.0f}")
    print(f"prefix cache hit rate      {srv['prefix_cache_hit_rate']:.3f}")
    after = figures["kv_after_load"]
    print(f"KV blocks after load       held {after['num_blocks_held']}, free "
          f"{after['num_free_blocks']}, cached {after['num_cached_blocks']} of "
          f"{after['num_blocks']}; integrity {after['integrity']}")  # fmt: skip
    if "kv_after_abandon" in figures:
        ab = figures["kv_after_abandon"]
        print(f"after {figures['abandoned']} clients hung up  held {ab['num_blocks_held']}; "
              f"integrity {ab['integrity']}")  # fmt: skip
    print(
        f"shutdown on SIGINT         rc {figures['shutdown_rc']} in {figures['shutdown_s']:.1f} s"
    )
    print(f"leaked blocks              {figures['leaked_blocks']}")
    if "engine_only" in figures:
        eng = figures["engine_only"]
        print(f"-- side by side: engine alone, same workload ({eng['num_requests']} requests, "
              "all queued at once, no HTTP) --")  # fmt: skip
        print(f"engine-only output         {eng['output_tokens_per_s']:.1f} tok/s "
              f"({eng['cpu_fraction']:.2f} cores busy)")  # fmt: skip
        ratio = report.output_throughput / max(1e-9, eng["output_tokens_per_s"])
        print(f"served / engine-only       {ratio:.2f}x output tok/s")
        if "server_cpu_ms_per_output_token" in figures:
            srv_ms, eng_ms = (
                figures["server_cpu_ms_per_output_token"],
                eng["cpu_ms_per_output_token"],
            )
            print(f"CPU per output token       server {srv_ms:.3f} ms, engine alone {eng_ms:.3f} ms "
                  f"({srv_ms / max(1e-9, eng_ms):.2f}x)")  # fmt: skip
    print(
        "RESULT", "PASS" if not figures["problems"] else "FAIL: " + "; ".join(figures["problems"])
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--prompt-words", type=int, nargs=2, default=(16, 64))
    ap.add_argument("--output-len", type=int, nargs=2, default=(16, 64))
    ap.add_argument("--max-num-seqs", type=int, default=64)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--abandon", type=int, default=16, help="clients that hang up mid-stream")
    ap.add_argument("--cache-dir", type=Path, default=None, help="default: a temp dir")
    ap.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument(
        "--engine-requests",
        type=int,
        default=256,
        help="requests for the side-by-side engine-only run (0 skips it)",
    )
    args = ap.parse_args()

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="atlas-serve-bench-") as tmp:
        env = {**os.environ, "ATLAS_CACHE_DIR": str(args.cache_dir or tmp)}
        cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port),
               "--max-num-seqs", str(args.max_num_seqs), "--max-num-batched-tokens", "2048",
               "--torch-threads", str(args.torch_threads), "--graceful-timeout", "5"]  # fmt: skip
        # stderr to a file, not a pipe: a pipe nobody drains for 60 s could fill and stall it.
        log_path = Path(tmp) / "server.log"
        with log_path.open("w") as log:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=log, text=True)
        try:
            return _bench(args, base, proc, log_path)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _bench(args: argparse.Namespace, base: str, proc: subprocess.Popen[str], log_path: Path) -> int:
    startup = _wait_healthy(base, proc, timeout_s=300)
    model = httpx.get(base + "/v1/models", timeout=10).json()["data"][0]["id"]
    reqs = synthetic_workload(1000, tuple(args.prompt_words), tuple(args.output_len), seed=0)
    plan = LoadPlan(
        reqs, concurrency=args.concurrency, duration_s=args.duration, timeout_s=args.timeout
    )
    target = Target(base, model, "completions", {"ignore_eos": True, "temperature": 0.0})
    done = {"n": 0, "errors": 0}
    last_print = [time.monotonic()]

    def progress(result: Any) -> None:
        done["n"] += 1
        done["errors"] += 0 if result.ok else 1
        if time.monotonic() - last_print[0] > 5:
            last_print[0] = time.monotonic()
            print(f"  ... {done['n']} requests done, {done['errors']} errors", flush=True)

    print(f"server up in {startup:.1f} s; {args.concurrency} clients for {args.duration:.0f} s")
    cpu0, server_cpu0 = time.process_time(), _proc_cpu_s(proc.pid)
    result = asyncio.run(run(plan, target, progress))
    # A load generator that is itself CPU-bound inflates every latency it reports.
    client_cpu = (time.process_time() - cpu0) / result.wall_s
    server_cpu1 = _proc_cpu_s(proc.pid)
    server_cpu = None
    if server_cpu0 is not None and server_cpu1 is not None:
        server_cpu = (server_cpu1 - server_cpu0) / result.wall_s
    report = summarize(result.results, result.wall_s, result.loop_lag_s)
    kv_after_load = _wait_idle(base)
    metrics = parse_prometheus(httpx.get(base + "/metrics", timeout=10).text)
    figures: dict[str, Any] = {
        "concurrency": args.concurrency,
        "duration_s": args.duration,
        "startup_s": startup,
        "client_cpu_fraction": client_cpu,
        "server_cpu_fraction": server_cpu,
        "load_average_1m": os.getloadavg()[0],
        "load": report.to_json(),
        "kv_after_load": kv_after_load,
        "server": {
            "ttft_count": metrics["atlas_time_to_first_token_seconds_count"],
            "ttft_mean_ms": 1000
            * metrics["atlas_time_to_first_token_seconds_sum"]
            / max(1.0, metrics["atlas_time_to_first_token_seconds_count"]),
            "preemptions": metrics["atlas_num_preemptions_total"],
            "prefix_cache_hit_rate": metrics["atlas_prefix_cache_hit_rate"],
        },
    }
    problems = []
    if report.num_errors:
        problems.append(f"{report.num_errors} failed requests: {report.errors}")
    if report.num_completed == 0:
        problems.append("no request completed")
    problems += _leak_check(kv_after_load)
    leaked = kv_after_load["num_blocks_held"]
    if args.abandon:
        figures["abandoned"] = asyncio.run(_abandon(base, model, args.abandon))
        figures["kv_after_abandon"] = _wait_idle(base)
        problems += [f"after hang-ups: {p}" for p in _leak_check(figures["kv_after_abandon"])]
        leaked = max(leaked, figures["kv_after_abandon"]["num_blocks_held"])
    figures["leaked_blocks"] = leaked
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        figures["shutdown_rc"] = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        figures["shutdown_rc"] = None
        problems.append("server did not stop within 60 s of SIGINT")
    figures["shutdown_s"] = time.monotonic() - t0
    stderr = log_path.read_text(encoding="utf-8", errors="replace")
    if figures["shutdown_rc"] not in (0, None):
        problems.append(f"server exited {figures['shutdown_rc']}")
    if "Traceback" in stderr:
        problems.append("server printed a traceback:\n" + stderr[-2000:])
    if args.engine_requests:
        # Same workload, same batch limit, no HTTP: what the serving layer costs per token.
        figures["engine_only"] = _engine_only(args, reqs[: args.engine_requests])
        if server_cpu is not None:
            server_cpu_ms = 1000 * server_cpu * result.wall_s / max(1, report.total_output_tokens)
            figures["server_cpu_ms_per_output_token"] = server_cpu_ms
    figures["problems"] = problems
    _print(figures, report)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
