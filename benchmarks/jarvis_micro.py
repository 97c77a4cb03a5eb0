"""The call graph on Jarvis's micro-benchmark: a second suite written by others.

Jarvis (Huang et al., "Scalable and Precise Application-Centered Call Graph
Construction for Python", 2023) ships a micro-benchmark of 138 small programs in
22 categories, each with a hand-written expected call graph
(`ground_truth/micro_benchmark/<category>/<case>/callgraph.json`, PyCG's JSON
format). None of it is in this repository: the files are read at run time from
the `jarviscg==0.1.0rc7` source distribution on PyPI (Nuanced's fork of the
Jarvis artifact, which carries it under `evaluation/`), downloaded with pip into
the atlas cache folder (`<cache>/jarvis-micro/`) unless `--evaluation` points at
an unpacked `evaluation` folder. The artifact states no licence, so nothing of
it is copied here.

How independent it is of PyCG's suite (`benchmarks/pycg_micro.py`), which this
analyzer has been tuned against: 111 of the 138 cases started from PyCG's
(PyCG's `args/` is Jarvis's `arguments/`), but Jarvis edited most of their
programs (constructors added, extra functions, changed calls) and rewrote
expectations (an edge to every `__init__` a constructor call runs, class-body
calls such as `staticmethod`); 27 cases are Jarvis's own (`classes/instance`,
`context_managers/*`, `new_*/*`). The report prints both parts: "jarvis-new"
(the 27, never seen by any rule here) and "pycg-derived" (the 111 as Jarvis
edited them).

Every case goes through exactly what `atlas callgraph DIR --format pycg` runs
(`analyzer.graphs.commands.directory_callgraph`) and is scored on edges (true
positives, false positives, false negatives), per category and in total.
Jarvis's expectations are used as written; where its conventions differ from
ours only the *names* of our output are mapped, never the edges:

- builtin container methods: Jarvis writes `<map>.update` / `<str>.join` where
  PyCG (and our `--format pycg`) writes `<**PyDict**>.update` /
  `<**PyStr**>.join`; our names are renamed to Jarvis's (`<**PyDict**>` ->
  `<map>`, `<**PyStr**>` -> `<str>`, the other container tags to the type's
  name in angle brackets, which no expectation uses).
- the folder `new_direct calls` holds the programs whose expectations sit in
  `new_direct_calls`.

Conventions left as they are (each costs or gains edges, printed with
`--misses`): Jarvis keys class bodies as nodes (`main.MyClass ->
<builtin>.staticmethod`), where we attribute a class body's calls to its module;
several expectations are flow-sensitive at module level (`p = func1; p = func2;
p()` expects only `func2`).

Some expectations contradict what Python runs. The first table is always against
the expectations as written; a second one, "against corrected expectations",
scores the same graphs against Jarvis's expectations with the corrections in
`CORRECTIONS` applied, each listed there with its reason (checked by running the
case's program under `sys.setprofile`, as the flow suite checks its own).

    .venv/bin/python benchmarks/jarvis_micro.py [--evaluation DIR] [--misses]
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
    Graph,
    add_options,
    case_graphs,
    fetch_sdist,
    print_report,
    score_cases,
)

JARVIS = "jarviscg==0.1.0rc7"
JARVIS_SHA256 = "3d651bb9847e485dcf4438201f4c19dbb3de9db4d03933eb03b4af3cfaab5833"
_SDIST_DIR = "jarviscg-0.1.0rc7"
# The cases Jarvis added (not started from one of PyCG's): category or category/case.
_NEW = ("classes/instance", "context_managers/", "new_")
# Our PyCG container tags, renamed to Jarvis's.
_TAGS = {"<**PyDict**>": "<map>", "<**PyStr**>": "<str>", "<**PyList**>": "<list>",
         "<**PySet**>": "<set>", "<**PyTuple**>": "<tuple>", "<**PyNum**>": "<num>"}


# Expected edges that contradict what the case's program runs: (case, edge Jarvis
# expects that does not happen or None, edge that happens that it leaves out or
# None, why). Each checked by running the program under `sys.setprofile` (session
# cgjarvis, 2026-12-04), except `new_control_flow/while`, whose loop may never end
# under CPython (`id` of a fresh object can stay even), read off the program.
# Only the second table uses them.
CORRECTIONS: tuple[tuple[str, str | None, str | None, str], ...] = (
    *(("builtins/map", f"main -> main.{f}", None,
       "PyCG's program with map's arguments swapped: the first `map([1, 2, 3], func)` raises TypeError "
       "('function' object is not iterable) and the program stops before any of its functions runs")
      for f in ("func", "func2", "func3", "func3.func")),
    ("decorators/nested_decorators", "main -> main.func", "main -> main.dec1.inner",
     "`func` is bound to what `@dec1` returns: `func()` calls dec1's inner, which calls dec2's inner, which calls the original"),
    ("decorators/return_different_func", "main.func2 -> main.func", "main.func2 -> main.dec.inner",
     "`func` is bound to what `@dec` returns: func2's `func()` calls dec's inner, which calls the original"),
    ("dicts/assign", "main -> main.func1", None, "`d['a'] = func2` replaces the slot before `d['a']()`: only func2 runs"),
    ("dicts/nested", "main -> main.func1", None, "`d['a']['b'] = func2` replaces the slot before the call: only func2 runs"),
    ("dicts/update", "main -> main.func1", None, "`d.update({'a': func2})` replaces the slot before `d['a']()`: only func2 runs"),
    ("lists/ext_index", "main -> main.func2", "main -> main.func1",
     "`from ext import key` binds key to 0 (ext.py: `key = 0`): `ls[key]()` calls func1"),
    *((case, None, "main.B.__init__ -> main.A.__init__", "B.__init__'s `super().__init__()` runs A.__init__")
      for case in ("classes/super_class_return", "mro/basic", "mro/basic_init", "mro/super_call")),
    ("mro/super_call", None, "main.C.__init__ -> main.B.__init__", "C.__init__'s `super().__init__()` runs B.__init__"),
    ("mro/two_parents", None, "main -> main.B.__init__",
     "`C()` with `class C(A, B)` and only B defining `__init__` runs B.__init__ (C's MRO: C, A, B, object)"),
    ("new_control_flow/while", "main -> main.func2", None,
     "the `while` has no `break`, so its `else` (`c = Cls_c()`) always runs before `c.fn()`: func3, never func2"),
)


def corrected(name: str, expected: Graph) -> Graph:
    """Jarvis's expected graph of case `name` with its CORRECTIONS applied."""
    edges = {(k, v) for k, vs in expected.items() for v in vs}
    for case, wrong, right, _why in CORRECTIONS:
        if case != name:
            continue
        for edge, present in ((wrong, True), (right, False)):
            if edge is None:
                continue
            pair = tuple(edge.split(" -> "))
            if (pair in edges) != present:
                raise BenchError(f"{name}: correction of `{edge}` does not fit the expectation as written")
            edges.symmetric_difference_update({pair})
    out: Graph = {k: [] for k in expected}
    for k, v in sorted(edges):
        out.setdefault(k, []).append(v)
    return out


def download_evaluation(cache: Path) -> Path:
    """The sdist's `evaluation` folder, fetched once with pip into `cache/jarvis-micro`."""
    folder = cache / "jarvis-micro"
    evaluation = folder / _SDIST_DIR / "evaluation"
    if (evaluation / "ground_truth" / "micro_benchmark").is_dir():
        return evaluation
    with fetch_sdist(folder, JARVIS, "--evaluation", f"{_SDIST_DIR}/evaluation", JARVIS_SHA256) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"{_SDIST_DIR}/evaluation/")]
        tar.extractall(folder, members=members, filter="data")
    if not (evaluation / "ground_truth" / "micro_benchmark").is_dir():
        raise BenchError(f"{folder}: the sdist holds no evaluation/ground_truth/micro_benchmark folder")
    return evaluation


def cases(evaluation: Path) -> list[Case]:
    programs = evaluation / "dataset" / "micro_benchmark"
    truth = evaluation / "ground_truth" / "micro_benchmark"
    found = []
    for folder in sorted(p for p in programs.glob("*/*") if p.is_dir()):
        name = f"{folder.parent.name.replace(' ', '_')}/{folder.name}"
        expected = truth / name / "callgraph.json"
        if not expected.is_file():
            raise BenchError(f"{folder}: no expected graph at {expected}")
        found.append(Case(name, folder, expected, "jarvis-new" if is_new(name) else "pycg-derived"))
    if not found:
        raise BenchError(f"{programs}: no <category>/<case> folder under it")
    return found


def jarvis_names(graph: dict[str, list[str]]) -> dict[str, list[str]]:
    """Our `--format pycg` graph with builtin container tags written as Jarvis writes them."""
    def rename(name: str) -> str:
        head, dot, rest = name.partition(".")
        return _TAGS[head] + dot + rest if head in _TAGS else name
    return {rename(k): sorted({rename(v) for v in vs}) for k, vs in graph.items()}


def is_new(name: str) -> bool:
    return name.startswith(_NEW)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evaluation", type=Path, help="the sdist's evaluation folder (default: download)")
    add_options(ap)
    args = ap.parse_args(argv)
    settings = Settings(cache_dir=default_cache_dir())
    try:
        evaluation = args.evaluation if args.evaluation is not None else download_evaluation(settings.cache_dir)
        found = cases(evaluation.expanduser().resolve())
        graphs = case_graphs(settings, found, args.min_confidence, jarvis_names)
        scores = score_cases(graphs)
        fixed = score_cases(graphs, corrected)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(f"Jarvis micro-benchmark ({len(found)} cases, {evaluation})", scores, 18, misses=args.misses)
    print()
    print_report(
        f"Against corrected expectations ({len(CORRECTIONS)} corrections in {len({c[0] for c in CORRECTIONS})} cases, "
        "each with its reason in jarvis_micro.CORRECTIONS; the figure above is Jarvis's as written)",
        fixed, 18, misses=args.misses,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
