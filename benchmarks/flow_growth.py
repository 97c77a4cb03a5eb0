"""Where the function-value flow stage's solution grows, forced on, from a warm index.

    .venv/bin/python benchmarks/flow_growth.py sglang@0.5.20 [--top 25]

Per location kind (`var` locals and parameters, `attr` field-based attributes,
`ret` return slots, `elt` container slots, `mod` module attributes): how many
locations, how many values in all, the largest set; the largest locations
themselves; and the constraints that cost the most solve time (CPU seconds
summed over their evaluations, how often each ran, what it is). The graphs'
gate (`ATLAS_CALLGRAPH_FLOW`, `FLOW_MODULE_LIMIT`) is bypassed, as in
`flow_bench.py`: this measures what turning the stage on costs and why.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _describe(item: object) -> str:
    for attr in ("value", "callee", "text", "target"):
        text = getattr(item, attr, None)
        if isinstance(text, str) and text:
            return f"{getattr(item, 'scope', '')}:{getattr(item, 'line', '')} {text[:90]}"
    if isinstance(item, tuple):
        return " ".join(_describe(x) if not isinstance(x, str) else x for x in item)[:120]
    return str(item)[:120]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="Snapshot (sglang@0.5.20) or directory.")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--profile-top", type=int, default=0, metavar="N",
                        help="Re-run the N costliest constraints on the solution under cProfile.")
    args = parser.parse_args()
    from analyzer.graphs.store import load_facts, open_target
    from analyzer.resolve import CallResolver, Project
    from analyzer.resolve.flow import FlowGraph
    from analyzer.settings import Settings, default_cache_dir

    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).resolve())
    project = Project(load_facts(settings, open_target(settings, args.target)))
    resolver = CallResolver(project)
    spent: dict[int, float] = defaultdict(float)
    runs: Counter[int] = Counter()
    run = FlowGraph._run
    clock = time.process_time

    def timed(self: FlowGraph, cid: int) -> None:
        t = clock()
        run(self, cid)
        spent[cid] += clock() - t
        runs[cid] += 1

    FlowGraph._run = timed  # type: ignore[method-assign]
    gc.disable()
    t = clock()
    flow = FlowGraph(project, resolver.infer, enabled=True)
    collect = clock() - t
    t = clock()
    flow.solve()
    solve = clock() - t
    print(f"{args.target}: {len(project.modules)} modules, collect {collect:.1f} s, solve {solve:.1f} s CPU, "
          f"{len(flow._constraints)} constraints, {flow.runs} evaluations")
    kinds: dict[str, list[int]] = defaultdict(list)
    vkinds: dict[str, Counter[str]] = defaultdict(Counter)
    for loc, vals in flow.pts.items():
        kinds[loc[0]].append(len(vals))
        for v in vals:
            vkinds[loc[0]][v.kind] += 1
    print("\nlocation kind   locations     values   largest  mean   value kinds")
    for k, sizes in sorted(kinds.items(), key=lambda kv: -sum(kv[1])):
        print(f"{k:14} {len(sizes):10} {sum(sizes):10} {max(sizes):9} {sum(sizes) / len(sizes):6.1f}   "
              + ", ".join(f"{vk} {n}" for vk, n in vkinds[k].most_common(4)))
    sizes = sorted((len(v) for v in flow.pts.values()), reverse=True)
    total = sum(sizes) or 1
    print("\nlocations holding at least N values: " + ", ".join(
        f"N={n}: {sum(1 for s in sizes if s >= n)} locations, {sum(s for s in sizes if s >= n) / total:.0%} of values"
        for n in (10, 50, 100, 200, 300)))
    # Many large locations holding one and the same set: a blob that copy cycles or shared
    # sinks spread everywhere; what is in it says where it comes from.
    groups: Counter[frozenset[object]] = Counter(frozenset(v) for v in flow.pts.values() if len(v) >= 100)
    for vals, n in groups.most_common(3):
        mods = Counter(v.name.rsplit(".", 2)[0] for v in vals)  # type: ignore[attr-defined]
        kinds_in = Counter(v.kind for v in vals)  # type: ignore[attr-defined]
        print(f"\n{n} locations hold the same {len(vals)} values ({dict(kinds_in)}); by module: "
              + ", ".join(f"{m} {c}" for m, c in mods.most_common(6)))
        where = Counter(loc[0] for loc, v in flow.pts.items() if len(v) == len(vals) and frozenset(v) == vals)
        print("  held in: " + ", ".join(f"{k} {c}" for k, c in where.most_common()))
        print("  e.g. " + ", ".join(sorted(v.name for v in vals)[:: max(1, len(vals) // 8)]))  # type: ignore[attr-defined]
    print(f"\nlargest {args.top} locations (values, readers)")
    for loc, vals in sorted(flow.pts.items(), key=lambda kv: -len(kv[1]))[: args.top]:
        print(f"{len(vals):7} {len(flow._deps.get(loc, ())):6}  {loc}")
    by_kind: dict[str, float] = defaultdict(float)
    for cid, s in spent.items():
        by_kind[flow._constraints[cid][0]] += s
    print("\nsolve CPU by constraint kind: " + ", ".join(f"{k} {s:.1f} s" for k, s in sorted(by_kind.items(), key=lambda kv: -kv[1])))
    print(f"\ncostliest {args.top} constraints (CPU s, runs)")
    for cid, s in sorted(spent.items(), key=lambda kv: -kv[1])[: args.top]:
        kind, facts, item = flow._constraints[cid]
        print(f"{s:8.2f} {runs[cid]:5}  {kind:8} {facts.module}  {_describe(item)}")
    if args.profile_top:
        import cProfile
        import pstats

        flow._current = -1
        for cid, _s in sorted(spent.items(), key=lambda kv: -kv[1])[: args.profile_top]:
            prof = cProfile.Profile()
            prof.enable()
            run(flow, cid)
            prof.disable()
            flow._changed.clear()
            print(f"\nconstraint {cid} re-run on the solution:")
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
