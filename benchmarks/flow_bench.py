"""Time the function-value flow stage alone, forced on, from a warm index.

    .venv/bin/python benchmarks/flow_bench.py vllm@0.33.0
    .venv/bin/python benchmarks/flow_bench.py vllm@0.33.0 --baseline 03ff953
    .venv/bin/python benchmarks/flow_bench.py vllm@0.33.0 --profile

Per target: CPU seconds to collect the constraints and to solve them, how many
constraints there are, how many times the solve evaluated one, how many of them
ever wrote a value, and the locations and values of the solution. The graphs'
own gate (`ATLAS_CALLGRAPH_FLOW`, `FLOW_MODULE_LIMIT`) is bypassed: this measures
what turning the stage on would cost. `--baseline REV` runs the same with the
analyzer of git revision REV in a child process, in the same run, and prints
the ratio (baseline / this tree). `--profile` adds cProfile's top functions.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_MEASURE = r"""
import gc, json, sys, time
from pathlib import Path
from analyzer.graphs.store import load_facts, open_target
from analyzer.resolve import CallResolver, Project
from analyzer.resolve.flow import FlowGraph
from analyzer.settings import Settings
settings = Settings(cache_dir=Path(sys.argv[1]))
target = open_target(settings, sys.argv[2])
project = Project(load_facts(settings, target))
resolver = CallResolver(project)
wrote = set()
run = FlowGraph._run
def counted(self, cid):
    run(self, cid)
    if self._changed:
        wrote.add(cid)
FlowGraph._run = counted
gc.disable()
c = time.process_time()
flow = FlowGraph(project, resolver.infer, enabled=True)
collect = time.process_time() - c
c = time.process_time()
flow.solve()
solve = time.process_time() - c
print(json.dumps({"target": sys.argv[2], "modules": len(project.modules), "collect_cpu_s": round(collect, 2),
                  "solve_cpu_s": round(solve, 2), "constraints": len(flow._constraints),
                  "evaluations": getattr(flow, "runs", None), "constraints_that_wrote": len(wrote),
                  "locations": len(flow.pts), "values": sum(len(v) for v in flow.pts.values())}))
"""


def measure(tree: Path, cache_dir: Path, target: str, profile: bool) -> dict[str, object]:
    code = _MEASURE
    if profile:
        code = "import cProfile, pstats\npr = cProfile.Profile(); pr.enable()\n" + code
        code += "pr.disable(); pstats.Stats(pr, stream=sys.stderr).sort_stats('cumulative').print_stats(30)\n"
    out = subprocess.run([sys.executable, "-c", code, str(cache_dir), target], cwd=tree,
                         env={**__import__("os").environ, "PYTHONPATH": str(tree)}, check=True,
                         capture_output=True, text=True)
    if profile:
        print(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="Snapshots (vllm@0.33.0) or directories.")
    parser.add_argument("--cache-dir", type=Path, default=None, help="Default: $ATLAS_CACHE_DIR / platform cache.")
    parser.add_argument("--baseline", metavar="REV", default=None, help="Also measure git revision REV's analyzer.")
    parser.add_argument("--profile", action="store_true", help="Print cProfile's top functions (this tree only).")
    args = parser.parse_args()
    from analyzer.graphs.store import load_facts, open_target
    from analyzer.settings import Settings, default_cache_dir

    cache_dir = (args.cache_dir or default_cache_dir()).resolve()
    settings = Settings(cache_dir=cache_dir)
    for t in args.targets:
        load_facts(settings, open_target(settings, t))  # warm the index (untimed)
    gc.collect()
    for t in args.targets:
        t0 = time.perf_counter()
        row = measure(ROOT, cache_dir, t, args.profile)
        row["wall_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(row))
        if args.baseline:
            from benchmarks._revision import unpack_analyzer

            with tempfile.TemporaryDirectory() as tmp:
                unpack_analyzer(args.baseline, tmp)
                base = measure(Path(tmp), cache_dir, t, False)
            print(json.dumps({"baseline": args.baseline, **base}))
            ours = float(row["collect_cpu_s"]) + float(row["solve_cpu_s"])  # type: ignore[arg-type]
            theirs = float(base["collect_cpu_s"]) + float(base["solve_cpu_s"])  # type: ignore[arg-type]
            print(f"{t}: flow stage {theirs:.1f} s CPU at {args.baseline}, {ours:.1f} s CPU here: "
                  f"{theirs / ours:.2f}x faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
