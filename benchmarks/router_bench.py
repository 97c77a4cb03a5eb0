"""Router benchmark: a multi-tenant workload with shared system prompts, one run per
routing policy, prefix-cache hit rate and TTFT side by side.

Each policy gets fresh workers (`python -m reference_engine.server` processes on
127.0.0.1, empty caches) and an in-process router, driven by the load generator
(closed loop, streaming completions). Every request is one tenant's long system prompt
plus a short question; the workers' KV pools are sized to hold about half of the
tenants' prompts each, so where a tenant's requests land decides whether its prompt is
still cached. The hit rate is the workers' own count (/metrics: prompt tokens served
from the prefix cache / prompt tokens of finished requests), not the router's guess.

    .venv/bin/python benchmarks/router_bench.py                # 4 workers, 16 tenants
    .venv/bin/python benchmarks/router_bench.py --requests 120 --policies cache_aware,round_robin
    .venv/bin/python benchmarks/router_bench.py --repeats 3   # policies interleaved, medians

A p99 over one run of 160 requests is the second-slowest request: on a shared machine it
moves by 2x between runs. `--repeats` runs the policies in turn (A B C A B C ...) so that
each sees the same machine weather, and reports each figure's median over the repeats
beside the individual runs. `--model` serves a checkpoint whose prefill costs what a
cache hit saves (the built-in tiny model's prefill is nearly free).

Target (issue 14): cache_aware at least doubles round_robin's hit rate, with a p99 TTFT
no worse.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference_engine.loadtest.client import Target  # noqa: E402
from reference_engine.loadtest.report import summarize  # noqa: E402
from reference_engine.loadtest.runner import LoadPlan, run  # noqa: E402
from reference_engine.loadtest.workload import _WORDS, LoadRequest  # noqa: E402
from reference_engine.router.app import build_router_app  # noqa: E402
from reference_engine.router.launch import Cluster, free_port  # noqa: E402
from reference_engine.router.proxy import Router, RouterConfig  # noqa: E402
from reference_engine.server.metrics import parse_prometheus  # noqa: E402

SERVED_NAME = "atlas-router-bench"


def tenant_workload(tenants: int, system_words: int, requests: int, seed: int) -> list[LoadRequest]:
    rng = random.Random(seed)
    systems = [
        f"You are assistant number {t}. "
        + " ".join(rng.choice(_WORDS) for _ in range(system_words))
        for t in range(tenants)
    ]
    work = []
    for i in range(requests):
        question = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
        work.append(
            LoadRequest(f"{rng.choice(systems)}\nQuestion {i}: {question}", rng.randint(4, 16))
        )
    return work


def hit_rate(urls: list[str]) -> tuple[float, int, int]:
    hits = prompt = 0
    for url in urls:
        values = parse_prometheus(httpx.get(url + "/metrics", timeout=10).text)
        hits += int(values["atlas_prefix_cache_hit_tokens_total"])
        prompt += int(values["atlas_prompt_tokens_total"])
    return (hits / prompt if prompt else 0.0), hits, prompt


def one_policy(policy: str, args: argparse.Namespace, work: list[LoadRequest]) -> dict[str, Any]:
    serve_args = ["--num-blocks", str(args.num_blocks), "--block-size", str(args.block_size),
                  "--prefix-caching", args.prefix_caching, "--torch-threads", "1",
                  "--max-num-seqs", str(args.max_num_seqs),
                  "--served-model-name", SERVED_NAME]  # fmt: skip
    if args.model:
        serve_args += ["--model", args.model]
    with Cluster(["colocated"] * args.workers, serve_args, quiet=True).running() as cluster:
        router = Router(cluster.pool(), RouterConfig(policy, health_interval_s=1.0))
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(build_router_app(router), host="127.0.0.1", port=port,
                                               log_level="warning", access_log=False))  # fmt: skip
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            target = Target(f"http://127.0.0.1:{port}", SERVED_NAME,
                            extra_body={"ignore_eos": True, "temperature": 0})  # fmt: skip
            plan = LoadPlan(
                work, concurrency=args.concurrency, num_requests=len(work), timeout_s=120
            )
            result = asyncio.run(run(plan, target))
            report = summarize(result.results, result.wall_s, result.loop_lag_s)
            rate, hits, prompt = hit_rate(cluster.urls)
            spread = [w.num_requests for w in router.pool.workers]
        finally:
            server.should_exit = True
            thread.join(timeout=30)
    return {
        "policy": policy,
        "hit_rate": rate,
        "hit_tokens": hits,
        "prompt_tokens": prompt,
        "ttft_p50_ms": report.ttft_ms.p50,
        "ttft_p99_ms": report.ttft_ms.p99,
        "e2e_p99_ms": report.e2e_ms.p99,
        "throughput_rps": report.request_throughput,
        "errors": report.num_errors,
        "requests_per_worker": spread,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--policies", default="round_robin,least_outstanding,cache_aware")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--tenants", type=int, default=16)
    parser.add_argument("--system-words", type=int, default=120)
    parser.add_argument("--requests", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--num-blocks", type=int, default=128, help="KV blocks per worker")
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--max-num-seqs", type=int, default=8)
    parser.add_argument("--prefix-caching", default="radix")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="checkpoint folder the workers serve")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved runs per policy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = tenant_workload(args.tenants, args.system_words, args.requests, args.seed)
    policies = args.policies.split(",")
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in policies}
    for _ in range(args.repeats):
        for p in policies:
            runs[p].append(one_policy(p, args, work))
    rows = [_median_row(runs[p]) for p in policies]
    if args.json:
        print(json.dumps({"median": rows, "runs": runs}, indent=2))
        return
    if args.repeats > 1:
        print("individual runs (TTFT p99 ms, hit rate):")
        for p in policies:
            cells = ", ".join(f"{r['ttft_p99_ms']:.0f} / {r['hit_rate']:.1%}" for r in runs[p])
            print(f"  {p:18} {cells}")
        print(f"medians over {args.repeats} interleaved repeats:")
    print(f"{args.workers} workers x {args.num_blocks} blocks of {args.block_size}; {args.tenants} tenants, "
          f"{args.requests} requests, {args.concurrency} concurrent")  # fmt: skip
    print(
        f"{'policy':18} {'hit rate':>9} {'TTFT p50':>9} {'TTFT p99':>9} {'e2e p99':>9} {'req/s':>7} {'errors':>6}  per worker"
    )
    for r in rows:
        print(f"{r['policy']:18} {r['hit_rate']:9.1%} {r['ttft_p50_ms']:7.0f}ms {r['ttft_p99_ms']:7.0f}ms "
              f"{r['e2e_p99_ms']:7.0f}ms {r['throughput_rps']:7.2f} {r['errors']:6d}  {r['requests_per_worker']}")  # fmt: skip
    by = {r["policy"]: r for r in rows}
    if "cache_aware" in by and "round_robin" in by:
        ca, rr = by["cache_aware"], by["round_robin"]
        ratio = ca["hit_rate"] / rr["hit_rate"] if rr["hit_rate"] else float("inf")
        print(
            f"cache_aware / round_robin: hit rate {ratio:.2f}x (target >= 2x), "
            f"TTFT p99 {ca['ttft_p99_ms']:.0f} vs {rr['ttft_p99_ms']:.0f} ms (target: no worse)"
        )


def _median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    row = dict(runs[0])
    for key in ("hit_rate", "ttft_p50_ms", "ttft_p99_ms", "e2e_p99_ms", "throughput_rps"):
        row[key] = statistics.median(r[key] for r in runs)
    row["errors"] = sum(r["errors"] for r in runs)
    return row


if __name__ == "__main__":
    main()
