"""Where `atlas report` spends its time once the releases are indexed and graphed.

Opens the default columns (reference engine, newest pinned vLLM and SGLang) from
the cache, then builds the pages of every concept in mappings/ with and without
Graphviz and renders them, printing each stage's wall time and the SVG cost as a
ratio measured side by side in this run.

    ATLAS_CACHE_DIR=... .venv/bin/python benchmarks/report_bench.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from analyzer.mappings import load_mappings
from analyzer.report.build import build_report
from analyzer.report.graphviz import find_dot
from analyzer.report.run import default_releases, open_sides
from analyzer.settings import Settings, default_cache_dir


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    settings = Settings(cache_dir=default_cache_dir().expanduser().resolve())
    releases = default_releases()
    start = time.perf_counter()
    sides = open_sides(settings, releases, progress=False)  # the first run indexes and graphs: minutes
    opened = time.perf_counter() - start
    concepts = load_mappings()
    dot = find_dot()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        plain = best_of(args.repeat, lambda: build_report(concepts, sides, out, dot=None))
        drawn = best_of(args.repeat, lambda: build_report(concepts, sides, out, dot=dot)) if dot else None
        files = len(list(out.rglob("*.*")))
    print(f"columns: reference engine + {', '.join(releases)}; {len(concepts)} concepts; {files} files")
    print(f"open sides (cached index + graphs, flags, env vars): {opened:.2f} s")
    print(f"build + render, call paths as lists: {plain:.3f} s (best of {args.repeat})")
    if drawn is None:
        print("Graphviz `dot` not installed: no SVG figure")
    else:
        print(f"build + render, call paths as SVG:   {drawn:.3f} s (best of {args.repeat}); "
              f"SVG/list = {drawn / plain:.2f}x")


if __name__ == "__main__":
    main()
