"""The call graph on PyCG's micro-benchmark: cases written by others.

PyCG (Salis et al., ICSE 2021) ships 118 small programs in 16 categories
(`micro-benchmark/snippets/<category>/<case>/`), each with a hand-written
expected call graph (`callgraph.json`). None of it is in this repository: the
files are read at run time from PyCG's source distribution, downloaded with pip
into the atlas cache folder (`<cache>/pycg-micro/`) unless `--snippets` points at
an unpacked `snippets` folder.

Every case goes through exactly what `atlas callgraph DIR --format pycg` runs
(`analyzer.graphs.commands.directory_callgraph`), and is scored on edges:
true positives, false positives (extra edges) and false negatives (missed
edges), per category and in total. `--misses` lists each case that differs.

PyCG's expectations have quirks of their own (see the README's call-graph
accuracy section): the figures are against its expectations as written.

    .venv/bin/python benchmarks/pycg_micro.py [--snippets DIR] [--misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.settings import Settings, default_cache_dir
from benchmarks._micro_common import (
    BenchError,
    Case,
    add_options,
    case_graphs,
    fetch_sdist,
    print_report,
    score_cases,
)

PYCG = "pycg==0.0.8"
PYCG_SHA256 = "644b4df4346b393ca29450223da12598a6e6ad51fcfb1c218330b774f643a6c1"
_SDIST_DIR = "pycg-0.0.8"


def download_snippets(cache: Path) -> Path:
    """PyCG's sdist, fetched once with pip into `cache/pycg-micro` and unpacked there."""
    folder = cache / "pycg-micro"
    snippets = folder / _SDIST_DIR / "micro-benchmark" / "snippets"
    if snippets.is_dir():
        return snippets
    with fetch_sdist(folder, PYCG, "--snippets", f"{_SDIST_DIR}/micro-benchmark/snippets", PYCG_SHA256) as tar:
        tar.extractall(folder, filter="data")
    if not snippets.is_dir():
        raise BenchError(f"{folder}: PyCG's sdist holds no micro-benchmark/snippets folder")
    return snippets


def cases(snippets: Path) -> list[Case]:
    found = [Case(f"{p.parent.parent.name}/{p.parent.name}", p.parent, p)
             for p in sorted(snippets.glob("*/*/callgraph.json"))]
    if not found:
        raise BenchError(f"{snippets}: no <category>/<case>/callgraph.json under it")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snippets", type=Path, help="PyCG's micro-benchmark/snippets folder (default: download)")
    add_options(ap)
    args = ap.parse_args(argv)
    settings = Settings(cache_dir=default_cache_dir())
    try:
        snippets = args.snippets if args.snippets is not None else download_snippets(settings.cache_dir)
        found = cases(snippets.expanduser().resolve())
        scores = score_cases(case_graphs(settings, found, args.min_confidence))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(f"PyCG micro-benchmark ({len(found)} cases, {snippets})", scores, 14, misses=args.misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
