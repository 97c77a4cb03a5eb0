"""Time the resolve + graphs stages on real trees, from a warm index.

    .venv/bin/python benchmarks/graphs_bench.py vllm@0.30.0 sglang@0.5.20
    .venv/bin/python benchmarks/graphs_bench.py /tmp/src/vllm-0.30.0/vllm

Each target is indexed first (untimed warm-up: the index cache is the index
stage's business), then timed: loading the warm index and decoding every
module's facts, resolving and building the call graph, the state graph, and
writing the cache; then each query is timed against the cached graphs, the way
a fresh `atlas` process would run it (load pickle + query). Budget: both graphs
for vllm + sglang <= 20 s together, any query <= 1 s.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analyzer.graphs import queries  # noqa: E402
from analyzer.graphs.callgraph import build_call_graph  # noqa: E402
from analyzer.graphs.state import build_state  # noqa: E402
from analyzer.graphs.store import (  # noqa: E402
    load_facts,
    load_graphs,
    open_target,
    pack_graphs,
    save_graphs,
)
from analyzer.resolve import CallResolver, Project  # noqa: E402
from analyzer.settings import Settings  # noqa: E402

T = TypeVar("T")
CPU_SECONDS: list[float] = []
QUERIES = {
    "vllm": [("calls", "Scheduler.schedule"), ("path", "Scheduler.schedule", "KVCacheManager.allocate_slots"),
             ("state", "Scheduler")],
    "sglang": [("calls", "managers.scheduler.Scheduler.get_next_batch_to_run"),
               ("state", "srt.managers.scheduler.Scheduler")],
}


def timed(fn: Callable[..., T], *args: object, **kw: object) -> tuple[T, float]:
    """Wall seconds; CPU seconds of this process are added up in CPU_SECONDS, as
    on a shared machine the wall clock mostly measures the neighbours."""
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    CPU_SECONDS.append(time.process_time() - c)
    return out, time.perf_counter() - t


def bench_target(settings: Settings, text: str) -> dict[str, object]:
    target = open_target(settings, text)
    load_facts(settings, target)  # warm the index (untimed)
    row: dict[str, object] = {"target": target.label}
    facts, row["load_index_s"] = timed(load_facts, settings, target)
    project, row["symbols_s"] = timed(Project, facts)
    resolver = CallResolver(project)
    gc.disable()  # as build_graphs does
    calls, row["call_graph_s"] = timed(build_call_graph, project, resolver)
    state, row["state_graph_s"] = timed(build_state, project, resolver)
    graphs, row["pack_s"] = timed(pack_graphs, project, calls, state, target.label)
    _, row["write_cache_s"] = timed(save_graphs, settings, target, graphs, calls.unresolved)
    gc.freeze()  # keep the built graphs out of later collections, as a fresh process would
    gc.enable()
    stages = [k for k in row if k.endswith("_s")]
    for key, cpu in zip(stages, CPU_SECONDS, strict=True):
        row[key] = f"{row[key]:.2f} s wall, {cpu:.2f} s CPU"
    row["total_cpu_s"] = sum(CPU_SECONDS)
    CPU_SECONDS.clear()
    row["modules"] = len(project.modules)
    row["edges"] = calls.graph.number_of_edges()
    row["unresolved_sites"] = len(calls.unresolved)
    row["external_sites"] = sum(calls.external.values())
    project_name = target.label.split("@")[0].rsplit("/", 1)[-1].split("-")[0]
    for q in QUERIES.get(project_name, []):
        def run_query(q: tuple[str, ...] = q) -> object:
            g = load_graphs(settings, target)
            if q[0] == "calls":
                return queries.calls_query(g.calls, queries.find_one(g.calls, q[1]), depth=2)
            if q[0] == "path":
                return queries.path_query(g.calls, queries.find_one(g.calls, q[1]), queries.find_one(g.calls, q[2]))
            return queries.state_query(g.state, q[1])

        try:
            _, seconds = timed(run_query)
            cpu = CPU_SECONDS.pop()  # queries are not part of the build total
            row[f"query {' '.join(q)}"] = f"{seconds:.2f} s wall, {cpu:.2f} s CPU"
        except queries.QueryError as exc:
            row[f"query {' '.join(q)}"] = f"error: {exc}".splitlines()[0]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="Snapshots (vllm@0.30.0) or directories.")
    parser.add_argument("--cache-dir", type=Path, default=None, help="Default: $ATLAS_CACHE_DIR / platform cache.")
    args = parser.parse_args()
    from analyzer.settings import default_cache_dir

    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).resolve())
    rows = [bench_target(settings, t) for t in args.targets]
    for row in rows:
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}, indent=1))
    cpu = sum(float(r["total_cpu_s"]) for r in rows)  # type: ignore[arg-type]
    print(f"graphs for {len(rows)} target(s) from a warm index: {cpu:.1f} s CPU in all "
          "(budget 20 s for vllm + sglang; wall time per stage above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
