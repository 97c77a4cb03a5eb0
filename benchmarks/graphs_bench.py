"""Time the resolve + graphs stages on real trees, from a warm index.

    .venv/bin/python benchmarks/graphs_bench.py vllm@0.30.0 sglang@0.5.20
    .venv/bin/python benchmarks/graphs_bench.py /tmp/src/vllm-0.30.0/vllm

Each target is indexed first (untimed warm-up: the index cache is the index
stage's business). Then only the graph cache of the targets is cleared and the
headline is timed: wall seconds for building every target's graphs from the warm
index the way `load_graphs_many` does it (one process per target, up to the core
count), against the 20 s budget for vllm + sglang. Each query is then timed
against the cached graphs, the way a fresh `atlas` process would run it (load
pickle + query); budget 1 s. `--stages` adds, side by side, a one-process run per
target split into stages (load index facts, symbols, call graph, state graph,
pack, write). `--baseline REV` builds the same targets with the analyzer of git
revision REV in the same run and prints the ratio (before / after a change):

    .venv/bin/python benchmarks/graphs_bench.py vllm@0.30.0 sglang@0.5.20 --baseline ccef9c2
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import shutil
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
from analyzer.graphs.state_source import SourceReader  # noqa: E402
from analyzer.graphs.store import (  # noqa: E402
    Target,
    _cache_dir,
    build_missing,
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
    "sglang": [("calls", "srt.managers.scheduler.Scheduler.get_next_batch_to_run"),
               ("state", "srt.managers.scheduler.Scheduler")],
}


def timed(fn: Callable[..., T], *args: object, **kw: object) -> tuple[T, float]:
    """Wall seconds; CPU seconds of this process are added up in CPU_SECONDS, as
    on a shared machine the wall clock mostly measures the neighbours."""
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    CPU_SECONDS.append(time.process_time() - c)
    return out, time.perf_counter() - t


BUDGET_S = 20.0


def stage_row(settings: Settings, target: Target) -> dict[str, object]:
    """One target built in this process, timed stage by stage."""
    row: dict[str, object] = {"target": target.label}
    facts, row["load_index_s"] = timed(load_facts, settings, target)
    project, row["symbols_s"] = timed(Project, facts)
    resolver = CallResolver(project)
    gc.disable()  # as build_graphs does
    calls, row["call_graph_s"] = timed(build_call_graph, project, resolver)
    state, row["state_graph_s"] = timed(build_state, project, resolver, SourceReader(target.root))
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
    return row


def query_row(settings: Settings, target: Target) -> dict[str, object]:
    row: dict[str, object] = {"target": target.label}
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


def children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="Snapshots (vllm@0.30.0) or directories.")
    parser.add_argument("--cache-dir", type=Path, default=None, help="Default: $ATLAS_CACHE_DIR / platform cache.")
    parser.add_argument("--stages", action="store_true", help="Also time a one-process build per target by stage.")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="Also build with the analyzer of git revision REV (e.g. a commit before a change), "
                             "in the same run, and print both headlines and their ratio.")
    args = parser.parse_args()
    from analyzer.settings import default_cache_dir

    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).resolve())
    targets = [open_target(settings, t) for t in args.targets]
    for target in targets:
        load_facts(settings, target)  # warm the index (untimed)
    if args.stages:
        for target in targets:
            row = stage_row(settings, target)
            print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}, indent=1))
    for target in targets:  # cold graphs: clear the graph cache only, never the index
        shutil.rmtree(_cache_dir(settings, target), ignore_errors=True)
    gc.collect()
    t, c, cc = time.perf_counter(), time.process_time(), children_cpu()
    build_missing(settings, targets)
    wall = time.perf_counter() - t
    cpu = time.process_time() - c + children_cpu() - cc
    for target in targets:
        row = query_row(settings, target)
        print(json.dumps(row, indent=1))
    labels = " + ".join(t.label for t in targets)
    print(f"graphs for {labels}, cold graph cache, warm index: {wall:.1f} s wall "
          f"({cpu:.1f} s CPU over all processes); {wall / BUDGET_S:.2f} x the {BUDGET_S:.0f} s budget")
    if args.baseline:
        base_wall, base_cpu = baseline_build(args.baseline, settings, args.targets)
        print(f"baseline {args.baseline}: {base_wall:.1f} s wall ({base_cpu:.1f} s CPU); this tree / baseline: "
              f"{wall / base_wall:.2f}x wall, {cpu / base_cpu:.2f}x CPU")
    return 0


def baseline_build(rev: str, settings: Settings, targets: list[str]) -> tuple[float, float]:
    """The same cold build with the analyzer as of `rev` (`git archive` into a temp
    folder, run in a child process against the same warm index)."""
    import subprocess
    import tempfile

    from benchmarks._revision import unpack_analyzer

    with tempfile.TemporaryDirectory() as tmp:
        unpack_analyzer(rev, tmp)
        code = (
            "import gc, sys, time, resource, shutil\n"
            "from pathlib import Path\n"
            "from analyzer.settings import Settings\n"
            "from analyzer.graphs.store import open_target, build_missing, _cache_dir\n"
            "s = Settings(cache_dir=Path(sys.argv[1]))\n"
            "ts = [open_target(s, t) for t in sys.argv[2:]]\n"
            "[shutil.rmtree(_cache_dir(s, t), ignore_errors=True) for t in ts]\n"
            "gc.collect(); t = time.perf_counter(); c = time.process_time()\n"
            "build_missing(s, ts)\n"
            "ch = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(time.perf_counter() - t, time.process_time() - c + ch.ru_utime + ch.ru_stime)\n"
        )
        out = subprocess.run([sys.executable, "-c", code, str(settings.cache_dir), *targets], cwd=tmp,
                             env={**__import__("os").environ, "PYTHONPATH": tmp}, check=True,
                             capture_output=True, text=True).stdout.split()
    return float(out[-2]), float(out[-1])


if __name__ == "__main__":
    raise SystemExit(main())
