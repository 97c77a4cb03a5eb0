"""Count the Python calls of a graph build, stage by stage: a figure that, unlike
seconds, does not depend on what else the (shared) machine is running.

    .venv/bin/python benchmarks/graphs_calls.py sglang@0.5.20
    .venv/bin/python benchmarks/graphs_calls.py sglang@0.5.20 vllm@0.30.0 --against main

Each target is built from its warm index in this process, the way `build_graphs`
does it, under `cProfile` (calls into C functions count too), and the calls of
each stage are printed: load (index lookup and facts decoding), symbols, call
graph, state graph, pack. `--against REV` counts the same with the analyzer of
git revision REV in a child process and prints the ratio per stage. Counts only:
cProfile's overhead makes its seconds meaningless here (see graphs_bench.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent

Counts = dict[str, int]
T = TypeVar("T")


def count_calls(targets: list[str], cache_dir: str | None) -> dict[str, Counts]:
    """Python calls per stage of each target's build (imports are done first, so
    only the build's own calls count)."""
    sys.path.insert(0, os.getcwd())
    from analyzer.graphs.callgraph import build_call_graph
    from analyzer.graphs.state import build_state
    from analyzer.graphs.state_source import SourceReader
    from analyzer.graphs.store import load_facts, open_target, pack_graphs
    from analyzer.resolve import CallResolver, Project
    from analyzer.settings import Settings, default_cache_dir

    settings = Settings(cache_dir=Path(cache_dir) if cache_dir else default_cache_dir())
    out: dict[str, Counts] = {}
    for text in targets:
        target = open_target(settings, text)
        load_facts(settings, target)  # warm index (and every import) before counting
        gc.disable()  # as a build process runs
        counts: Counts = {}
        facts = _stage(counts, "load", load_facts, settings, target)
        project = _stage(counts, "symbols", Project, facts)
        source = SourceReader(target.root)
        resolver = CallResolver(project, source)
        calls = _stage(counts, "call_graph", build_call_graph, project, resolver)
        state = _stage(counts, "state_graph", build_state, project, resolver, source)
        _stage(counts, "pack", pack_graphs, project, calls, state, target.label)
        counts["total"] = sum(counts.values())
        out[text] = counts
        gc.enable()
    return out


def _stage(counts: Counts, name: str, fn: Callable[..., T], *args: object) -> T:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    result = prof.runcall(fn, *args)
    counts[name] = pstats.Stats(prof).total_calls  # type: ignore[attr-defined]
    return result


def _child_counts(rev: str, targets: list[str], cache_dir: str | None) -> dict[str, Counts]:
    """`count_calls` with the analyzer of `rev` (`git archive` into a temp folder)."""
    sys.path.insert(0, str(ROOT))  # (here only: the child imports the unpacked analyzer)
    from benchmarks._revision import unpack_analyzer

    with tempfile.TemporaryDirectory() as tmp:
        unpack_analyzer(rev, tmp)
        code = (
            "import json, sys\n"
            f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
            "import graphs_calls as gc_\n"
            "print(json.dumps(gc_.count_calls(sys.argv[2:], sys.argv[1] or None)))\n"
        )
        out = subprocess.run([sys.executable, "-c", code, cache_dir or "", *targets], cwd=tmp,
                             env={**os.environ, "PYTHONPATH": tmp}, check=True, capture_output=True, text=True)
        return json.loads(out.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="Snapshots (vllm@0.30.0) or directories.")
    parser.add_argument("--cache-dir", default=None, help="Default: $ATLAS_CACHE_DIR / platform cache.")
    parser.add_argument("--against", metavar="REV", help="Also count with the analyzer of git revision REV.")
    args = parser.parse_args()
    # (a directory as an absolute path: the `--against` child runs in a temporary folder)
    targets = [str(Path(t).resolve()) if Path(t).is_dir() else t for t in args.targets]
    after = count_calls(targets, args.cache_dir)
    before = _child_counts(args.against, targets, args.cache_dir) if args.against else {}
    for target, counts in after.items():
        print(target)
        for stage, n in counts.items():
            line = f"  {stage:12s} {n / 1e6:8.2f} M calls"
            if target in before and before[target].get(stage):
                b = before[target][stage]
                line += f"   {args.against}: {b / 1e6:8.2f} M   this tree / {args.against}: {n / b:.3f}"
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
