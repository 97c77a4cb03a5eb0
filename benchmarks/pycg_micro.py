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
import json
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.graphs.commands import directory_callgraph
from analyzer.graphs.pycg import score
from analyzer.pinned import TreeError
from analyzer.settings import Settings, default_cache_dir

PYCG = "pycg==0.0.8"
_SDIST_DIR = "pycg-0.0.8"


class BenchError(Exception):
    pass


def download_snippets(cache: Path) -> Path:
    """PyCG's sdist, fetched once with pip into `cache/pycg-micro` and unpacked there."""
    folder = cache / "pycg-micro"
    snippets = folder / _SDIST_DIR / "micro-benchmark" / "snippets"
    if snippets.is_dir():
        return snippets
    folder.mkdir(parents=True, exist_ok=True)
    archives = sorted(folder.glob("pycg-*.tar.gz"))
    if not archives:
        cmd = [sys.executable, "-m", "pip", "download", PYCG, "--no-deps", "--no-binary", ":all:",
               "-d", str(folder), "--quiet"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        archives = sorted(folder.glob("pycg-*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise BenchError(
                f"could not download {PYCG} from PyPI (offline?): {done.stderr.strip()[-400:]}\n"
                "download it elsewhere and pass --snippets <pycg-0.0.8/micro-benchmark/snippets>"
            )
    with tarfile.open(archives[-1]) as tar:
        tar.extractall(folder, filter="data")
    if not snippets.is_dir():
        raise BenchError(f"{archives[-1]} holds no micro-benchmark/snippets folder")
    return snippets


def cases(snippets: Path) -> list[Path]:
    found = sorted(p.parent for p in snippets.glob("*/*/callgraph.json"))
    if not found:
        raise BenchError(f"{snippets}: no <category>/<case>/callgraph.json under it")
    return found


def diff(expected: dict[str, list[str]], actual: dict[str, list[str]]) -> list[str]:
    exp = {(k, v) for k, vs in expected.items() for v in vs}
    act = {(k, v) for k, vs in actual.items() for v in vs}
    lines = [f"    missing {a} -> {b}" for a, b in sorted(exp - act)]
    return lines + [f"    extra   {a} -> {b}" for a, b in sorted(act - exp)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snippets", type=Path, help="PyCG's micro-benchmark/snippets folder (default: download)")
    ap.add_argument("--misses", action="store_true", help="list every case that differs, edge by edge")
    ap.add_argument("--min-confidence", default="guess", choices=("certain", "inferred", "guess"))
    args = ap.parse_args(argv)
    settings = Settings(cache_dir=default_cache_dir())
    try:
        snippets = args.snippets if args.snippets is not None else download_snippets(settings.cache_dir)
        found = cases(snippets.expanduser().resolve())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    per: dict[str, list[int]] = {}  # category -> [cases, exact, tp, fp, fn]
    misses: list[str] = []
    for case in found:
        expected = json.loads((case / "callgraph.json").read_text())
        try:
            actual = directory_callgraph(settings, case, min_confidence=args.min_confidence)
        except TreeError as exc:
            print(f"error: {case}: {exc}", file=sys.stderr)
            return 2
        t, f, n = score(expected, actual)
        row = per.setdefault(case.parent.name, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += f == 0 and n == 0
        row[2] += t
        row[3] += f
        row[4] += n
        if f or n:
            misses.append(f"  {case.parent.name}/{case.name}")
            misses.extend(diff(expected, actual))
    print(f"PyCG micro-benchmark ({sum(r[0] for r in per.values())} cases, {snippets})")
    print(f"  {'category':14} {'cases':>5} {'exact':>5} {'P':>6} {'R':>6} {'tp':>4} {'fp':>4} {'fn':>4}")
    total = [0, 0, 0, 0, 0]
    for cat, row in sorted(per.items()):
        total = [a + b for a, b in zip(total, row, strict=True)]
        print(_row(cat, row))
    print(_row("TOTAL", total))
    if args.misses:
        print("differing cases:" if misses else "no differing case")
        print("\n".join(misses))
    return 0


def _row(name: str, row: list[int]) -> str:
    n, exact, t, f, m = row
    p = t / (t + f) if t + f else 1.0
    r = t / (t + m) if t + m else 1.0
    return f"  {name:14} {n:5} {exact:5} {p:6.3f} {r:6.3f} {t:4} {f:4} {m:4}"


if __name__ == "__main__":
    raise SystemExit(main())
