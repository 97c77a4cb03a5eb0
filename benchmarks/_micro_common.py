"""What the two micro-benchmark scripts (`pycg_micro.py`, `jarvis_micro.py`) share:
fetching a source distribution with pip, scoring each case's graph against its
expected one, and the per-category table."""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.graphs.commands import directory_callgraph
from analyzer.graphs.pycg import score
from analyzer.pinned import TreeError
from analyzer.settings import Settings

Graph = dict[str, list[str]]


class BenchError(Exception):
    pass


def fetch_sdist(folder: Path, requirement: str, flag: str, unpacked: str, sha256: str) -> tarfile.TarFile:
    """The sdist of `requirement` in `folder`, downloaded with pip once and checked
    against its `sha256`; `flag` and `unpacked` name the option and folder to use
    when pip cannot reach PyPI."""
    folder.mkdir(parents=True, exist_ok=True)
    name = requirement.partition("==")[0]
    archives = sorted(folder.glob(f"{name}-*.tar.gz"))
    if not archives:
        cmd = [sys.executable, "-m", "pip", "download", requirement, "--no-deps", "--no-binary", ":all:",
               "-d", str(folder), "--quiet"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        archives = sorted(folder.glob(f"{name}-*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise BenchError(
                f"could not download {requirement} from PyPI (offline?): {done.stderr.strip()[-400:]}\n"
                f"download it elsewhere and pass {flag} <{unpacked}>"
            )
    digest = hashlib.sha256(archives[-1].read_bytes()).hexdigest()
    if digest != sha256:
        raise BenchError(f"{archives[-1]}: sha256 {digest}, not the pinned {sha256}")
    return tarfile.open(archives[-1])


def add_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--misses", action="store_true", help="list every case that differs, edge by edge")
    ap.add_argument("--min-confidence", default="guess", choices=("certain", "inferred", "guess"))


@dataclass(slots=True)
class Case:
    name: str  # category/case
    folder: Path  # the program
    truth: Path  # its expected callgraph.json
    part: str | None = None  # a row of its own besides the category's (`jarvis-new`)


@dataclass(slots=True)
class Scores:
    per: dict[str, list[int]] = field(default_factory=dict)  # category -> [cases, exact, tp, fp, fn]
    parts: dict[str, list[int]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)  # each differing case, then its edges


def case_graphs(
    settings: Settings, found: list[Case], min_confidence: str, rename: Callable[[Graph], Graph] | None = None
) -> list[tuple[Case, Graph, Graph]]:
    """(case, expected graph, our graph) for each case, ours through exactly what
    `atlas callgraph DIR --format pycg` runs (`rename` maps our names first)."""
    out = []
    for case in found:
        expected: Graph = json.loads(case.truth.read_text())
        try:
            actual = directory_callgraph(settings, case.folder, min_confidence=min_confidence)
        except TreeError as exc:
            raise BenchError(f"{case.name}: {exc}") from exc
        out.append((case, expected, rename(actual) if rename is not None else actual))
    return out


def score_cases(graphs: list[tuple[Case, Graph, Graph]], expect: Callable[[str, Graph], Graph] | None = None) -> Scores:
    """Each case scored on edges; `expect` (case name, its expected graph) gives the
    graph to score against instead of the expected one as written."""
    out = Scores()
    for case, written, actual in graphs:
        expected = expect(case.name, written) if expect is not None else written
        t, f, n = score(expected, actual)
        rows = [out.per.setdefault(case.name.split("/")[0], [0] * 5)]
        if case.part is not None:
            rows.append(out.parts.setdefault(case.part, [0] * 5))
        for row in rows:
            row[0] += 1
            row[1] += f == 0 and n == 0
            row[2] += t
            row[3] += f
            row[4] += n
        if f or n:
            out.misses.append(f"  {case.name}" + (f" ({case.part})" if case.part else ""))
            out.misses.extend(diff(expected, actual))
    return out


def diff(expected: Graph, actual: Graph) -> list[str]:
    exp = {(k, v) for k, vs in expected.items() for v in vs}
    act = {(k, v) for k, vs in actual.items() for v in vs}
    lines = [f"    missing {a} -> {b}" for a, b in sorted(exp - act)]
    return lines + [f"    extra   {a} -> {b}" for a, b in sorted(act - exp)]


def print_report(title: str, scores: Scores, width: int, *, misses: bool) -> None:
    """Per-category rows, then the parts' rows, then the total; with `misses`,
    each differing case edge by edge."""
    per = scores.per
    print(title)
    print(f"  {'category':{width}} {'cases':>5} {'exact':>5} {'P':>6} {'R':>6} {'tp':>4} {'fp':>4} {'fn':>4}")
    total = [0] * 5
    for cat, row in sorted(per.items()):
        total = [a + b for a, b in zip(total, row, strict=True)]
        print(_row(cat, row, width))
    for part, row in sorted(scores.parts.items()):
        print(_row(part, row, width))
    print(_row("TOTAL", total, width))
    if misses:
        print("differing cases:" if scores.misses else "no differing case")
        print("\n".join(scores.misses))


def _row(name: str, row: list[int], width: int) -> str:
    n, exact, t, f, m = row
    p = t / (t + f) if t + f else 1.0
    r = t / (t + m) if t + m else 1.0
    return f"  {name:{width}} {n:5} {exact:5} {p:6.3f} {r:6.3f} {t:4} {f:4} {m:4}"
