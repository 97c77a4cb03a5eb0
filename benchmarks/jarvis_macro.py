"""The call graph on Jarvis's macro-benchmark: six real projects, written by others,
with expected call graphs made by others.

Jarvis (Huang et al., ICSE 2024) evaluates on six small real applications
(bpytop, furl, rich-cli, sqlparse, sshtunnel, TextRank4ZH, each at a fixed
commit) with a ground-truth call graph per project and setting
(`evaluation/ground_truth/macro_benchmark/<project>/{EA,DA,DW}.json`, PyCG's JSON
format). This script scores against `EA.json`: the *exhaustive, application-only*
graph (every function of the project, edges to the project's own functions and to
builtins; the DA/DW graphs start from chosen entry points and DW follows the
dependencies, which is not what `atlas callgraph DIR` builds). Nothing of it is in
this repository: the programs and graphs are read at run time from the
`jarviscg==0.1.0rc7` source distribution (sha256 pinned in `jarvis_micro.py`),
downloaded with pip into the atlas cache folder (`<cache>/jarvis-micro/`, shared
with `jarvis_micro.py`) unless `--evaluation` points at an unpacked `evaluation`
folder. The artifact states no licence, so nothing of it is copied here.

Each project's package (the files Jarvis's own EA run analyses: its package
folder, or its one module) is copied to a scratch folder under its import name
and goes through exactly what `atlas callgraph DIR --format pycg` runs
(`analyzer.graphs.commands.directory_callgraph`). Only names are mapped, as in
`jarvis_micro.py` (our PyCG container tags written as Jarvis's `<str>`, `<map>`,
...), and our edges to modules outside the project (the standard library,
dependencies) are left out, since an application-only graph has none by
definition (none of the six `EA.json` holds one). Each project is scored on
edges (true positives, extra, missed), twice: edges to the project's own
functions (`<project>/project`) and to builtins (`<project>/builtin`); the rows
after the projects add them up by kind, and "held-out" is the five projects no
rule here was ever written against (sqlparse, at another version, is one of
`library_trace.py`'s libraries).

    .venv/bin/python benchmarks/jarvis_macro.py [--evaluation DIR] [--misses]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.graphs.commands import directory_callgraph
from analyzer.pinned import TreeError
from analyzer.settings import Settings, default_cache_dir
from benchmarks._micro_common import (
    BenchError,
    Case,
    Graph,
    Scores,
    add_options,
    print_report,
    score_cases,
)
from benchmarks.jarvis_micro import download_evaluation, jarvis_names

# project -> (the folder its imports are named from, its package folder or module
# file under it): what Jarvis's own EA run gives its analyser.
PROJECTS: dict[str, tuple[str, str]] = {
    "bpytop": ("bpytop", "bpytop.py"),
    "furl": ("furl", "furl"),
    "rich-cli": ("rich-cli/src", "rich_cli"),
    "sqlparse": ("sqlparse", "sqlparse"),
    "sshtunnel": ("sshtunnel", "sshtunnel.py"),
    "TextRank4ZH": ("TextRank4ZH", "textrank4zh"),
}
SEEN = ("sqlparse",)  # a library_trace.py library (0.6.1): rules were written on its misses


def prepare(evaluation: Path, scratch: Path) -> dict[str, tuple[Path, Graph]]:
    """Each project's Python files copied under `scratch/<project>/` by import name,
    with its expected EA graph."""
    pj = evaluation / "dataset" / "macro_benchmark" / "pj"
    truth = evaluation / "ground_truth" / "macro_benchmark"
    out: dict[str, tuple[Path, Graph]] = {}
    for project, (root, package) in PROJECTS.items():
        source = pj / root / package
        expected = truth / project / "EA.json"
        if not source.exists() or not expected.is_file():
            raise BenchError(f"{evaluation}: no {source} or {expected}")
        folder = scratch / project
        files = [source] if source.is_file() else sorted(source.rglob("*.py"))
        for path in files:
            dest = folder / path.relative_to(pj / root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        out[project] = (folder, json.loads(expected.read_text()))
    return out


def application_only(graph: Graph, roots: set[str]) -> Graph:
    """Our graph less its edges to modules outside the project (`roots`: the
    project's top-level import names); builtin tags (`<builtin>`, `<str>`) stay."""
    def inside(name: str) -> bool:
        return name.startswith("<") or name.split(".", 1)[0] in roots
    return {k: [v for v in vs if inside(v)] for k, vs in graph.items()}


def by_kind(graph: Graph) -> tuple[Graph, Graph]:
    """(edges to project functions, edges to builtins)."""
    def part(builtin: bool) -> Graph:
        return {k: [v for v in vs if v.startswith("<") == builtin] for k, vs in graph.items()}
    return part(False), part(True)


def scores(settings: Settings, projects: dict[str, tuple[Path, Graph]], min_confidence: str) -> Scores:
    graphs: list[tuple[Case, Graph, Graph]] = []
    for project, (folder, expected) in projects.items():
        roots = {p.stem if p.suffix == ".py" else p.name for p in folder.iterdir()}
        try:
            ours = application_only(jarvis_names(directory_callgraph(settings, folder, min_confidence=min_confidence)),
                                    roots)
        except TreeError as exc:
            raise BenchError(f"{project}: {exc}") from exc
        for kind, exp, act in zip(("project", "builtin"), by_kind(expected), by_kind(ours), strict=True):
            graphs.append((Case(f"{project}/{kind}", folder, folder, f"to {kind}"), exp, act))
    out = score_cases(graphs)
    held = [0] * 5
    for project, row in out.per.items():
        if project not in SEEN:
            held = [a + b for a, b in zip(held, row, strict=True)]
    out.parts["held-out (5)"] = held
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evaluation", type=Path, help="the sdist's evaluation folder (default: download)")
    add_options(ap)
    args = ap.parse_args(argv)
    settings = Settings(cache_dir=default_cache_dir())
    try:
        evaluation = args.evaluation if args.evaluation is not None else download_evaluation(settings.cache_dir)
        with tempfile.TemporaryDirectory(prefix="jarvis-macro-") as scratch:
            projects = prepare(evaluation.expanduser().resolve(), Path(scratch))
            result = scores(settings, projects, args.min_confidence)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(f"Jarvis macro-benchmark, EA graphs ({len(projects)} projects, {evaluation}; "
                 "each project's edges to its own code and to builtins counted as two cases)",
                 result, 18, misses=args.misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
