"""Overload benchmark: offer a server 4x the load it sustains and check that it stays sane.

1. Measure what the server sustains: a closed loop at --concurrency clients gives the
   completed requests per second.
2. Offer --factor (default 4) times that rate in an open loop (Poisson arrivals: the
   clients do not slow down when the server does) for --duration seconds.
3. Check: every request either completed or got a clear overload answer (429 with
   Retry-After); no other error, none left hanging (the client timeout is the judge);
   once idle, no KV block held and the block pool's integrity check passes (/debug/kv).
   Print the admitted requests' TTFT and end-to-end p50 / p99 next to the sustained run's.

    .venv/bin/python benchmarks/overload_bench.py
    .venv/bin/python benchmarks/overload_bench.py --duration 20 --max-waiting-requests 16

The server is `python -m reference_engine.server` on 127.0.0.1 (a free port).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference_engine.loadtest.client import Target  # noqa: E402
from reference_engine.loadtest.report import summarize  # noqa: E402
from reference_engine.loadtest.runner import LoadPlan, run  # noqa: E402
from reference_engine.loadtest.workload import synthetic_workload  # noqa: E402
from reference_engine.router.launch import free_port  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--concurrency", type=int, default=8, help="clients for the sustained run")
    parser.add_argument("--factor", type=float, default=4.0, help="offered load / sustained load")
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--max-waiting-requests", type=int, default=16)
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="a request slower than this hung"
    )
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port), "--torch-threads", "1",
           "--max-num-seqs", "16", "--max-waiting-requests", str(args.max_waiting_requests)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited: {proc.communicate()[1][-2000:]}")
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the server did not come up")
            time.sleep(0.2)
        target = Target(base, "atlas-tiny-qwen3", extra_body={"ignore_eos": True})
        work = synthetic_workload(400, (20, 60), (16, 48), seed=0)
        sustained = asyncio.run(run(LoadPlan(work, concurrency=args.concurrency, duration_s=args.duration / 2,
                                             timeout_s=args.timeout), target))  # fmt: skip
        base_report = summarize(sustained.results, sustained.wall_s)
        rate = base_report.request_throughput * args.factor
        offered = asyncio.run(run(LoadPlan(work, rate=rate, duration_s=args.duration, timeout_s=args.timeout,
                                           seed=1), target))  # fmt: skip
        report = summarize(offered.results, offered.wall_s, offered.loop_lag_s)
        kinds = Counter(_kind(r.error) for r in offered.results if not r.ok)
        kv = _idle_kv(base)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"sustained: {base_report.request_throughput:.2f} req/s at {args.concurrency} clients; "
          f"offered {rate:.2f} req/s ({args.factor:g}x) for {args.duration:g} s")  # fmt: skip
    print(
        f"{'run':10} {'sent':>5} {'done':>5} {'429':>5} {'other':>5} {'TTFT p50':>9} {'TTFT p99':>9} {'e2e p99':>9}"
    )
    for name, rep, k in (("sustained", base_report, Counter()), ("4x", report, kinds)):
        print(f"{name:10} {rep.num_requests:5d} {rep.num_completed:5d} {k['overloaded']:5d} "
              f"{rep.num_errors - k['overloaded']:5d} {rep.ttft_ms.p50:7.0f}ms {rep.ttft_ms.p99:7.0f}ms "
              f"{rep.e2e_ms.p99:7.0f}ms")  # fmt: skip
    other = {k: v for k, v in kinds.items() if k != "overloaded"}
    print(
        f"load generator's own loop lag p99: {report.client_loop_lag_ms.p99:.0f} ms "
        "(large: the client is CPU-bound and every latency above is inflated)"
    )
    print(f"errors other than 429: {other or 'none'}; after the run: {kv['num_blocks_held']} blocks held, "
          f"integrity {kv['integrity']}")  # fmt: skip
    ok = (
        not other
        and kv["num_blocks_held"] == 0
        and kv["integrity"] == "ok"
        and kinds["overloaded"] > 0
    )
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


def _kind(error: str) -> str:
    if error.startswith("HTTP 429") and "overloaded" in error:
        return "overloaded"
    return error[:80]


def _idle_kv(base: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        report: dict[str, Any] = httpx.get(base + "/debug/kv", timeout=10).json()
        if report["idle"] or time.monotonic() > deadline:
            return report
        time.sleep(0.1)


if __name__ == "__main__":
    main()
